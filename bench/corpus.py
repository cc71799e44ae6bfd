"""A realistic corpus, generated from a seed and loaded through the public API of a running stack.

**Listings** (:func:`listings`): titles of 4-10 words and descriptions of 30-150 words (a
triangular distribution with its mode at 50), words drawn from a Zipf distribution (rank ``r``
has weight ``1 / r``; G. K. Zipf, "Human Behavior and the Principle of Least Effort", 1949) over
:data:`VOCABULARY_SIZE` words: the head is the real words of the judged relevance set
(``bench/relevance_set.json``), most frequent first, the tail pronounceable made-up words
(syllables), so posting lists have the long tail of real text. Categories are skewed
(:data:`CATEGORY_WEIGHTS`); each listing's fields follow its category's definition as
``GET /v1/categories`` serves it (required fields always, optional ones 60 % of the time, select
options Zipf-weighted, numbers in a range per field); places are the local stack's fifty cities
(``local_stack.cities``), Zipf-weighted by rank (a few big cities), within about 10 km of the center.

**Users** (:func:`users`): display names from first and last names, a country, a Telegram handle;
every second one with a recruiting profile (a headline of 3-8 words from the same vocabulary,
skills, open to work), for profile search.

**Loading** (:func:`load`): the administrator creates the users (``POST /v1/admin/users``), the
owners create their listings (``POST /v1/listings``, four threads), the administrator approves
them through the review queue (``POST /v1/admin/approvals/claims``, ``max`` 10, then one decision
each, four threads) and :func:`wait_findable` waits, on conditions, until the live indexer made
every one findable: each category's ``total`` (exact: ``totalRelation`` ``eq``) reaches its
count, and then no DynamoDB call (read or write) passed the proxy for ten seconds.
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
import threading
import time
from bisect import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from bench.proxy import wait_quiet
from bench.stack import QUIET_SECONDS, BenchStack
from local_stack.cities import CITIES

#: Listings per category: real data is skewed (one large category).
CATEGORY_WEIGHTS = {"jobs": 0.55, "housing": 0.20, "mentoring": 0.15, "cofounders": 0.10}
#: Share of a category's listings in its first role (offers outnumber requests).
FIRST_ROLE = 0.7
#: Distinct words the Zipf distribution draws from.
VOCABULARY_SIZE = 20_000
#: Ranges of the number and integer fields (inclusive), by field key; others 1-100.
NUMBER_RANGES = {"salary": (20_000, 150_000), "rentMonthly": (300, 3_000), "equityPercent": (1, 50),
                 "hourlyRate": (20, 200), "bedrooms": (1, 5), "experienceYears": (0, 20), "sessionsPerMonth": (1, 8),
                 "yearsExperience": (1, 30)}
#: Probability that an optional field is filled.
OPTIONAL_FILLED = 0.6
FIRST_NAMES = ["Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia",
               "Tim", "Katherine", "Donald", "Hedy", "John", "Karen", "Niklaus", "Sophie", "Guido", "Anita", "Bjarne",
               "Shafi", "Leslie", "Jean", "Yukihiro", "Mary", "Rasmus", "Lin", "Ivan"]
LAST_NAMES = ["Lovelace", "Turing", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen",
              "Dijkstra", "Perlman", "Berners", "Johnson", "Knuth", "Lamarr", "Backus", "Jones", "Wirth", "Wilson",
              "Rossum", "Borg", "Stroustrup", "Goldwasser", "Lamport", "Sammet", "Matsumoto", "Shaw", "Lerdorf", "Chen",
              "Sutherland"]
COUNTRIES = {"de": 0.35, "fr": 0.15, "gb": 0.15, "us": 0.15, "es": 0.1, "br": 0.1}
OWNERS_PER_LISTINGS = 10
THREADS = 4
_WORD = re.compile(r"[a-z]+")
_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(size: int = VOCABULARY_SIZE) -> list[str]:
    """``size`` words, most frequent first: the words of ``bench/relevance_set.json`` by frequency, then
    made-up words of two to four syllables (deterministic)."""
    return list(_vocabulary(size))


@functools.cache
def _vocabulary(size: int) -> tuple[str, ...]:
    data = json.loads((Path(__file__).resolve().parent / "relevance_set.json").read_text(encoding="utf-8"))
    text = " ".join(f"{i['meta']['title']} {re.sub('<[^>]+>', ' ', i['meta'].get('description', ''))}" for i in data["listings"])
    counts = Counter(_WORD.findall(text.lower()))
    words = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    seen, rng = set(words), random.Random(1949)
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return tuple(words[:size])


class Zipf:
    """Draws from ``values`` with weight ``1 / rank`` (rank 1 first)."""

    def __init__(self, values: Sequence[Any], exponent: float = 1.0) -> None:
        self.values = list(values)
        self.cumulative = list(accumulate(1.0 / (rank + 1) ** exponent for rank in range(len(self.values))))

    def draw(self, rng: random.Random) -> Any:
        """One value."""
        return self.values[min(len(self.values) - 1, bisect(self.cumulative, rng.random() * self.cumulative[-1]))]

    def words(self, rng: random.Random, count: int) -> list[str]:
        """``count`` draws."""
        return [self.draw(rng) for _ in range(count)]


def weighted(rng: random.Random, weights: dict[str, float]) -> str:
    """One key of ``weights``, drawn in proportion to its weight."""
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _sentences(rng: random.Random, words: list[str]) -> str:
    out, n = [], 0
    while n < len(words):
        length = rng.randint(6, 14)
        sentence = words[n : n + length]
        out.append(" ".join(sentence).capitalize() + ".")
        n += length
    return " ".join(out)


def _field_value(rng: random.Random, spec: dict[str, Any]) -> str | None:
    kind, key = spec["type"], spec["key"]
    options = [o["key"] for o in spec.get("options") or []]
    if kind == "select":
        return str(Zipf(options).draw(rng))
    if kind == "multiselect":
        return ",".join(dict.fromkeys(Zipf(options).words(rng, rng.randint(1, 3))))
    if kind in ("number", "integer"):
        low, high = NUMBER_RANGES.get(key, (1, 100))
        value = rng.randint(low, high)
        return str(round(value, -2) if kind == "number" and value >= 1000 else value)
    if kind == "boolean":
        return rng.choice(["true", "false"])
    if kind == "date":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if kind == "url":
        return f"https://example.com/{rng.randrange(10**6)}"
    return None


def listing_body(rng: random.Random, words: Zipf, category: dict[str, Any]) -> dict[str, Any]:
    """One ``POST /v1/listings`` body of ``category`` (a ``GET /v1/categories`` record)."""
    roles = [r["key"] for r in category["roles"]]
    role = roles[0] if rng.random() < FIRST_ROLE or len(roles) == 1 else rng.choice(roles[1:])
    city, _, lat, lng = Zipf(CITIES).draw(rng)
    title = " ".join(words.words(rng, rng.randint(4, 10))).capitalize()
    description = _sentences(rng, words.words(rng, round(rng.triangular(30, 150, 50))))
    meta: dict[str, str] = {}
    for spec in category["fields"]:
        if role not in spec["roles"]:
            continue
        if role not in spec["requiredFor"] and rng.random() > OPTIONAL_FILLED:
            continue
        if spec["key"] == "title":
            meta["title"] = title
        elif spec["key"] == "description":
            meta["description"] = f"<p>{description}</p>"
        elif spec["type"] == "location":
            meta[spec["key"]] = city
            meta[f"{spec['key']}_lat"] = f"{lat + rng.gauss(0, 0.05):.5f}"
            meta[f"{spec['key']}_lng"] = f"{lng + rng.gauss(0, 0.07):.5f}"
        else:
            value = _field_value(rng, spec)
            if value is not None:
                meta[spec["key"]] = value
    meta.setdefault("description", f"<p>{description}</p>")
    return {"categoryKey": category["key"], "roleKey": role, "channels": ["telegram"], "meta": meta}


def listings(count: int, categories: list[dict[str, Any]], seed: int = 38) -> list[dict[str, Any]]:
    """``count`` listing bodies (:func:`listing_body`), categories skewed by :data:`CATEGORY_WEIGHTS`."""
    rng, words = random.Random(seed), Zipf(vocabulary())
    by_key = {c["key"]: c for c in categories}
    return [listing_body(rng, words, by_key[weighted(rng, CATEGORY_WEIGHTS)]) for _ in range(count)]


def users(count: int, seed: int = 39) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """``count`` pairs of (``POST /v1/admin/users`` body, ``PATCH /v1/me/profile`` body or None)."""
    rng, words = random.Random(seed), Zipf(vocabulary())
    skills = ["python", "javascript", "typescript", "go", "rust", "java", "sql", "aws", "react", "design", "product"]
    out = []
    for n in range(count):
        name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        user = {"displayName": name, "country": weighted(rng, COUNTRIES), "channels": {"telegram": f"@bench{seed}x{n}"}}
        profile = None
        if n % 2 == 0:
            profile = {"recruiting": {"openToWork": rng.random() < 0.5,
                                      "headline": " ".join(words.words(rng, rng.randint(3, 8))).capitalize(),
                                      "skills": list(dict.fromkeys(Zipf(skills).words(rng, rng.randint(1, 4))))}}
        out.append((user, profile))
    return out


@dataclass
class Loaded:
    """What :func:`load` created: users ``(userId, apiKey)``, listing ids in the order of the bodies,
    each listing's approval time (monotonic seconds, when its decision was sent), and timings."""

    users: list[tuple[str, str]]
    ids: list[str]
    approved_at: dict[str, float] = field(default_factory=dict)
    approve_seconds: float = 0.0


