"""Listings: create, detail, mine, update (back to PENDING, re-queued), pause/resume, delete, ownership."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from tests.clocks import distinct_milliseconds
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User
from tests.integration.helpers import (
    Stack,
    activate,
    approval_queue_depth,
    assert_error,
    claim,
    create_listing,
    decide,
    error_fields,
    get_listing,
    index_listings,
    listing_body,
    my_listings,
    put_webhook,
    search_listings,
    shared_stack,
    table_items,
)
from tests.integration.test_dashboard import signed_in

LISTING_KEYS = {"id", "title", "categoryKey", "roleKey", "meta", "channels", "webhookIds", "status", "statusReason",
                "statusHistory", "profile", "createdAt", "updatedAt"}


def _set_status(api: Api, user: User, listing_id: str, status: str) -> Any:
    return api.call("PATCH", f"/v1/listings/{listing_id}/status", user.key, {"status": status})


def _status(api: Api, owner: User, listing_id: str) -> str:
    response = get_listing(api, owner, listing_id)
    assert response.status_code == 200, response.json
    status: str = response.json["status"]
    return status


def _create_in_order(api: Api, user: User, count: int) -> list[str]:
    """Create ``count`` listings with distinct createdAt milliseconds (the byOwner sort key); oldest first."""
    with distinct_milliseconds():
        return [create_listing(api, user, meta={"title": f"L{i}"})["id"] for i in range(count)]


@pytest.fixture(scope="class")
def stack(aws_resources: Resources) -> Iterator[Stack]:
    with shared_stack(aws_resources) as built:
        yield built


@pytest.fixture(scope="class")
def bobs_listing(stack: Stack) -> dict[str, Any]:
    """A PENDING listing of Bob's in the shared stack (its outbox event already drained)."""
    listing = create_listing(stack.api, stack.bob)
    stack.runner.drain()
    return listing


@pytest.fixture(scope="class")
def bobs_active_listing(stack: Stack) -> dict[str, Any]:
    """An ACTIVE listing of Bob's in the shared stack."""
    listing = create_listing(stack.api, stack.bob, meta={"salary": "85000"})
    [active] = activate(stack.api, stack.admin, stack.runner, listing["id"])
    assert "webhookIds" not in active  # the administrator's view: webhookIds are the owner's only
    owners_view: dict[str, Any] = get_listing(stack.api, stack.bob, listing["id"]).json
    assert {k: owners_view[k] for k in active} == active
    return {k: owners_view[k] for k in LISTING_KEYS}


