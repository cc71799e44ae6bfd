"""Demo data through the public API: a few users and about 200 listings in real cities, approved.

Everything goes over HTTP exactly as a client would do it (admin user creation, channel
connection, listing creation, approval through the queue), so the demo also exercises the
whole local stack.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import httpx

from local_stack.cities import CITIES

DEMO_USERS = [
    ("Maria Schneider", "de"), ("Jean Dupont", "fr"), ("Priya Natarajan", "gb"),
    ("Lucas Oliveira", "br"), ("Emma Johansson", "se"), ("Kenji Sato", "jp"),
]

_JOBS = ["Backend engineer", "Data scientist", "Product designer", "DevOps engineer", "Frontend developer",
         "Machine learning engineer", "Engineering manager", "QA engineer"]


def _listing(rng: random.Random, index: int, city: tuple[str, str, float, float]) -> dict[str, Any]:
    name, _, lat, lng = city
    position = {"location": f"{name}", "location_lat": f"{lat + rng.uniform(-0.08, 0.08):.5f}",
                "location_lng": f"{lng + rng.uniform(-0.12, 0.12):.5f}"}
    kind = index % 4
    if kind == 0:
        job = rng.choice(_JOBS)
        role = rng.choice(["hiring", "seeking"])
        meta = {"title": f"{job} in {name}" if role == "hiring" else f"{job} looking for a team in {name}",
                "employmentType": rng.choice(["full_time", "part_time", "contract"]),
                "remote": rng.choice(["onsite", "hybrid", "remote"]),
                "skills": ",".join(rng.sample(["python", "aws", "react", "sql", "go", "typescript", "machine_learning"], 2)),
                "salary": str(rng.randrange(45, 140) * 1000),
                "description": f"<p>{job} role based in {name}. <strong>Great team</strong>.</p>"}
        return {"categoryKey": "jobs", "roleKey": role, "meta": {**meta, **position}}
    if kind == 1:
        role = rng.choice(["founder", "joiner"])
        industry = rng.choice(["fintech", "health", "climate", "edtech", "saas", "ai"])
        title = f"{industry.title()} startup in {name} seeks co-founder"
        if role == "joiner":
            title = f"Engineer in {name} wants to co-found in {industry}"
        meta = {"title": title,
                "industry": industry, "skillsNeeded": ",".join(rng.sample(["engineering", "design", "sales", "marketing"], 2)),
                "commitment": rng.choice(["full_time", "part_time"]),
                "description": f"<p>Building something in {industry} from {name}.</p>"}
        if role == "founder":
            meta |= {"stage": rng.choice(["idea", "prototype", "revenue"]), "equityPercent": str(rng.randrange(5, 40))}
        return {"categoryKey": "cofounders", "roleKey": role, "meta": {**meta, **position}}
    if kind == 2:
        role = rng.choice(["mentor", "mentee"])
        topics = ",".join(rng.sample(["career", "leadership", "engineering", "product", "startups", "data"], 2))
        meta = {"title": f"Mentoring in {topics.replace(',', ' and ')} ({name})" if role == "mentor" else f"Looking for a mentor in {name}",
                "topics": topics, "format": rng.choice(["online", "in_person", "both"]),
                "description": f"<p>Sessions around {topics.replace(',', ', ')}.</p>"}
        if role == "mentor":
            meta |= {"yearsExperience": str(rng.randrange(5, 25)), "hourlyRate": str(rng.choice([0, 50, 80, 120]))}
        return {"categoryKey": "mentoring", "roleKey": role, "meta": {**meta, **position}}
    role = rng.choice(["offering", "seeking"])
    kind_ = rng.choice(["room", "studio", "apartment"])
    meta = {"title": f"Bright {kind_} in {name}" if role == "offering" else f"Looking for a {kind_} in {name}",
            "propertyType": kind_, "rentMonthly": str(rng.randrange(4, 30) * 100), "bedrooms": str(rng.randrange(1, 4)),
            "amenities": ",".join(rng.sample(["furnished", "balcony", "parking", "elevator"], 2)),
            "description": f"<p>A {kind_} close to the centre of {name}.</p>"}
    return {"categoryKey": "housing", "roleKey": role, "meta": {**meta, **position}}


class RetryAfterTransport(httpx.HTTPTransport):
    """Send a request again after a 429 ``RATE_LIMITED``, waiting its ``Retry-After`` seconds (at most 5 tries).

    The demo creates hundreds of listings and approvals with a few keys, as fast as the stack
    answers; with low ``RATE_LIMIT_*`` settings it waits as a well-behaved client does.
    """

    ATTEMPTS = 5

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        for _ in range(self.ATTEMPTS - 1):
            response = super().handle_request(request)
            if response.status_code != 429:
                return response
            response.read()
            response.close()
            time.sleep(float(response.headers.get("Retry-After", "1")))
        return super().handle_request(request)


def seed_demo(base_url: str, admin_key: str, runner: Any | None = None, listings: int = 200, seed: int = 7,
              advance: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Create the demo users and ``listings`` listings, then approve them all (claims through
    ``POST /v1/admin/approvals/claims``).

    ``advance(step)`` is called once per user, listing and approval (``len(DEMO_USERS) + 2 *
    listings`` calls), for a progress bar. Returns ``{"users": [{userId, apiKey, displayName}],
    "listings": <count approved>}``.
    """
    tick = advance or (lambda step: None)
    rng = random.Random(seed)
    admin = {"Authorization": f"Bearer {admin_key}"}
    users = []
    with httpx.Client(base_url=base_url, timeout=30, transport=RetryAfterTransport()) as http:
        for name, country in DEMO_USERS:
            handle = name.split()[0].lower()
            response = http.post("/v1/admin/users", headers=admin, json={
                "displayName": name, "country": country, "verifiedLevel": rng.randrange(0, 3),
                "channels": {"telegram": f"@{handle}", "email": f"{handle}@example.org"},
            })
            response.raise_for_status()
            users.append({**response.json(), "displayName": name})
            tick("Demo users")
        for index in range(listings):
            user = users[index % len(users)]
            body = {**_listing(rng, index, CITIES[index % len(CITIES)]), "channels": ["telegram", "email"]}
            http.post("/v1/listings", headers={"Authorization": f"Bearer {user['apiKey']}"}, json=body).raise_for_status()
            tick("Demo listings")
        approved = approve_pending(http, admin, listings, on_each=lambda: tick("Approving demo listings"))
    return {"users": [{"userId": u["userId"], "apiKey": u["apiKey"], "displayName": u["displayName"]} for u in users], "listings": approved}


def approve_pending(
    http: httpx.Client, admin: dict[str, str], expected: int, on_each: Callable[[], None] | None = None, seconds: float = 120,
    *, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Claim and approve listings through the admin API until ``expected`` are approved or
    ``seconds`` pass without one (submissions reach the approval queue through the Events stream,
    a moment after their POST; a busy machine approves slowly but steadily); returns how many
    were approved. ``clock`` (seconds) and ``sleep`` are the process's unless a test gives its own.

    Raises
    ------
    httpx.HTTPStatusError
        A decision was refused.
    """
    approved, deadline = 0, clock() + seconds
    while approved < expected and clock() < deadline:
        claimed = http.post("/v1/admin/approvals/claims", headers=admin, json={"max": 10}).json()["approvals"]
        if not claimed:
            sleep(0.2)
            continue
        for task in claimed:
            http.post(f"/v1/admin/approvals/{task['approvalId']}", headers=admin, json={"decision": "approve"}).raise_for_status()
            approved += 1
            deadline = clock() + seconds
            if on_each is not None:
                on_each()
    return approved