def _parallel(function: Callable[[int], None], count: int, threads: int = THREADS,
              stop: threading.Event | None = None) -> None:
    """Run ``function(0..count-1)`` on ``threads`` threads. When any call raises, or the caller is
    interrupted (SIGTERM makes the main thread exit), ``stop`` is set so that looping calls end, the
    calls not started are cancelled and the exception propagates without waiting for the rest."""
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        for _ in pool.map(function, range(count)):
            pass
    except BaseException:
        if stop is not None:
            stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def create_users(stack: BenchStack, count: int, seed: int = 39) -> list[tuple[str, str]]:
    """Create ``count`` users (:func:`users`) through the API; returns ``(userId, apiKey)`` each."""
    admin = stack.admin()
    bodies = users(count, seed)
    created: list[tuple[str, str]] = [("", "")] * count

    def one(n: int) -> None:
        user, profile = bodies[n]
        response = admin.post("/v1/admin/users", json=user)
        if response.status_code != 201:
            raise RuntimeError(f"create user: {response.status_code} {response.text[:300]}")
        created[n] = (response.json()["userId"], response.json()["apiKey"])
        if profile is not None:
            patched = stack.client(created[n][1]).patch("/v1/me/profile", json=profile)
            if patched.status_code != 200:
                raise RuntimeError(f"profile: {patched.status_code} {patched.text[:300]}")

    _parallel(one, count)
    return created


