"""Listing approval (DESIGN §2 "Approvals"): outbox -> SQS task, claim with ``max``, approve/reject,
stale tasks (listing changed or deleted) dropped at claim and at decision time, admin only."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib.approvals import service
from chalicelib.approvals.models import ApprovalDecision, ApproveListing
from chalicelib.approvals.service import decode_approval_id
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.listings import api as listings
from chalicelib.listings.repository import PENDING_PARTITIONS, pending_partition
from chalicelib.persistence import storage
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import (
    Stack,
    approval_queue_depth,
    assert_error,
    claim,
    counting_reads,
    create_listing,
    decide,
    error_fields,
    get_listing,
    shared_stack,
)


def _forged_approval_id(listing_id: str, version: int = 1, receipt: str = "forged-receipt") -> str:
    raw = json.dumps([receipt, listing_id, version, "2026-01-01T00:00:00.000Z"], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _peek_tasks() -> list[dict[str, Any]]:
    """The bodies of the visible approval tasks, left visible (VisibilityTimeout 0)."""
    messages = storage.client("sqs").receive_message(
        QueueUrl=settings().APPROVAL_QUEUE_URL, MaxNumberOfMessages=10, VisibilityTimeout=0
    ).get("Messages", [])
    return sorted((json.loads(m["Body"]) for m in messages), key=lambda b: (b["listingId"], b["version"]))


def _update(api: Api, user: User, listing_id: str, title: str) -> None:
    response = api.call("PATCH", f"/v1/listings/{listing_id}", user.key, {"meta": {"title": title}})
    assert response.status_code == 200, response.json


@pytest.fixture(scope="class")
def stack(aws_resources: Resources) -> Iterator[Stack]:
    with shared_stack(aws_resources) as built:
        yield built


class TestRefusedWithoutEffect:
    """Claims and decisions that must be refused without touching the (empty) queue; one shared stack."""

    def test_claim_of_an_empty_queue_is_an_empty_list(self, stack: Stack) -> None:
        assert claim(stack.api, stack.admin, max_tasks=1) == []

    @pytest.mark.parametrize("max_tasks", [0, 11, -1, "abc", 2.5, "5", True])
    def test_claim_max_out_of_range_is_a_validation_error_naming_max(self, stack: Stack, max_tasks: Any) -> None:
        response = stack.api.call("POST", "/v1/admin/approvals/claims", stack.admin.key, {"max": max_tasks})
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["max"]

    def test_claim_rejects_unknown_body_fields(self, stack: Stack) -> None:
        response = stack.api.call("POST", "/v1/admin/approvals/claims", stack.admin.key, {"limit": 5})
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["limit"]

    @pytest.mark.parametrize("query", ["pageSize=0", "pageSize=101", "pageSize=abc", "cursor=%21%21", "cursor=bm9wZQ", "max=5"])
    def test_pending_list_rejects_bad_query_naming_the_parameter(self, stack: Stack, query: str) -> None:
        response = stack.api.call("GET", f"/v1/admin/approvals?{query}", stack.admin.key)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [query.split("=")[0]]

    @pytest.mark.parametrize(
        "approval_id", ["nope", "bm90IGpzb24", "WzEsMl0", "%E2%9C%93"], ids=["garbage", "not-json", "short-list", "unicode"]
    )
    def test_undecodable_approval_id_is_404(self, stack: Stack, approval_id: str) -> None:
        body = assert_error(decide(stack.api, stack.admin, approval_id, "approve"), 404, "NOT_FOUND")
        assert body["error"] == "Unknown approval id"

    def test_forged_approval_id_for_a_missing_listing_is_404(self, stack: Stack) -> None:
        assert_error(decide(stack.api, stack.admin, _forged_approval_id("lst_ghost"), "approve"), 404, "NOT_FOUND")


# --- queueing --------------------------------------------------------------------------


def _queued(api: Api, owner: User, runner: Any) -> dict[str, Any]:
    """A new listing of ``owner``'s with its approval task on the queue (the outbox stream processed)."""
    listing = create_listing(api, owner)
    runner.drain()
    return listing


