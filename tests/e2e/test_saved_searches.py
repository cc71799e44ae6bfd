"""Saved searches end to end: save a search over HTTP, approve a matching and a
non-matching listing, and a real receiver gets exactly one signed ``listing.matched``.

Barrier (as in test_webhooks.py): the percolator handles the outbox stream in order, so once
the receiver got the alert of a *later* approval (for a second saved search), the earlier
approvals have all been percolated and delivered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Stack, approve_listing, wait_until
from tests.e2e.receivers import Receiver, receivers

pytestmark = pytest.mark.e2e

LISBON = {"location": "Lisbon", "location_lat": "38.7223", "location_lng": "-9.1393"}
PORTO = {"location": "Porto", "location_lat": "41.1579", "location_lng": "-8.6291"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receivers() as new:
        yield new("ok")


def _mentor(owner: httpx.Client, title: str, place: dict[str, str]) -> str:
    created = owner.post("/v1/listings", json={
        "categoryKey": "mentoring", "roleKey": "mentor", "channels": ["telegram"],
        "meta": {"title": title, "description": "<p>Weekly sessions</p>", "topics": "career", "yearsExperience": "8", **place},
    })
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _save(client: httpx.Client, name: str, query: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/saved-searches", json={"name": name, "query": query, "alerts": True})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _alerts(receiver: Receiver) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.requests if r.event == "listing.matched"]


def test_a_saved_search_alerts_once_for_the_matching_listing_only(stack: Stack, receiver: Receiver) -> None:
    _, seeker = stack.new_user("Saver Sofia")
    _, mentor = stack.new_user("Mentor Miguel")
    hook = seeker.post("/v1/webhooks", json={"url": receiver.url, "events": ["listing.matched"]})
    assert hook.status_code == 201, hook.text
    receiver.secret = hook.json()["secret"]
    search = _save(seeker, "Mentors near Lisbon", {
        "category": "mentoring", "role": "mentor", "meta.location_lat": "38.7223", "meta.location_lng": "-9.1393",
        "radiusKm": 25,
    })

    # One at a time: a claim hides every task it returns, not only the one approved.
    approve_listing(stack, _mentor(mentor, "Career mentor in Porto", PORTO))
    near = _mentor(mentor, "Career mentor in Lisbon", LISBON)
    approve_listing(stack, near)

    barrier = _save(seeker, "Porto mentors", {"category": "mentoring", "q": "porto"})
    later = _mentor(mentor, "Another mentor in Porto", PORTO)
    approve_listing(stack, later)
    wait_until(lambda: any(a["data"]["savedSearchId"] == barrier["savedSearchId"] for a in _alerts(receiver)), 20)

    alerts = [a for a in _alerts(receiver) if a["data"]["savedSearchId"] == search["savedSearchId"]]
    assert len(alerts) == 1
    [alert] = alerts
    request = next(r for r in receiver.requests if json.loads(r.body) == alert)
    assert request.verified  # X-Webhook-Signature and the Standard Webhooks signature
    assert alert["event"] == "listing.matched"
    assert alert["test"] is False
    data = alert["data"]
    assert data["listingId"] == near
    assert data["savedSearchName"] == "Mentors near Lisbon"
    assert data["listingTitle"] == "Career mentor in Lisbon"
    assert (data["categoryKey"], data["roleKey"], data["distanceKm"]) == ("mentoring", "mentor", 0.0)
    assert len(_alerts(receiver)) == 2  # the barrier's alert is the only other one

    matches = seeker.get(f"/v1/saved-searches/{search['savedSearchId']}/matches")
    assert matches.status_code == 200, matches.text
    assert [m["listing"]["id"] for m in matches.json()["matches"]] == [near]
    log = seeker.get(f"/v1/webhooks/{hook.json()['id']}/deliveries").json()
    assert sorted(d["event"] for d in log["deliveries"]) == ["listing.matched", "listing.matched"]