class TestRejectedRequests:
    """Requests that must be refused and change nothing (one shared stack; Alice never owns a listing in it)."""

    def _assert_alice_has_nothing(self, stack: Stack) -> None:
        assert my_listings(stack.api, stack.alice)["total"] == 0
        assert stack.runner.drain() == 0

    @pytest.mark.parametrize(
        ("overrides", "field"),
        [
            ({"categoryKey": "spaceships"}, "categoryKey"),
            ({"roleKey": "mentor"}, "roleKey"),  # a role of another category
            ({"roleKey": ""}, "roleKey"),
            ({"channels": []}, "channels"),
            ({"meta": "title=x"}, "meta"),
            ({"webhookIds": "wh_1"}, "webhookIds"),
            ({"status": "ACTIVE"}, "status"),  # clients cannot choose the status
            ({"ownerId": "usr_someone"}, "ownerId"),
        ],
    )
    def test_create_rejects_invalid_top_level_fields(self, stack: Stack, overrides: dict[str, Any], field: str) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, {**listing_body(), **overrides})
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]
        self._assert_alice_has_nothing(stack)

    @pytest.mark.parametrize("missing", ["categoryKey", "roleKey", "meta", "channels"])
    def test_create_requires_the_documented_fields(self, stack: Stack, missing: str) -> None:
        body = listing_body()
        del body[missing]
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [missing]

    @pytest.mark.parametrize("channels", [["discord"], ["telegram", "whatsapp"]])
    def test_create_with_channels_not_connected_names_channels(self, stack: Stack, channels: list[str]) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, listing_body(channels=channels))
        body = assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["channels"]
        assert channels[-1] in body["details"][0]["issue"]
        self._assert_alice_has_nothing(stack)

    def test_create_with_a_channel_the_enum_lacks_names_its_item(self, stack: Stack) -> None:
        """As the OpenAPI ``enum`` of ``channels.items`` says (and as a match request answers)."""
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, listing_body(channels=["telegram", "fax"]))
        assert_error(response, 400, "VALIDATION_ERROR", "channels.1")
        self._assert_alice_has_nothing(stack)

    def test_create_with_another_users_webhook_names_webhook_ids(self, stack: Stack) -> None:
        put_webhook(stack.bob, "wh_bobs")
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, listing_body(webhookIds=["wh_bobs"]))
        body = assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["webhookIds"]
        assert "wh_bobs" in body["details"][0]["issue"]
        self._assert_alice_has_nothing(stack)

    def test_create_with_an_unknown_webhook_names_webhook_ids(self, stack: Stack) -> None:
        put_webhook(stack.alice, "wh_mine")
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, listing_body(webhookIds=["wh_mine", "wh_ghost"]))
        body = assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["webhookIds"]
        assert "wh_ghost" in body["details"][0]["issue"]
        assert "wh_mine" not in body["details"][0]["issue"]
        self._assert_alice_has_nothing(stack)

    def test_create_needs_a_key(self, stack: Stack) -> None:
        assert_error(stack.api.call("POST", "/v1/listings", body=listing_body()), 401, "UNAUTHORIZED")
        self._assert_alice_has_nothing(stack)

    @pytest.mark.parametrize("status", ["PENDING", "REJECTED", "DELETED", "paused", None])
    def test_status_body_accepts_only_paused_or_active(self, stack: Stack, bobs_listing: dict[str, Any], status: Any) -> None:
        response = stack.api.call("PATCH", f"/v1/listings/{bobs_listing['id']}/status", stack.bob.key, {"status": status})
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["status"]
        assert _status(stack.api, stack.bob, bobs_listing["id"]) == "PENDING"

    def test_others_cannot_change_or_delete_a_listing(self, stack: Stack, bobs_active_listing: dict[str, Any]) -> None:
        path = f"/v1/listings/{bobs_active_listing['id']}"
        assert_error(stack.api.call("PATCH", path, stack.alice.key, {"meta": {"title": "Mine now"}}), 403, "FORBIDDEN")
        assert_error(stack.api.call("PATCH", f"{path}/status", stack.alice.key, {"status": "PAUSED"}), 403, "FORBIDDEN")
        assert_error(stack.api.call("DELETE", path, stack.alice.key), 403, "FORBIDDEN")
        assert_error(stack.api.call("DELETE", path, stack.admin.key), 403, "FORBIDDEN")  # not even an administrator
        after = get_listing(stack.api, stack.bob, bobs_active_listing["id"]).json
        assert {k: after[k] for k in LISTING_KEYS} == bobs_active_listing
        assert stack.runner.drain() == 0

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"meta": {"title": None}}, "meta.title"),
            ({"meta": {"salary": "lots"}}, "meta.salary"),
            ({"meta": {"bogus": "1"}}, "meta.bogus"),
            ({"channels": ["discord"]}, "channels"),
            ({"channels": []}, "channels"),
            ({"webhookIds": ["wh_ghost"]}, "webhookIds"),
            ({"status": "PENDING"}, "status"),
            ({"categoryKey": "housing"}, "categoryKey"),
        ],
    )
    def test_invalid_update_changes_nothing(
        self, stack: Stack, bobs_active_listing: dict[str, Any], body: dict[str, Any], field: str
    ) -> None:
        response = stack.api.call("PATCH", f"/v1/listings/{bobs_active_listing['id']}", stack.bob.key, body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]
        after = get_listing(stack.api, stack.bob, bobs_active_listing["id"]).json
        assert {k: after[k] for k in LISTING_KEYS} == bobs_active_listing  # still ACTIVE, same meta, same updatedAt
        assert stack.runner.drain() == 0

    def test_pausing_a_pending_listing_is_409(self, stack: Stack, bobs_listing: dict[str, Any]) -> None:
        response = _set_status(stack.api, stack.bob, bobs_listing["id"], "PAUSED")
        body = assert_error(response, 409, "CONFLICT")
        assert "PENDING" in body["error"]
        assert _status(stack.api, stack.bob, bobs_listing["id"]) == "PENDING"

    def test_resuming_a_pending_listing_is_409(self, stack: Stack, bobs_listing: dict[str, Any]) -> None:
        assert_error(_set_status(stack.api, stack.bob, bobs_listing["id"], "ACTIVE"), 409, "CONFLICT")
        assert _status(stack.api, stack.bob, bobs_listing["id"]) == "PENDING"

    def test_resuming_an_active_listing_is_409(self, stack: Stack, bobs_active_listing: dict[str, Any]) -> None:
        assert_error(_set_status(stack.api, stack.bob, bobs_active_listing["id"], "ACTIVE"), 409, "CONFLICT")
        after = get_listing(stack.api, stack.bob, bobs_active_listing["id"]).json
        assert (after["status"], after["updatedAt"]) == ("ACTIVE", bobs_active_listing["updatedAt"])

    @pytest.mark.parametrize(
        ("method", "suffix", "body"),
        [("GET", "", None), ("PATCH", "", {"meta": {"title": "x"}}), ("PATCH", "/status", {"status": "PAUSED"}), ("DELETE", "", None)],
    )
    def test_unknown_listing_is_404(self, stack: Stack, method: str, suffix: str, body: Any) -> None:
        assert_error(stack.api.call(method, f"/v1/listings/lst_ghost{suffix}", stack.alice.key, body), 404, "NOT_FOUND")