def test_create_puts_a_task_on_the_queue_via_the_outbox(api: Api, alice: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    assert approval_queue_depth() == (0, 0)  # nothing until the outbox stream is processed
    assert runner.drain() >= 1
    tasks = _peek_tasks()
    assert [(t["listingId"], t["version"]) for t in tasks] == [(listing["id"], 1)]
    assert tasks[0]["enqueuedAt"].endswith("Z")


def test_each_update_queues_a_new_version(api: Api, alice: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    _update(api, alice, listing["id"], "Second title")
    _update(api, alice, listing["id"], "Third title")
    runner.drain()
    assert [(t["listingId"], t["version"]) for t in _peek_tasks()] == [(listing["id"], v) for v in (1, 2, 3)]


# --- claiming --------------------------------------------------------------------------


def test_claim_returns_the_task_with_the_listing(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    assert set(approval) == {"approvalId", "listingId", "listing", "enqueuedAt"}
    assert approval["listingId"] == listing["id"]
    assert "webhookIds" not in approval["listing"]  # the owner's view only
    assert "statusHistory" not in approval["listing"]
    assert approval["listing"] == {k: v for k, v in listing.items() if k not in ("webhookIds", "statusHistory")}
    assert approval["enqueuedAt"] >= listing["createdAt"]


def test_claim_respects_max_and_claimed_tasks_are_hidden(api: Api, alice: User, admin: User, runner: Any) -> None:
    ids = {create_listing(api, alice, meta={"title": f"L{i}"})["id"] for i in range(3)}
    runner.drain()
    first = claim(api, admin, max_tasks=2)
    second = claim(api, admin, max_tasks=2)
    assert (len(first), len(second)) == (2, 1)
    assert {a["listingId"] for a in first + second} == ids
    assert claim(api, admin) == []
    assert approval_queue_depth() == (0, 3)


# --- deciding --------------------------------------------------------------------------


def test_approve_makes_the_listing_active_and_removes_the_task(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    listing = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    response = decide(api, admin, approval["approvalId"], "approve")
    assert response.status_code == 200, response.json
    assert response.json["approvalId"] == approval["approvalId"]
    assert response.json["decision"] == "approve"
    assert response.json["listing"]["status"] == "ACTIVE"
    assert response.json["listing"]["meta"] == listing["meta"]
    assert get_listing(api, bob, listing["id"]).json["status"] == "ACTIVE"
    assert approval_queue_depth() == (0, 0)


def test_reject_sets_rejected_with_the_reason(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    response = decide(api, admin, approval["approvalId"], "reject", "  Please add a salary range ")
    assert response.status_code == 200, response.json
    assert response.json["listing"]["status"] == "REJECTED"
    assert response.json["listing"]["statusReason"] == "Please add a salary range"
    own = get_listing(api, alice, listing["id"]).json
    assert (own["status"], own["statusReason"]) == ("REJECTED", "Please add a salary range")
    assert_error(get_listing(api, bob, listing["id"]), 404, "NOT_FOUND")
    assert approval_queue_depth() == (0, 0)


def test_reject_without_reason_uses_a_default_reason(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    decide(api, admin, claim(api, admin)[0]["approvalId"], "reject")
    assert get_listing(api, alice, listing["id"]).json["statusReason"] == "Rejected by an administrator"


def test_invalid_decisions_change_nothing_and_keep_the_claim(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    invalid = [({"decision": "maybe"}, "decision"), ({}, "decision"), ({"decision": "reject", "reason": ""}, "reason"),
               ({"decision": "approve", "note": "x"}, "note"), ({"decision": "approve", "reason": "fine"}, "reason")]
    for body, field in invalid:
        response = api.call("POST", f"/v1/admin/approvals/{approval['approvalId']}", admin.key, body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field], body
        assert get_listing(api, alice, listing["id"]).json["status"] == "PENDING"
    assert decide(api, admin, approval["approvalId"], "approve").status_code == 200  # the claim still works


def stored_status(listing_id: str) -> str:
    listing = listings.get(listing_id)
    assert listing is not None
    return str(listing["status"])


def _suspend(api: Api, admin: User, user: User, reporter: User) -> None:
    report = api.call("POST", "/v1/reports", reporter.key, {"subjectType": "profile", "subjectId": user.user_id, "reason": "scam"})
    decided = api.call("POST", f"/v1/admin/reports/{report.json['reportId']}/decision", admin.key, {"decision": "suspend_user"})
    assert decided.status_code == 200


def test_a_suspended_owners_listing_cannot_be_approved_but_can_be_rejected(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    by_claim, on_page = _queued(api, alice, runner), _queued(api, alice, runner)
    _suspend(api, admin, alice, bob)
    approvals = {a["listing"]["id"]: a["approvalId"] for a in claim(api, admin)}
    assert_error(decide(api, admin, approvals[by_claim["id"]], "approve"), 409, "CONFLICT")
    with pytest.raises(errors.Conflict, match="owner is suspended"):
        service.decide_listing(on_page["id"], ApproveListing(decision="approve"), admin.user_id)
    assert [stored_status(i) for i in (by_claim["id"], on_page["id"])] == ["PENDING", "PENDING"]
    assert decide(api, admin, approvals[by_claim["id"]], "reject", "spam").status_code == 200  # the claim still holds

    reinstated = api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", admin.key)
    assert reinstated.status_code == 200
    assert service.decide_listing(on_page["id"], ApproveListing(decision="approve"), admin.user_id).status == "ACTIVE"


def test_a_suspension_committed_after_the_check_still_stops_the_approval(
    api: Api, alice: User, bob: User, admin: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = _queued(api, alice, runner)
    _suspend(api, admin, alice, bob)
    real, calls = service._refuse_if_suspended, []

    def first_passes(*args: Any) -> None:  # as if the suspension committed right after the first check
        calls.append(args)
        if len(calls) > 1:
            real(*args)

    monkeypatch.setattr(service, "_refuse_if_suspended", first_passes)
    with pytest.raises(errors.Conflict, match="owner is suspended"):
        service.decide_listing(listing["id"], ApproveListing(decision="approve"), admin.user_id)
    assert stored_status(listing["id"]) == "PENDING"


def test_a_task_cannot_be_decided_twice(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    assert decide(api, admin, approval["approvalId"], "approve").status_code == 200
    assert_error(decide(api, admin, approval["approvalId"], "reject", "changed my mind"), 409, "CONFLICT")
    assert get_listing(api, alice, listing["id"]).json["status"] == "ACTIVE"


# --- stale tasks: dropped, never applied ------------------------------------------------


def test_task_of_a_listing_updated_after_queueing_is_dropped_at_claim(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    listing = _queued(api, alice, runner)
    _update(api, alice, listing["id"], "Updated title")
    runner.drain()
    approvals = claim(api, admin)
    assert [(a["listingId"], a["listing"]["title"]) for a in approvals] == [(listing["id"], "Updated title")]
    assert approval_queue_depth() == (0, 1)  # the stale task was deleted, the current one is claimed


def test_task_of_a_deleted_listing_is_dropped_at_claim(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key)
    assert claim(api, admin) == []
    assert approval_queue_depth() == (0, 0)


def test_task_of_an_already_decided_listing_is_dropped_at_claim(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    listing = _queued(api, alice, runner)
    # a duplicate delivery of the same task (SQS is at-least-once)
    storage.client("sqs").send_message(QueueUrl=settings().APPROVAL_QUEUE_URL, MessageBody=json.dumps(_peek_tasks()[0]))
    first = claim(api, admin, max_tasks=1)
    decide(api, admin, first[0]["approvalId"], "approve")
    assert claim(api, admin) == []
    assert get_listing(api, alice, listing["id"]).json["status"] == "ACTIVE"


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_listing_updated_after_claim_is_not_decided(api: Api, alice: User, admin: User, runner: Any, decision: str) -> None:
    listing = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    _update(api, alice, listing["id"], "Changed while under review")
    body = assert_error(decide(api, admin, approval["approvalId"], decision), 409, "CONFLICT")
    assert "dropped" in body["error"]
    after = get_listing(api, alice, listing["id"]).json
    assert (after["status"], after["title"], after["statusReason"]) == ("PENDING", "Changed while under review", None)
    runner.drain()
    [fresh] = claim(api, admin)  # the new version's task is still there and decidable
    assert fresh["listing"]["title"] == "Changed while under review"
    assert decide(api, admin, fresh["approvalId"], "approve").json["listing"]["status"] == "ACTIVE"


def test_listing_deleted_after_claim_is_404_and_the_task_dropped(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key)
    assert_error(decide(api, admin, approval["approvalId"], "approve"), 404, "NOT_FOUND")
    assert approval_queue_depth() == (0, 0)
    assert_error(get_listing(api, alice, listing["id"]), 404, "NOT_FOUND")


# --- access and bogus ids --------------------------------------------------------------


def test_non_admin_can_neither_claim_nor_decide(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    assert_error(api.call("GET", "/v1/admin/approvals", bob.key), 403, "FORBIDDEN")
    assert_error(api.call("POST", "/v1/admin/approvals/claims", bob.key, {"max": 10}), 403, "FORBIDDEN")
    assert approval_queue_depth() == (1, 0)  # the forbidden claim claimed nothing
    [approval] = claim(api, admin)
    assert_error(decide(api, bob, approval["approvalId"], "approve"), 403, "FORBIDDEN")
    assert_error(decide(api, alice, approval["approvalId"], "approve"), 403, "FORBIDDEN")
    assert get_listing(api, alice, listing["id"]).json["status"] == "PENDING"


def test_forged_approval_id_for_a_pending_listing_is_404_and_not_applied(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    listing = _queued(api, alice, runner)
    assert_error(decide(api, admin, _forged_approval_id(listing["id"]), "approve"), 404, "NOT_FOUND")
    assert get_listing(api, alice, listing["id"]).json["status"] == "PENDING"
    assert approval_queue_depth() == (1, 0)  # the real task is untouched
    [approval] = claim(api, admin)
    assert decide(api, admin, approval["approvalId"], "approve").status_code == 200


def test_an_approval_id_edited_to_name_another_listing_is_404_and_keeps_both_tasks(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    claimed = _queued(api, alice, runner)
    [approval] = claim(api, admin)
    other = _queued(api, alice, runner)  # queued after the claim: not claimed
    held = decode_approval_id(approval["approvalId"]).receipt  # a receipt the claim really holds
    assert_error(decide(api, admin, _forged_approval_id(other["id"], receipt=held), "approve"), 404, "NOT_FOUND")
    assert [get_listing(api, alice, x["id"]).json["status"] for x in (claimed, other)] == ["PENDING", "PENDING"]
    assert decide(api, admin, approval["approvalId"], "approve").status_code == 200  # the claim is still held
    assert get_listing(api, alice, claimed["id"]).json["status"] == "ACTIVE"


def test_forged_approval_id_for_a_decided_listing_is_404_not_500(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = _queued(api, alice, runner)
    decide(api, admin, claim(api, admin)[0]["approvalId"], "approve")
    assert_error(decide(api, admin, _forged_approval_id(listing["id"]), "reject"), 404, "NOT_FOUND")
    assert get_listing(api, alice, listing["id"]).json["status"] == "ACTIVE"


# --- the review queue: GET lists without claiming ----------------------------------------


@pytest.fixture
def ticking_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each clock reading one second after the previous one, so submission order is unambiguous."""
    moments = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in range(10_000))
    monkeypatch.setattr(clock, "now", lambda: next(moments))


def _pending(api: Api, admin: User, query: str = "") -> dict[str, Any]:
    response = api.call("GET", f"/v1/admin/approvals{query}", admin.key)
    assert response.status_code == 200, response.json
    page: dict[str, Any] = response.json
    return page


@pytest.mark.usefixtures("ticking_clock")
def test_pending_lists_oldest_first_in_pages_without_claiming(api: Api, alice: User, admin: User, runner: Any) -> None:
    created = [create_listing(api, alice, meta={"title": f"L{i}"}) for i in range(5)]
    runner.drain()
    first = _pending(api, admin, "?pageSize=2")
    second = _pending(api, admin, f"?pageSize=2&cursor={first['nextCursor']}")
    third = _pending(api, admin, f"?pageSize=2&cursor={second['nextCursor']}")
    pages = [first, second, third]
    assert [[x["id"] for x in p["listings"]] for p in pages] == [
        [created[0]["id"], created[1]["id"]], [created[2]["id"], created[3]["id"]], [created[4]["id"]]
    ]
    assert third["nextCursor"] is None
    assert first["pageSize"] == 2
    # the listing as its owner sees it, less webhookIds and statusHistory (only the owner sees those)
    assert first["listings"][0] == {k: v for k, v in created[0].items() if k not in ("webhookIds", "statusHistory")}
    assert approval_queue_depth() == (5, 0)  # looking claimed nothing
    assert len(claim(api, admin)) == 5  # every task is still claimable


@pytest.mark.usefixtures("ticking_clock")
def test_pending_leaves_out_decided_and_deleted_listings_and_requeues_updates_last(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    approved, rejected, deleted, updated, waiting = (create_listing(api, alice, meta={"title": f"L{i}"}) for i in range(5))
    runner.drain()
    for approval in claim(api, admin):
        if approval["listingId"] in (approved["id"], rejected["id"]):
            decide(api, admin, approval["approvalId"], "approve" if approval["listingId"] == approved["id"] else "reject")
    api.call("DELETE", f"/v1/listings/{deleted['id']}", alice.key)
    _update(api, alice, updated["id"], "Resubmitted")
    page = _pending(api, admin)
    assert [x["id"] for x in page["listings"]] == [waiting["id"], updated["id"]]
    assert page["listings"][1]["title"] == "Resubmitted"
    assert page["nextCursor"] is None


def test_pending_of_an_empty_queue_is_an_empty_page(api: Api, admin: User) -> None:
    assert _pending(api, admin, "?pageSize=1") == {"listings": [], "pageSize": 1, "nextCursor": None}


def _walk_pending(api: Api, admin: User, page_size: int, between: Any = None) -> list[list[str]]:
    """The ids of every page of the review queue, following ``nextCursor``; ``between(n)`` runs after page n."""
    pages, query = [], f"?pageSize={page_size}"
    while True:
        page = _pending(api, admin, query)
        pages.append([x["id"] for x in page["listings"]])
        assert len(pages) <= 20, "the cursor does not advance"
        if page["nextCursor"] is None:
            return pages
        if between is not None:
            between(len(pages))
        query = f"?pageSize={page_size}&cursor={page['nextCursor']}"


@pytest.mark.usefixtures("ticking_clock")
@pytest.mark.parametrize("page_size", [1, 3, 7])
def test_pending_pages_have_no_duplicates_and_no_gaps(api: Api, alice: User, admin: User, page_size: int) -> None:
    ids = [create_listing(api, alice, meta={"title": f"L{i}"})["id"] for i in range(7)]
    pages = _walk_pending(api, admin, page_size)
    assert [i for page in pages for i in page] == ids  # oldest first, each exactly once
    assert all(len(page) == page_size for page in pages[:-1])
    assert len(pages) == -(-len(ids) // page_size)  # no empty last page


@pytest.mark.usefixtures("ticking_clock")
def test_the_review_queue_is_written_to_both_shards_and_read_merged_oldest_first(api: Api, alice: User, admin: User) -> None:
    """Two write shards of ``pendingReview`` (docs/capacity.md): listings land in both, and the
    pages merge them into one queue, oldest submission first, each listing once."""
    ids: list[str] = []
    while {pending_partition(i) for i in ids} != set(PENDING_PARTITIONS):  # a shard per id, as CRC-32 falls
        assert len(ids) < 40
        ids.append(create_listing(api, alice, meta={"title": f"L{len(ids)}"})["id"])
    ids.append(create_listing(api, alice, meta={"title": "last"})["id"])
    stored = {i: storage.get(settings().LISTINGS_TABLE, {"listingId": i}) or {} for i in ids}
    assert {i: stored[i]["pendingQueue"] for i in ids} == {i: pending_partition(i) for i in ids}
    for page_size in (1, 2, len(ids)):
        assert [i for page in _walk_pending(api, admin, page_size) for i in page] == ids


@pytest.mark.usefixtures("ticking_clock")
def test_pending_pages_stay_exact_while_the_queue_changes_between_pages(api: Api, alice: User, admin: User) -> None:
    """A key cursor (not an offset): deciding a listing already seen shifts nothing, a listing
    deleted or resubmitted before its page is shown once where it now stands, a new one at the end."""
    ids = [create_listing(api, alice, meta={"title": f"L{i}"})["id"] for i in range(7)]
    added: list[str] = []

    def change(after_page: int) -> None:
        if after_page == 1:
            service.decide_listing(ids[1], ApprovalDecision(decision="approve"), "usr_admin")  # seen on page 1
            service.decide_listing(ids[2], ApprovalDecision(decision="reject"), "usr_admin")  # the cursor's own position leaves the index
            assert api.call("DELETE", f"/v1/listings/{ids[4]}", alice.key).status_code == 200  # not seen yet
            _update(api, alice, ids[3], "Resubmitted")  # not seen yet: moves to the end
            added.append(create_listing(api, alice, meta={"title": "L7"})["id"])

    pages = _walk_pending(api, admin, 3, change)
    assert pages == [[ids[0], ids[1], ids[2]], [ids[5], ids[6], ids[3]], [added[0]]]


def _signed_cursor_parts(cursor: str) -> tuple[dict[str, Any], str]:
    head, _, signature = cursor.partition(".")
    payload: dict[str, Any] = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return payload, signature


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


@pytest.mark.usefixtures("ticking_clock")
def test_edited_or_foreign_pending_cursors_are_a_400_naming_cursor_and_change_nothing(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    ids = [create_listing(api, alice, meta={"title": f"L{i}"})["id"] for i in range(5)]
    runner.drain()
    first = _pending(api, admin, "?pageSize=2")
    cursor = first["nextCursor"]
    assert cursor is not None
    payload, signature = _signed_cursor_parts(cursor)
    skipping = _b64({**payload, "k": payload["k"].replace(ids[1], ids[3])}) + "." + signature
    unsigned = _b64({"listingId": ids[1], "pendingQueue": "PENDING", "pendingSort": payload["k"]})  # the old format
    for n in range(3):
        create_listing(api, admin, meta={"title": f"Admin's own {n}"})  # queued after alice's
    foreign = api.call("GET", "/v1/listings/mine?pageSize=2", admin.key).json["nextCursor"]  # another route's
    assert foreign is not None
    refused = [
        (admin, f"pageSize=2&cursor={skipping}"),  # payload edited, signature kept
        (admin, f"pageSize=2&cursor={cursor[:-3]}{'xyz' if not cursor.endswith('xyz') else 'abc'}"),  # signature edited
        (admin, f"pageSize=2&cursor={unsigned}"),
        (admin, f"pageSize=3&cursor={cursor}"),  # another page size
        (make_user("Admin Two", admin=True), f"pageSize=2&cursor={cursor}"),  # another administrator's
        (admin, f"pageSize=2&cursor={foreign}"),  # same caller and page size, another list
    ]
    before = (approval_queue_depth(), [get_listing(api, alice, i).json for i in ids])
    for caller, query in refused:
        response = api.call("GET", f"/v1/admin/approvals?{query}", caller.key)
        assert_error(response, 400, "VALIDATION_ERROR", "cursor")
        assert error_fields(response) == ["cursor"]
    assert (approval_queue_depth(), [get_listing(api, alice, i).json for i in ids]) == before  # nothing changed
    assert [x["id"] for x in _pending(api, admin, f"?pageSize=2&cursor={cursor}")["listings"]] == ids[2:4]


# --- deciding without a claim (the Dashboard's review page) ------------------------------


def test_decide_listing_without_claim_approves_and_the_queued_task_is_dropped(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    listing = _queued(api, alice, runner)
    decided = service.decide_listing(listing["id"], ApprovalDecision(decision="approve"), "usr_admin", version=1)
    assert decided.status == "ACTIVE"
    assert get_listing(api, bob, listing["id"]).json["status"] == "ACTIVE"
    assert _pending(api, admin)["listings"] == []
    assert claim(api, admin) == []  # the task was stale: dropped at claim, never applied
    assert approval_queue_depth() == (0, 0)


def test_an_approval_reads_the_listing_and_its_owner_once_each(api: Api, alice: User) -> None:
    listing = create_listing(api, alice)
    with counting_reads() as reads:
        decided = service.decide_listing(listing["id"], ApprovalDecision(decision="approve"), "usr_admin")
    assert decided.profile.displayName == "Alice"
    assert reads.calls == ["GetItem", "GetItem"], reads.calls  # the listing, its owner (not suspended)


def test_decide_listing_rejects_with_reason(api: Api, alice: User) -> None:
    listing = create_listing(api, alice)
    decided = service.decide_listing(listing["id"], ApprovalDecision(decision="reject", reason="No salary"), "usr_admin")
    assert (decided.status, decided.statusReason) == ("REJECTED", "No salary")


def test_decide_listing_of_another_version_or_decided_listing_is_a_conflict(api: Api, alice: User) -> None:
    listing = create_listing(api, alice)
    _update(api, alice, listing["id"], "Changed since the admin looked")
    with pytest.raises(errors.Conflict):
        service.decide_listing(listing["id"], ApprovalDecision(decision="approve"), "usr_admin", version=1)
    assert get_listing(api, alice, listing["id"]).json["status"] == "PENDING"
    service.decide_listing(listing["id"], ApprovalDecision(decision="approve"), "usr_admin", version=2)
    with pytest.raises(errors.Conflict):
        service.decide_listing(listing["id"], ApprovalDecision(decision="reject"), "usr_admin")
    assert get_listing(api, alice, listing["id"]).json["status"] == "ACTIVE"


def test_decide_listing_of_a_missing_listing_is_not_found(api: Api) -> None:
    with pytest.raises(errors.NotFound):
        service.decide_listing("lst_ghost", ApprovalDecision(decision="approve"), "usr_admin")
