"""A listing's status history: every status change appends ``{status, at, reason}`` in the update
that makes it, the newest 20 are kept, the owner reads it (API and Dashboard), nobody else does."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chalicelib.listings import repository, status_history
from chalicelib.listings.status import Transition
from chalicelib.persistence import storage
from tests.clocks import distinct_milliseconds
from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, claim, create_listing, decide, get_listing
from tests.integration.test_dashboard import signed_in


def _history(api: Api, owner: User, listing_id: str) -> list[dict[str, Any]]:
    response = get_listing(api, owner, listing_id)
    assert response.status_code == 200, response.json
    history: list[dict[str, Any]] = response.json["statusHistory"]
    return history


def _set_status(api: Api, owner: User, listing_id: str, status: str) -> dict[str, Any]:
    response = api.call("PATCH", f"/v1/listings/{listing_id}/status", owner.key, {"status": status})
    assert response.status_code == 200, response.json
    listing: dict[str, Any] = response.json
    return listing


def test_create_approve_pause_resume_are_four_entries_in_order_on_the_api_and_the_dashboard(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    with distinct_milliseconds():
        created = create_listing(api, alice)
        [approved] = activate(api, admin, runner, created["id"])
        paused = _set_status(api, alice, created["id"], "PAUSED")
        resumed = _set_status(api, alice, created["id"], "ACTIVE")
    history = _history(api, alice, created["id"])
    assert history == [
        {"status": "PENDING", "at": created["createdAt"], "reason": None},
        {"status": "ACTIVE", "at": approved["updatedAt"], "reason": None},
        {"status": "PAUSED", "at": paused["updatedAt"], "reason": None},
        {"status": "ACTIVE", "at": resumed["updatedAt"], "reason": None},
    ]
    assert resumed["statusHistory"] == history  # the status change's answer is the listing as written

    page = signed_in(api, alice).get(f"/dashboard/listings/{created['id']}").text
    assert '<h3 id="history-title">Status history</h3>' in page
    items = re.findall(r'<li><time datetime="([^"]+)">[^<]+</time> ([A-Z]+)</li>', page)
    assert items == [(entry["at"], entry["status"]) for entry in history]


def test_a_rejection_carries_its_reason_and_an_edit_returns_to_pending(api: Api, alice: User, admin: User, runner: Any) -> None:
    created = create_listing(api, alice)
    runner.drain()
    [task] = claim(api, admin)
    rejected = decide(api, admin, task["approvalId"], "reject", "Title is unclear")
    assert rejected.status_code == 200, rejected.json
    edited = api.call("PATCH", f"/v1/listings/{created['id']}", alice.key, {"meta": {"title": "Backend engineer, Go"}})
    assert edited.status_code == 200, edited.json
    history = _history(api, alice, created["id"])
    assert [(e["status"], e["reason"]) for e in history] == [
        ("PENDING", None), ("REJECTED", "Title is unclear"), ("PENDING", None),
    ]
    assert edited.json["statusHistory"] == history
    page = signed_in(api, alice).get(f"/dashboard/listings/{created['id']}").text
    assert "REJECTED: Title is unclear</li>" in page


def test_an_edit_under_review_changes_no_status_and_adds_no_entry(api: Api, alice: User, admin: User, runner: Any) -> None:
    created = create_listing(api, alice)
    for title in ("Backend engineer, Go", "Backend engineer, Rust"):
        edited = api.call("PATCH", f"/v1/listings/{created['id']}", alice.key, {"meta": {"title": title}})
        assert (edited.status_code, edited.json["status"]) == (200, "PENDING"), edited.json
        assert edited.json["statusHistory"] == [{"status": "PENDING", "at": created["createdAt"], "reason": None}]
    [approved] = activate(api, admin, runner, created["id"])  # the newest version is reviewed
    assert approved["meta"]["title"] == "Backend engineer, Rust"
    assert [e["status"] for e in _history(api, alice, created["id"])] == ["PENDING", "ACTIVE"]


def test_only_the_owner_reads_the_history(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    created = create_listing(api, alice)
    activate(api, admin, runner, created["id"])
    assert "statusHistory" not in get_listing(api, bob, created["id"]).json
    assert len(_history(api, alice, created["id"])) == 2


def test_the_history_keeps_the_newest_entries_up_to_its_limit(api: Api, alice: User, admin: User, runner: Any) -> None:
    created = create_listing(api, alice)
    activate(api, admin, runner, created["id"])
    cycles = status_history.LIMIT // 2 + 1  # 2 entries so far + 2 per cycle: past the limit
    with distinct_milliseconds():
        for _ in range(cycles):
            _set_status(api, alice, created["id"], "PAUSED")
            last = _set_status(api, alice, created["id"], "ACTIVE")
    history = _history(api, alice, created["id"])
    assert len(history) == status_history.LIMIT
    assert [e["status"] for e in history] == ["PAUSED", "ACTIVE"] * (status_history.LIMIT // 2)
    assert history[-1]["at"] == last["updatedAt"]
    assert [e["at"] for e in history] == sorted(e["at"] for e in history)


def test_at_the_limit_a_change_made_on_a_stale_read_fails_instead_of_dropping_an_entry(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    created = create_listing(api, alice)
    activate(api, admin, runner, created["id"])
    for _ in range((status_history.LIMIT - 2) // 2):
        _set_status(api, alice, created["id"], "PAUSED")
        _set_status(api, alice, created["id"], "ACTIVE")
    stale = repository.get(created["id"], consistent=True)
    assert stale is not None
    assert len(stale["statusHistory"]) == status_history.LIMIT
    # Another change of the item (webhooks rebound: status kept, version + 1) after the read.
    hook = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/hook"}).json
    assert api.call("PATCH", f"/v1/listings/{created['id']}", alice.key, {"webhookIds": [hook["id"]]}).status_code == 200
    with pytest.raises(storage.ConditionFailed):
        repository.transition(stale, Transition.PAUSE, "2030-01-01T00:00:00.000Z")
    assert [(e["status"], e["at"]) for e in _history(api, alice, created["id"])] == [
        (e["status"], e["at"]) for e in stale["statusHistory"]
    ]
    # Read again, the same change applies and keeps the bound.
    paused = _set_status(api, alice, created["id"], "PAUSED")
    assert len(paused["statusHistory"]) == status_history.LIMIT
    assert paused["statusHistory"][-1]["status"] == "PAUSED"