# --- create ----------------------------------------------------------------------------


def test_create_returns_201_with_a_pending_listing(api: Api, alice: User) -> None:
    response = api.call("POST", "/v1/listings", alice.key, listing_body(channels=["telegram", "email", "telegram"]))
    assert response.status_code == 201, response.json
    listing = response.json
    assert set(listing) == LISTING_KEYS
    assert listing["id"].startswith("lst_")
    assert listing["status"] == "PENDING"
    assert listing["statusReason"] is None
    assert listing["statusHistory"] == [{"status": "PENDING", "at": listing["createdAt"], "reason": None}]
    assert listing["title"] == "Backend engineer" == listing["meta"]["title"]
    assert (listing["categoryKey"], listing["roleKey"]) == ("jobs", "hiring")
    assert listing["channels"] == ["telegram", "email"]
    assert listing["webhookIds"] == []
    assert listing["profile"]["userId"] == alice.user_id
    assert listing["profile"]["displayName"] == "Alice"
    assert listing["profile"]["country"] == "de"
    assert listing["createdAt"] == listing["updatedAt"]
    assert listing["createdAt"].endswith("Z")


def test_create_writes_the_listing_and_its_submitted_event(api: Api, alice: User) -> None:
    listing = create_listing(api, alice)
    events = table_items(settings().EVENTS_TABLE)
    assert [(e["type"], e["data"]) for e in events] == [("listing.submitted", {"listingId": listing["id"], "version": 1})]


def test_create_accepts_a_channel_connected_just_before(api: Api, alice: User) -> None:
    api.call("PUT", "/v1/me/channels/discord", alice.key, {"handle": "alice#1"})
    assert create_listing(api, alice, channels=["discord"])["channels"] == ["discord"]


def test_create_binds_the_callers_own_webhooks(api: Api, alice: User) -> None:
    put_webhook(alice, "wh_a")
    put_webhook(alice, "wh_b")
    listing = create_listing(api, alice, webhookIds=["wh_b", "wh_a", "wh_b"])
    assert listing["webhookIds"] == ["wh_b", "wh_a"]
    assert get_listing(api, alice, listing["id"]).json["webhookIds"] == ["wh_b", "wh_a"]


# --- detail ----------------------------------------------------------------------------


def test_owner_sees_own_pending_listing_with_detail_fields(api: Api, alice: User) -> None:
    created = create_listing(api, alice)
    response = get_listing(api, alice, created["id"])
    assert response.status_code == 200
    detail = response.json
    assert set(detail) == LISTING_KEYS | {"myRequest"}
    assert detail["myRequest"] is None
    assert detail["profile"]["userId"] == alice.user_id
    assert detail["channels"] == ["telegram"]
    assert {k: detail[k] for k in LISTING_KEYS} == created


def test_pending_listing_of_another_user_is_404(api: Api, alice: User, bob: User) -> None:
    listing = create_listing(api, alice)
    assert_error(get_listing(api, bob, listing["id"]), 404, "NOT_FOUND")