def create_listings(stack: BenchStack, bodies: list[dict[str, Any]], owners: list[tuple[str, str]]) -> list[str]:
    """Create the listings (PENDING review) through the API, owner ``n % len(owners)`` for body ``n``; returns their ids."""
    clients = [stack.client(key) for _, key in owners]
    ids = [""] * len(bodies)

    def one(n: int) -> None:
        response = clients[n % len(clients)].post("/v1/listings", json=bodies[n])
        if response.status_code != 201:
            raise RuntimeError(f"create listing: {response.status_code} {response.text[:300]}")
        ids[n] = str(response.json()["id"])

    _parallel(one, len(bodies))
    return ids


def approve_all(stack: BenchStack, ids: list[str], deadline_seconds: float = 3600,
                on_approved: Callable[[str, float], None] | None = None) -> dict[str, float]:
    """Approve every listing of ``ids`` through the review queue as fast as the API takes it (four
    administrators claiming ``max`` 10 each, then deciding); returns listing id -> when its decision
    was sent (monotonic seconds).

    A decision answered with another status than 200 may still have been carried out (its answer
    lost to a retry or a timeout): once the queue is empty such a listing counts as approved when
    it reads ``ACTIVE``, and its task is claimed again later when it still reads ``PENDING``.
    Raises RuntimeError when some listing is not approved within ``deadline_seconds``."""
    admin = stack.admin()
    wanted, approved_at = set(ids), dict[str, float]()
    unsure: dict[str, float] = {}  # listing id -> when a decision without a 200 was sent
    lock, stop = threading.Lock(), threading.Event()
    deadline = time.monotonic() + deadline_seconds

    def record(listing_id: str, sent: float) -> None:
        with lock:
            approved_at[listing_id] = sent
            unsure.pop(listing_id, None)
        if on_approved is not None:
            on_approved(listing_id, sent)

    def settle_unsure() -> None:
        with lock:
            checks = list(unsure.items())
        for listing_id, sent in checks:
            if admin.get(f"/v1/listings/{listing_id}").json().get("status") == "ACTIVE":
                record(listing_id, sent)

    def approver(_: int) -> None:
        while not stop.is_set():
            with lock:
                if wanted <= approved_at.keys():
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(wanted - approved_at.keys())} listings not approved in {deadline_seconds:.0f} s")
            claimed = admin.post("/v1/admin/approvals/claims", json={"max": 10})
            tasks = claimed.json().get("approvals", []) if claimed.status_code == 200 else []
            if not tasks:
                settle_unsure()
                time.sleep(0.2)
                continue
            for task in tasks:
                listing_id, sent = str(task["listingId"]), time.monotonic()
                decided = admin.post(f"/v1/admin/approvals/{task['approvalId']}", json={"decision": "approve"})
                if decided.status_code == 200:
                    record(listing_id, sent)
                else:
                    with lock:
                        unsure.setdefault(listing_id, sent)

    _parallel(approver, THREADS, stop=stop)
    return approved_at


