"""Helpers of the request, profile and conversation tests: ACTIVE listings, requests, accepted
conversations and outbox events."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.listings import repository as listings
from chalicelib.listings.status import Transition
from tests.integration.conftest import Api, User
from tests.integration.helpers import create_listing, table_items


def active_listing(api: Api, owner: User, **fields: Any) -> dict[str, Any]:
    """Create a jobs listing of ``owner`` through the API and make it ACTIVE (as an approval does)."""
    listing = create_listing(api, owner, **fields)
    listings.transition(listings.get(listing["id"]) or {}, Transition.APPROVE, clock.iso())
    return listing


def match_request(api: Api, user: User, listing_id: str, channels: list[str] | None = None,
                  message: str = "Hello, I am interested") -> Any:
    """``POST /v1/match-requests`` (the raw response)."""
    body = {"listingId": listing_id, "message": message, "channels": channels or ["telegram"]}
    return api.call("POST", "/v1/match-requests", user.key, body)


def profile_request(api: Api, user: User, target_id: str, channel: str = "telegram", message: str = "Hi there") -> Any:
    """``POST /v1/profile-requests`` (the raw response)."""
    return api.call("POST", "/v1/profile-requests", user.key, {"userId": target_id, "message": message, "channel": channel})


def decide(api: Api, user: User, request_id: str, status: str, reason: str | None = None) -> Any:
    """``PATCH /v1/match-requests/{id}/status`` (the raw response)."""
    body: dict[str, Any] = {"status": status}
    if reason is not None:
        body["reason"] = reason
    return api.call("PATCH", f"/v1/match-requests/{request_id}/status", user.key, body)


def accepted_conversation(api: Api, owner: User, requester: User) -> tuple[dict[str, Any], str]:
    """An ACTIVE listing of ``owner``, a request of ``requester`` accepted by ``owner``.

    Returns the accepted request JSON and its conversation id.
    """
    listing = active_listing(api, owner)
    created = match_request(api, requester, listing["id"])
    assert created.status_code == 201, created.json
    accepted = decide(api, owner, created.json["requestId"], "ACCEPTED")
    assert accepted.status_code == 200, accepted.json
    return accepted.json, accepted.json["conversationId"]


def events(event_type: str | None = None) -> list[dict[str, Any]]:
    """The committed outbox items (of one type), oldest first (a test-only Scan)."""
    items = [i for i in table_items(settings().EVENTS_TABLE) if event_type is None or i["type"] == event_type]
    return sorted(items, key=lambda i: i["eventId"])




def run_concurrently[T](count: int, action: Callable[[int], T]) -> list[T | BaseException]:
    """Run ``action(i)`` for ``i`` in ``range(count)`` on ``count`` threads released together."""
    barrier = threading.Barrier(count)
    results: list[T | BaseException] = [RuntimeError("not run")] * count

    def worker(index: int) -> None:
        barrier.wait()
        try:
            results[index] = action(index)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertions
            results[index] = exc

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@contextmanager
def forbid_scans() -> Iterator[None]:
    """Fail any DynamoDB Scan the product makes inside the block."""
    from chalicelib.persistence import storage

    def refuse(**_: Any) -> None:
        raise AssertionError("the product must not Scan")

    events_ = storage.client("dynamodb").meta.events
    events_.register("before-call.dynamodb.Scan", refuse)
    try:
        yield
    finally:
        events_.unregister("before-call.dynamodb.Scan", refuse)