def test_active_listing_is_visible_to_others_with_owner_and_my_request_null(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    response = get_listing(api, bob, listing["id"])
    assert response.status_code == 200
    assert response.json["status"] == "ACTIVE"
    assert response.json["profile"]["userId"] == alice.user_id
    assert response.json["channels"] == ["telegram"]
    assert "myRequest" in response.json
    assert response.json["myRequest"] is None


@pytest.mark.parametrize("state", ["PAUSED", "REJECTED"])
def test_paused_or_rejected_listing_of_another_user_is_404(
    api: Api, alice: User, bob: User, admin: User, runner: Any, state: str
) -> None:
    listing = create_listing(api, alice)
    if state == "PAUSED":
        activate(api, admin, runner, listing["id"])
        assert _set_status(api, alice, listing["id"], "PAUSED").status_code == 200
    else:
        runner.drain()
        assert decide(api, admin, claim(api, admin)[0]["approvalId"], "reject").status_code == 200
    assert_error(get_listing(api, bob, listing["id"]), 404, "NOT_FOUND")
    assert _status(api, alice, listing["id"]) == state


# --- mine ------------------------------------------------------------------------------


def test_mine_lists_own_listings_newest_first_with_statuses(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    first = create_listing(api, alice, meta={"title": "First"})
    activate(api, admin, runner, first["id"])
    second = create_listing(api, alice, meta={"title": "Second"})
    create_listing(api, bob, meta={"title": "Bob's"})
    mine = my_listings(api, alice)
    assert mine["total"] == 2
    assert [(x["id"], x["status"]) for x in mine["listings"]] == [(second["id"], "PENDING"), (first["id"], "ACTIVE")]
    assert (mine["page"], mine["pageSize"]) == (1, 100)


def test_mine_paginates(api: Api, alice: User) -> None:
    ids = _create_in_order(api, alice, 3)
    page1 = api.call("GET", "/v1/listings/mine?pageSize=2", alice.key).json
    page2 = api.call("GET", "/v1/listings/mine?pageSize=2&page=2", alice.key).json
    assert (page1["total"], page2["total"], page1["pageSize"], page2["page"]) == (3, 3, 2, 2)
    assert [x["id"] for x in page1["listings"] + page2["listings"]] == ids[::-1]


def test_mine_is_empty_for_a_new_user(api: Api, bob: User) -> None:
    assert my_listings(api, bob) == {"listings": [], "total": 0, "page": 1, "pageSize": 100, "nextCursor": None}


# --- update ----------------------------------------------------------------------------


def test_update_of_an_active_listing_returns_it_to_pending(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    response = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"title": "Senior backend engineer"}})
    assert response.status_code == 200, response.json
    updated = response.json
    assert updated["status"] == "PENDING"
    assert updated["title"] == "Senior backend engineer" == updated["meta"]["title"]
    assert updated["updatedAt"] > listing["updatedAt"]
    assert updated["createdAt"] == listing["createdAt"]
    assert_error(get_listing(api, bob, listing["id"]), 404, "NOT_FOUND")  # no longer public


def test_update_merges_meta_and_null_removes_an_optional_key(api: Api, alice: User) -> None:
    listing = create_listing(api, alice, meta={"salary": "85000", "remote": "onsite"})
    response = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"salary": None, "remote": "hybrid"}})
    assert response.status_code == 200, response.json
    meta = get_listing(api, alice, listing["id"]).json["meta"]
    assert "salary" not in meta
    assert meta["remote"] == "hybrid"
    assert meta["title"] == listing["meta"]["title"]
    assert meta["employmentType"] == "full_time"
    assert (meta["location_lat"], meta["location_lng"]) == ("52.52", "13.405")


def test_update_of_the_address_regeocodes_it(api: Api, alice: User) -> None:
    listing = create_listing(api, alice)
    meta = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"location": "Munich"}}).json["meta"]
    assert meta["location"] == "Munich"
    assert float(meta["location_lat"]) == pytest.approx(48.14, abs=0.05)
    assert float(meta["location_lng"]) == pytest.approx(11.58, abs=0.05)