def category_counts(bodies: list[dict[str, Any]]) -> dict[str, int]:
    """Listings per category key."""
    return dict(Counter(b["categoryKey"] for b in bodies))


def wait_findable(stack: BenchStack, expected: dict[str, int], timeout_seconds: float = 3600) -> None:
    """Wait until every category's search ``total`` reaches ``expected`` (when exact) and then no
    DynamoDB call passed the proxy for :data:`QUIET_SECONDS`; raises after ``timeout_seconds``."""
    client = stack.admin()
    deadline = time.monotonic() + timeout_seconds
    waiting = dict(expected)
    while waiting:
        for key, count in list(waiting.items()):
            page = client.get("/v1/listings/search", params={"category": key, "pageSize": 1}).json()
            if page.get("total", 0) >= count or page.get("totalRelation") == "gte":
                del waiting[key]
        if waiting:
            if time.monotonic() > deadline:
                raise RuntimeError(f"not findable after {timeout_seconds:.0f} s: {waiting}")
            time.sleep(1.0)
    if not wait_quiet(stack.recorder, QUIET_SECONDS, max(1.0, deadline - time.monotonic())):
        raise RuntimeError(f"the indexer still busy after {timeout_seconds:.0f} s")


def load(stack: BenchStack, bodies: list[dict[str, Any]], user_count: int | None = None) -> Loaded:
    """Users, listings, approvals and the wait until findable (the module's docstring)."""
    started = time.monotonic()
    owners = create_users(stack, user_count or max(4, math.ceil(len(bodies) / OWNERS_PER_LISTINGS)))
    ids = create_listings(stack, bodies, owners)
    created = time.monotonic()
    approved_at = approve_all(stack, ids)
    approved = time.monotonic()
    wait_findable(stack, category_counts(bodies))
    return Loaded(owners, ids, approved_at, created - started, approved - created, time.monotonic() - approved)