def test_update_replaces_channels_and_webhooks(api: Api, alice: User) -> None:
    put_webhook(alice, "wh_a")
    listing = create_listing(api, alice)
    response = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"channels": ["email"], "webhookIds": ["wh_a"]})
    assert (response.json["channels"], response.json["webhookIds"]) == (["email"], ["wh_a"])
    assert response.json["meta"] == listing["meta"]


def test_binding_webhooks_alone_keeps_an_active_listing_active(api: Api, alice: User, admin: User, runner: Any) -> None:
    put_webhook(alice, "wh_a")
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    runner.drain()
    queued = approval_queue_depth()
    response = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"webhookIds": ["wh_a"], "channels": ["email"]})
    assert response.status_code == 200, response.json
    assert (response.json["status"], response.json["webhookIds"]) == ("ACTIVE", ["wh_a"])
    runner.drain()
    assert approval_queue_depth() == queued  # no new review task
    # meta values equal to the stored ones are no change either; a changed value is
    same = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"title": listing["meta"]["title"]}})
    assert same.json["status"] == "ACTIVE"
    changed = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"title": "New title"}})
    assert changed.json["status"] == "PENDING"


def test_binding_webhooks_to_a_pending_listing_keeps_it_claimable(api: Api, alice: User, admin: User, runner: Any) -> None:
    put_webhook(alice, "wh_a")
    listing = create_listing(api, alice)
    runner.drain()
    rebound = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"webhookIds": ["wh_a"]})
    assert rebound.json["status"] == "PENDING"
    runner.drain()
    approvals = claim(api, admin)  # the first task names the old version and is dropped; the new one is current
    assert [a["listingId"] for a in approvals] == [listing["id"]]
    decided = decide(api, admin, approvals[0]["approvalId"], "approve")
    assert decided.status_code == 200, decided.json
    after = get_listing(api, alice, listing["id"]).json
    assert (after["status"], after["webhookIds"]) == ("ACTIVE", ["wh_a"])


def test_update_of_a_rejected_listing_clears_the_reason(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    runner.drain()
    decide(api, admin, claim(api, admin)[0]["approvalId"], "reject", "Too vague")
    assert get_listing(api, alice, listing["id"]).json["statusReason"] == "Too vague"
    updated = api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"title": "Clearer title"}}).json
    assert (updated["status"], updated["statusReason"]) == ("PENDING", None)


# --- pause / resume --------------------------------------------------------------------


def test_pause_then_resume(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    paused = _set_status(api, alice, listing["id"], "PAUSED")
    assert paused.status_code == 200, paused.json
    assert paused.json["status"] == "PAUSED"
    assert _status(api, alice, listing["id"]) == "PAUSED"
    resumed = _set_status(api, alice, listing["id"], "ACTIVE")
    assert resumed.status_code == 200, resumed.json
    assert resumed.json["status"] == "ACTIVE"
    assert resumed.json["meta"] == listing["meta"]
    assert _status(api, alice, listing["id"]) == "ACTIVE"


def test_pausing_a_paused_listing_is_409(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    _set_status(api, alice, listing["id"], "PAUSED")
    assert_error(_set_status(api, alice, listing["id"], "PAUSED"), 409, "CONFLICT")
    assert _status(api, alice, listing["id"]) == "PAUSED"


@pytest.mark.parametrize("target", ["PAUSED", "ACTIVE"])
def test_rejected_listing_can_be_neither_paused_nor_resumed(api: Api, alice: User, admin: User, runner: Any, target: str) -> None:
    listing = create_listing(api, alice)
    runner.drain()
    decide(api, admin, claim(api, admin)[0]["approvalId"], "reject")
    assert_error(_set_status(api, alice, listing["id"], target), 409, "CONFLICT")
    assert _status(api, alice, listing["id"]) == "REJECTED"


# --- delete ----------------------------------------------------------------------------


def test_delete_returns_id_and_deleted_then_404(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    response = api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key)
    assert response.status_code == 200, response.json
    assert response.json == {"id": listing["id"], "deleted": True}
    assert_error(get_listing(api, alice, listing["id"]), 404, "NOT_FOUND")
    assert_error(get_listing(api, bob, listing["id"]), 404, "NOT_FOUND")
    assert my_listings(api, alice)["total"] == 0


def test_delete_twice_is_404(api: Api, alice: User) -> None:
    listing = create_listing(api, alice)
    api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key)
    assert_error(api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key), 404, "NOT_FOUND")


def test_deleted_listing_cannot_be_updated_or_paused(api: Api, alice: User) -> None:
    listing = create_listing(api, alice)
    api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key)
    assert_error(api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"title": "x"}}), 404, "NOT_FOUND")
    assert_error(_set_status(api, alice, listing["id"], "PAUSED"), 404, "NOT_FOUND")


# --- stale references: a deleted webhook, a disconnected channel ------------------------------


def test_a_patch_checks_only_the_lists_it_gives_so_a_deleted_webhook_fails_nothing_else(api: Api, alice: User) -> None:
    webhook_id = api.call_json("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/h"}, status=201)["id"]
    listing = create_listing(api, alice, "mentoring", "mentee", webhookIds=[webhook_id])
    api.call_json("DELETE", f"/v1/webhooks/{webhook_id}", alice.key)
    path = f"/v1/listings/{listing['id']}"
    edited = api.call("PATCH", path, alice.key, {"meta": {"title": "Repro 2"}})
    assert edited.status_code == 200, edited.json
    assert (edited.json["meta"]["title"], edited.json["webhookIds"]) == ("Repro 2", [webhook_id])  # kept, matching nothing
    assert api.call("PATCH", path, alice.key, {}).status_code == 200
    assert api.call("PATCH", path, alice.key, {"channels": ["email"]}).json["webhookIds"] == [webhook_id]
    # Given, the list is checked: the deleted id is named; an empty list drops it.
    resent = assert_error(api.call("PATCH", path, alice.key, {"webhookIds": [webhook_id]}), 400, "VALIDATION_ERROR", "webhookIds")
    assert webhook_id in str(resent["details"])
    assert api.call_json("PATCH", path, alice.key, {"webhookIds": []})["webhookIds"] == []


def test_a_patch_of_meta_is_not_failed_by_a_channel_disconnected_since(api: Api, alice: User) -> None:
    listing = create_listing(api, alice, "mentoring", "mentee", channels=["telegram", "email"])
    api.call_json("DELETE", "/v1/me/channels/email", alice.key)
    path = f"/v1/listings/{listing['id']}"
    edited = api.call("PATCH", path, alice.key, {"meta": {"title": "Repro 2"}})
    assert edited.status_code == 200, edited.json
    assert (edited.json["meta"]["title"], edited.json["channels"]) == ("Repro 2", ["telegram"])
    assert api.call("PATCH", path, alice.key, {}).status_code == 200
    # Given, the list is checked: the disconnected channel is named.
    assert_error(api.call("PATCH", path, alice.key, {"channels": ["telegram", "email"]}), 400, "VALIDATION_ERROR", "channels")


def test_a_channel_its_owner_disconnects_leaves_every_view_of_the_listing(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    api.call_json("PUT", "/v1/me/channels/discord", alice.key, {"handle": "alice#1"})
    listing = create_listing(api, alice, "mentoring", "mentee", channels=["telegram", "discord"])
    activate(api, admin, runner, listing["id"])
    index_listings()
    before = get_listing(api, bob, listing["id"])
    assert before.json["channels"] == ["telegram", "discord"]

    assert api.call("DELETE", "/v1/me/channels/discord", alice.key).status_code == 200
    index_listings()
    for viewer in (bob, alice):
        assert get_listing(api, viewer, listing["id"]).json["channels"] == ["telegram"]
    found = search_listings(api, bob, "category=mentoring")["listings"]
    assert [(f["id"], f["channels"]) for f in found] == [(listing["id"], ["telegram"])]
    assert [m["channels"] for m in my_listings(api, alice)["listings"]] == [["telegram"]]
    # The representation changed, so its ETag did: no 304 for the old one.
    again = api.call("GET", f"/v1/listings/{listing['id']}", bob.key, headers={"If-None-Match": before.headers["ETag"]})
    assert (again.status_code, again.json["channels"]) == (200, ["telegram"])
    page = signed_in(api, alice).get(f"/dashboard/listings/{listing['id']}").text
    assert "<dt>Contact channels</dt><dd>Telegram</dd>" in page

    api.call_json("PUT", "/v1/me/channels/discord", alice.key, {"handle": "alice#2"})
    assert get_listing(api, bob, listing["id"]).json["channels"] == ["telegram", "discord"]  # offered again
