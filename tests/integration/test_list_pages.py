"""List routes page natively: requests sent / received / of a listing and
conversations read their page from list indexes with signed key cursors; totals come from
counters kept in the transactions that create requests and change their status (in-process moto).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.auth.service import Caller
from chalicelib.conversations import service as conversations
from chalicelib.conversations.models import ConversationListQuery
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings as settings_
from chalicelib.listings import repository as listings
from chalicelib.listings.status import Transition
from chalicelib.match_requests import service as requests
from chalicelib.match_requests.models import (
    ListingRequestQuery,
    MatchRequestCreate,
    ProfileRequestCreate,
    RequestListQuery,
    StatusChange,
)
from chalicelib.persistence import storage
from chalicelib.workflows import handlers, listing_deletion
from chalicelib.workflows import request_decisions as decisions
from scripts import lists_backfill
from tests.integration.aws_session import Resources, reset
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, counting_reads, error_fields, moto_examples, table_items
from tests.integration.request_helpers import events, run_concurrently
from tests.integration.webhook_helpers import stream_event

SUBJECT_TYPES = (None, "LISTING", "PROFILE")
STATUSES = (None, "PENDING", "ACCEPTED", "REJECTED")


# --- helpers ---------------------------------------------------------------------------


@contextmanager
def frozen_clock(now: list[str]) -> Iterator[None]:
    """``clock.iso()`` answers ``now[0]`` (set it before each action); explicit moments format as usual."""
    real = clock.iso
    with mock.patch.object(clock, "iso", lambda moment=None: real(moment) if moment is not None else now[0]):
        yield


def active_listing(owner_id: str, run: str, n: int) -> str:
    """An ACTIVE jobs listing of ``owner_id`` written through the repository (as an approval leaves it)."""
    now = clock.iso()
    item = {"listingId": f"lst_{run}{n:03d}", "ownerId": owner_id, "categoryKey": "jobs", "roleKey": "hiring",
            "title": f"Listing {n}", "meta": {"title": "T"}, "channels": ["telegram"], "webhookIds": [],
            "status": "PENDING", "version": 1, "searchText": "t", "createdAt": now, "updatedAt": now}
    listings.create(item, [])  # type: ignore[arg-type]
    listings.transition(item, Transition.APPROVE, now)  # type: ignore[arg-type]
    return str(item["listingId"])


def send_match(requester: str, listing_id: str) -> str:
    created = requests.create_match_request(
        Caller(user_id=requester), MatchRequestCreate(listingId=listing_id, message="Hello", channels=["telegram"])
    )
    return created.requestId


def send_profile(requester: str, target: str) -> str:
    created = requests.create_profile_request(
        Caller(user_id=requester), ProfileRequestCreate(userId=target, message="Hi", channel="telegram")  # type: ignore[arg-type]
    )
    return created.requestId


def decide(recipient: str, request_id: str, status: str) -> None:
    decisions.decide(Caller(user_id=recipient), request_id, StatusChange.model_validate({"status": status}))


def stored_requests() -> list[dict[str, Any]]:
    """Every request item (a test-only Scan): the brute-force truth."""
    return table_items(settings_().REQUESTS_TABLE)


def expected(items: list[dict[str, Any]], attribute: str, owner: str, subject_type: str | None,
             status: str | None) -> list[str]:
    """Brute force: the ids of ``owner``'s list, newest first, ties by id (descending)."""
    chosen = [i for i in items if i[attribute] == owner and subject_type in (None, i["subjectType"])
              and status in (None, i["status"])]
    return [i["requestId"] for i in sorted(chosen, key=lambda i: (i["createdAt"], i["requestId"]), reverse=True)]


def walk(fetch: Callable[[str | None], Any], field: str) -> tuple[list[str], list[int]]:
    """Follow ``nextCursor`` from the first page: the ids in order and every page's ``total``."""
    found: list[str] = []
    totals: list[int] = []
    cursor: str | None = None
    while True:
        page = fetch(cursor)
        found += [getattr(item, field) for item in getattr(page, "requests", None) or getattr(page, "conversations", [])]
        totals.append(page.total)
        cursor = page.nextCursor
        if cursor is None:
            return found, totals


def list_fetchers(user: str, subject_type: str | None, status: str | None,
                  page_size: int) -> dict[str, Callable[[str | None], Any]]:
    """The sent and received list of ``user`` with these filters, as functions of the cursor."""
    caller = Caller(user_id=user)

    def query(cursor: str | None) -> RequestListQuery:
        return RequestListQuery(pageSize=page_size, subjectType=subject_type, status=status, cursor=cursor)  # type: ignore[arg-type]

    return {
        "requesterId": lambda c: requests.list_sent(caller, query(c)),
        "recipientId": lambda c: requests.list_received(caller, query(c)),
    }


def assert_lists_exact(users: list[str], owner: str, listing_ids: list[str], page_size: int = 2) -> None:
    """Every list of ``users``, every filter combination: cursor pages and totals equal brute force."""
    items = stored_requests()
    for user, subject_type, status in itertools.product(users, SUBJECT_TYPES, STATUSES):
        for attribute, fetch in list_fetchers(user, subject_type, status, page_size).items():
            truth = expected(items, attribute, user, subject_type, status)
            found, totals = walk(fetch, "requestId")
            assert found == truth, (user, attribute, subject_type, status)
            assert set(totals) == {len(truth)}, (user, attribute, subject_type, status)
    for listing_id, status in itertools.product(listing_ids, STATUSES):
        truth = expected(items, "subjectId", listing_id, None, status)

        def of_listing(cursor: str | None, listing_id: str = listing_id, status: str | None = status) -> Any:
            query = ListingRequestQuery(pageSize=page_size, status=status, cursor=cursor)  # type: ignore[arg-type]
            return requests.list_for_listing(Caller(user_id=owner), listing_id, query)

        found, totals = walk(of_listing, "requestId")
        assert found == truth, (listing_id, status)
        assert set(totals) == {len(truth)}, (listing_id, status)


# --- property: random histories equal brute force ------------------------------------------


@given(
    plan=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 3), st.sampled_from([None, "ACCEPTED", "REJECTED"])),
        max_size=12,
    ),
    page_size=st.integers(1, 4),
    subject_type=st.sampled_from(SUBJECT_TYPES),
    status=st.sampled_from(STATUSES),
)
@settings(max_examples=moto_examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_cursor_pages_of_every_request_list_equal_brute_force(
    aws: dict[str, str], aws_resources: Resources, plan: list[tuple[int, int, int, str | None]], page_size: int,
    subject_type: str | None, status: str | None,
) -> None:
    """Random requests (two listings and a profile of one owner, three requesters, colliding
    creation times, random decisions): for one random filter combination and page size, the
    cursor pages of every sent, received and listing list concatenate to the brute-force list,
    every page's total is its length, and ``page=2`` without a cursor is its second slice."""
    reset(aws_resources)  # each example on empty tables: the writes' cost grows with what the tables hold
    run = uuid.uuid4().hex[:8]
    owner = make_user(f"Owner{run}").user_id
    requesters = [make_user(f"Req{run}{n}").user_id for n in range(3)]
    now = ["2026-05-01T00:00:00.000Z"]
    with frozen_clock(now):
        listing_ids = [active_listing(owner, run, n) for n in range(2)]
        for requester, subject, slot, decision in plan:
            now[0] = f"2026-05-01T00:00:0{slot}.000Z"
            try:
                if subject < 2:
                    request_id = send_match(requesters[requester], listing_ids[subject])
                else:
                    request_id = send_profile(requesters[requester], owner)
            except errors.Conflict:
                continue  # this requester already asked about this subject
            if decision is not None:
                now[0] = "2026-05-01T00:00:09.000Z"
                decide(owner, request_id, decision)
    items = stored_requests()
    for user in [*requesters, owner]:
        for attribute, fetch in list_fetchers(user, subject_type, status, page_size).items():
            truth = expected(items, attribute, user, subject_type, status)
            found, totals = walk(fetch, "requestId")
            assert found == truth
            assert set(totals) == {len(truth)}
            query = RequestListQuery(page=2, pageSize=page_size, subjectType=subject_type, status=status)  # type: ignore[arg-type]
            offset = (requests.list_sent if attribute == "requesterId" else requests.list_received)(Caller(user_id=user), query)
            assert [r.requestId for r in offset.requests] == truth[page_size : 2 * page_size]
    for listing_id in listing_ids:
        truth = expected(items, "subjectId", listing_id, None, status)
        found, totals = walk(lambda c, lid=listing_id: requests.list_for_listing(  # type: ignore[misc]
            Caller(user_id=owner), lid, ListingRequestQuery(pageSize=page_size, status=status, cursor=c)), "requestId")  # type: ignore[arg-type]
        assert found == truth
        assert set(totals) == {len(truth)}


# --- counters under status changes -----------------------------------------------------


def test_totals_stay_exact_through_accept_reject_and_listing_deletion(aws: dict[str, str]) -> None:
    run = uuid.uuid4().hex[:8]
    owner = make_user("Owner").user_id
    requesters = [make_user(f"Req{n}").user_id for n in range(4)]
    listing_ids = [active_listing(owner, run, n) for n in range(3)]
    ids = {(r, lid): send_match(r, lid) for r in requesters for lid in listing_ids}
    profile_ids = [send_profile(r, owner) for r in requesters[:2]]
    decide(owner, ids[(requesters[0], listing_ids[0])], "ACCEPTED")
    decide(owner, ids[(requesters[1], listing_ids[0])], "REJECTED")
    decide(owner, profile_ids[0], "ACCEPTED")
    decide(owner, ids[(requesters[2], listing_ids[1])], "ACCEPTED")
    assert_lists_exact([*requesters, owner], owner, listing_ids)
    # Deleting a listing rejects its pending requests: they move from PENDING to REJECTED in every list.
    listing_deletion.delete_listing(Caller(user_id=owner), listing_ids[1])
    assert_lists_exact([*requesters, owner], owner, listing_ids[:1] + listing_ids[2:])
    pending = requests.list_received(Caller(user_id=owner), RequestListQuery(status="PENDING"))  # type: ignore[arg-type]
    assert pending.total == 2 + 4 + 1  # listing 0: two undecided; listing 2: all four; one profile request


def test_totals_stay_exact_under_concurrent_creates_and_double_decisions(aws: dict[str, str]) -> None:
    run = uuid.uuid4().hex[:8]
    owner = make_user("Owner").user_id
    requesters = [make_user(f"Req{n}").user_id for n in range(6)]
    listing_id = active_listing(owner, run, 0)
    created = run_concurrently(6, lambda n: send_match(requesters[n], listing_id))
    assert all(isinstance(r, str) for r in created), created
    # Each request decided twice at once (accept vs reject): exactly one decision wins per request.
    outcomes = run_concurrently(6, lambda n: decide(owner, str(created[n // 2]), "ACCEPTED" if n % 2 else "REJECTED"))
    conflicts = [o for o in outcomes if isinstance(o, errors.Conflict)]
    assert len(conflicts) == 3, outcomes
    assert all(o is None or isinstance(o, errors.Conflict) for o in outcomes), outcomes
    assert_lists_exact([*requesters, owner], owner, [listing_id], page_size=4)


def test_the_same_request_sent_ten_times_at_once_is_counted_once(aws: dict[str, str]) -> None:
    run = uuid.uuid4().hex[:8]
    owner, requester = make_user("Owner").user_id, make_user("Req").user_id
    listing_id = active_listing(owner, run, 0)
    outcomes = run_concurrently(10, lambda _: send_match(requester, listing_id))
    assert sum(isinstance(o, str) for o in outcomes) == 1
    assert requests.list_sent(Caller(user_id=requester), RequestListQuery()).total == 1
    assert requests.list_received(Caller(user_id=owner), RequestListQuery(status="PENDING")).total == 1  # type: ignore[arg-type]


# --- items read follow the page ----------------------------------------------------------


def test_a_page_reads_about_its_page_whatever_the_history(aws: dict[str, str]) -> None:
    run = uuid.uuid4().hex[:8]
    owner, requester = make_user("Owner").user_id, make_user("Req").user_id
    listing_ids = [active_listing(owner, run, n) for n in range(20)]  # four pages of 5: older ones than page 3
    ids = [send_match(requester, lid) for lid in listing_ids]
    decide(owner, ids[0], "ACCEPTED")
    caller = Caller(user_id=requester)
    with counting_reads() as reads:
        first = requests.list_sent(caller, RequestListQuery(pageSize=5))
    assert first.total == 20
    assert len(first.requests) == 5
    assert reads.items <= 5 + 1 + 1  # the page, one look-ahead item, the counter
    with counting_reads() as reads:
        third = requests.list_sent(caller, RequestListQuery(pageSize=5, cursor=first.nextCursor))
    assert reads.items <= 5 + 1 + 1
    assert [r.requestId for r in third.requests] == newest_first(ids)[5:10]
    with counting_reads() as reads:
        accepted = requests.list_sent(caller, RequestListQuery(pageSize=5, status="ACCEPTED"))  # type: ignore[arg-type]
    assert [r.requestId for r in accepted.requests] == [ids[0]]
    assert accepted.total == 1
    assert reads.items <= 1 + 1  # its one match and the counter (not the 20 requests)
    with counting_reads() as reads:
        none = requests.list_sent(caller, RequestListQuery(pageSize=5, status="REJECTED"))  # type: ignore[arg-type]
    assert none.requests == []
    assert none.total == 0
    assert none.nextCursor is None
    assert reads.items <= 1
    with counting_reads() as reads:
        listing = requests.list_for_listing(Caller(user_id=owner), listing_ids[0], ListingRequestQuery(pageSize=5))
    assert listing.total == 1
    assert reads.items <= 1 + 1 + 1
    with counting_reads() as reads:
        offset = requests.list_sent(caller, RequestListQuery(page=3, pageSize=5))
    assert [r.requestId for r in offset.requests] == newest_first(ids)[10:15]
    assert reads.items <= 15 + 1 + 1  # offset pages pass over the newer pages, never the older ones


def newest_first(ids: list[str]) -> list[str]:
    """``ids`` in list order: newest first, the same creation time by id (descending)."""
    items = {i["requestId"]: i for i in stored_requests()}
    return [i["requestId"] for i in sorted((items[i] for i in ids), key=lambda i: (i["createdAt"], i["requestId"]), reverse=True)]


# --- cursors ---------------------------------------------------------------------------


def test_tampered_or_foreign_cursors_are_a_400_naming_cursor(api: Api, alice: User, bob: User) -> None:
    """Each list (sent, received, conversations) over the same three accepted requests: only reads
    follow the setup, so the lists share it."""
    run = uuid.uuid4().hex[:8]
    listing_ids = [active_listing(alice.user_id, run, n) for n in range(3)]
    for listing_id in listing_ids:
        request_id = send_match(bob.user_id, listing_id)
        decide(alice.user_id, request_id, "ACCEPTED")
    for path in ("/v1/match-requests/mine", "/v1/match-requests/incoming", "/v1/conversations"):
        user = bob if path.endswith("mine") else alice
        first = api.call("GET", f"{path}?pageSize=1", user.key).json
        cursor = first["nextCursor"]
        assert cursor, path
        edited = cursor[:-3] + ("xyz" if not cursor.endswith("xyz") else "abc")
        for query in (f"pageSize=1&cursor={edited}", "pageSize=1&cursor=garbage", f"pageSize=2&cursor={cursor}",
                      f"pageSize=1&subjectType=LISTING&cursor={cursor}"):
            response = api.call("GET", f"{path}?{query}", user.key)
            assert_error(response, 400, "VALIDATION_ERROR")
            assert error_fields(response) == ["cursor"], (path, query)
        other = bob if user is alice else alice
        response = api.call("GET", f"{path}?pageSize=1&cursor={cursor}", other.key)  # another caller's cursor
        assert error_fields(response) == ["cursor"], path
        second = api.call("GET", f"{path}?pageSize=1&cursor={cursor}", user.key).json
        assert second["page"] == 2, path
        assert second["total"] == 3, path


def test_a_listing_cursor_is_bound_to_its_listing_and_status(api: Api, alice: User, bob: User) -> None:
    run = uuid.uuid4().hex[:8]
    carol = make_user("Carol")
    listing_ids = [active_listing(alice.user_id, run, n) for n in range(2)]
    for listing_id in listing_ids:
        send_match(bob.user_id, listing_id)
        send_match(carol.user_id, listing_id)
    first = api.call("GET", f"/v1/match-requests/listing/{listing_ids[0]}?pageSize=1", alice.key).json
    assert first["total"] == 2
    for query in (f"{listing_ids[1]}?pageSize=1&cursor={first['nextCursor']}",
                  f"{listing_ids[0]}?pageSize=1&status=PENDING&cursor={first['nextCursor']}"):
        assert error_fields(api.call("GET", f"/v1/match-requests/listing/{query}", alice.key)) == ["cursor"]
    second = api.call("GET", f"/v1/match-requests/listing/{listing_ids[0]}?pageSize=1&cursor={first['nextCursor']}",
                      alice.key).json
    assert second["nextCursor"] is None
    assert len(second["requests"]) == 1
    assert {first["requests"][0]["requesterId"], second["requests"][0]["requesterId"]} == {bob.user_id, carol.user_id}


# --- conversations ---------------------------------------------------------------------


@given(
    plan=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=8),
    leaves=st.sets(st.integers(0, 3), max_size=2),
    page_size=st.integers(1, 3),
    subject_type=st.sampled_from(SUBJECT_TYPES),
)
@settings(max_examples=moto_examples(5), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_conversation_pages_follow_recent_activity_like_brute_force(
    aws: dict[str, str], aws_resources: Resources, plan: list[tuple[int, int]], leaves: set[int], page_size: int, subject_type: str | None
) -> None:
    """Four conversations (two about listings, two about profiles), messages at colliding
    times, some left: the cursor pages are the brute-force order (updatedAt, id) descending of
    the conversations not left, and every total is exact."""
    reset(aws_resources)  # each example on empty tables
    run = uuid.uuid4().hex[:8]
    me = make_user(f"Me{run}").user_id
    others = [make_user(f"Other{run}{n}").user_id for n in range(4)]
    now = ["2026-06-01T00:00:00.000Z"]
    conversation_ids: list[str] = []
    with frozen_clock(now):
        for n, other in enumerate(others):
            request_id = send_match(other, active_listing(me, run, n)) if n < 2 else send_profile(other, me)
            decisions.decide(Caller(user_id=me), request_id, StatusChange.model_validate({"status": "ACCEPTED"}))
            conversation_ids.append(str(requests.get_request(Caller(user_id=me), request_id).conversationId))
        for index, slot in plan:
            now[0] = f"2026-06-01T00:00:1{slot}.000Z"
            conversations.send_message(Caller(user_id=others[index]), conversation_ids[index], "hi")
        for index in leaves:
            conversations.leave(Caller(user_id=me), conversation_ids[index])
    stored = {c["conversationId"]: c for c in table_items(settings_().CONVERSATIONS_TABLE)}
    mine = [stored[cid] for n, cid in enumerate(conversation_ids) if n not in leaves
            and subject_type in (None, stored[cid]["subjectType"])]
    truth = [c["conversationId"] for c in sorted(mine, key=lambda c: (c["updatedAt"], c["conversationId"]), reverse=True)]
    found, totals = walk(lambda c: conversations.list_conversations(
        Caller(user_id=me), ConversationListQuery(pageSize=page_size, subjectType=subject_type, cursor=c)),  # type: ignore[arg-type]
        "conversationId")
    assert found == truth
    assert set(totals) == {len(truth)}
    for n, other in enumerate(others):  # the other side still lists every conversation (they did not leave)
        listed = conversations.list_conversations(Caller(user_id=other), ConversationListQuery())
        assert [c.conversationId for c in listed.conversations] == [conversation_ids[n]]
        assert listed.total == 1


def test_a_conversation_page_reads_about_its_page(aws: dict[str, str]) -> None:
    run = uuid.uuid4().hex[:8]
    me = make_user("Me").user_id
    others = [make_user(f"Other{n}").user_id for n in range(8)]
    for n, other in enumerate(others):
        decide(me, send_match(other, active_listing(me, run, n)), "ACCEPTED")
    caller = Caller(user_id=me)
    with counting_reads() as reads:
        first = conversations.list_conversations(caller, ConversationListQuery(pageSize=3))
    assert first.total == 8
    assert len(first.conversations) == 3
    assert reads.items <= 3 + 1 + 3 + 1  # members + look-ahead, the page's conversations, the counter
    with counting_reads() as reads:
        second = conversations.list_conversations(caller, ConversationListQuery(pageSize=3, cursor=first.nextCursor))
    assert reads.items <= 3 + 1 + 3 + 1
    assert len(second.conversations) == 3
    with counting_reads() as reads:
        profiles = conversations.list_conversations(caller, ConversationListQuery(subjectType="PROFILE"))  # type: ignore[arg-type]
    assert profiles.total == 0
    assert profiles.conversations == []
    assert reads.items <= 1


# --- backfill of data written before the list indexes ---------------------------------------


def test_backfill_indexes_and_counts_requests_and_conversations_written_before(aws: dict[str, str]) -> None:
    run = uuid.uuid4().hex[:8]
    owner = make_user("Owner").user_id
    requesters = [make_user(f"Req{n}").user_id for n in range(3)]
    listing_ids = [active_listing(owner, run, n) for n in range(2)]
    for requester in requesters:
        for listing_id in listing_ids:
            send_match(requester, listing_id)
    decide(owner, send_profile(requesters[0], owner), "ACCEPTED")
    decide(owner, send_match(requesters[0], active_listing(owner, run, 9)), "REJECTED")
    config = settings_()
    # As if written before the list indexes existed: no list index attributes, a stray counter, and
    # the counters in the SearchIndex table (before they had a table of their own), one of them wrong.
    for item in table_items(config.REQUESTS_TABLE):
        storage.put(config.REQUESTS_TABLE, {k: v for k, v in item.items()
                                            if k not in ("newest",) and not k.startswith(("sent", "received", "subjectStatus"))})
    for item in table_items(config.CONVERSATION_MEMBERS_TABLE):
        storage.put(config.CONVERSATION_MEMBERS_TABLE, {k: v for k, v in item.items() if k not in ("recent", "memberType")})
    legacy = [item for item in table_items(config.COUNTERS_TABLE) if str(item["pk"]).startswith(lists_backfill.COUNTER_PREFIXES)]
    for item in legacy:
        storage.delete(config.COUNTERS_TABLE, {"pk": item["pk"], "sk": item["sk"]})
        storage.put(config.SEARCH_INDEX_TABLE, {**item, "n": int(item.get("n", 0)) + 1})
    storage.put(config.COUNTERS_TABLE, {"pk": "count#requests#sent#usr_gone", "sk": "0", "n": 3})
    assert requests.list_sent(Caller(user_id=requesters[0]), RequestListQuery()).requests == []
    done = lists_backfill.backfill()
    assert done["movedCounters"] == len(legacy) > 0
    assert not [i for i in table_items(config.SEARCH_INDEX_TABLE) if str(i["pk"]).startswith("count#")]
    assert done["requests"] == 8
    assert done["reindexedRequests"] == 8
    assert done["members"] == 2
    assert done["reindexedMembers"] == 2
    assert done["deletedCounters"] == 1
    assert_lists_exact([*requesters, owner], owner, listing_ids)
    listed = conversations.list_conversations(Caller(user_id=owner), ConversationListQuery())
    assert listed.total == 1
    assert len(listed.conversations) == 1
    assert lists_backfill.backfill()["reindexedRequests"] == 0  # idempotent


def test_a_cursor_still_continues_after_its_last_item_left_the_list(aws: dict[str, str]) -> None:
    """The cursor holds a position, not an item: deciding the last request of a PENDING page
    (it leaves the PENDING list) does not disturb the next page."""
    run = uuid.uuid4().hex[:8]
    owner, requester = make_user("Owner").user_id, make_user("Req").user_id
    ids = [send_match(requester, active_listing(owner, run, n)) for n in range(5)]
    caller = Caller(user_id=owner)
    first = requests.list_received(caller, RequestListQuery(pageSize=2, status="PENDING"))  # type: ignore[arg-type]
    order = newest_first(ids)
    assert [r.requestId for r in first.requests] == order[:2]
    decide(owner, order[1], "ACCEPTED")
    second = requests.list_received(caller, RequestListQuery(pageSize=2, status="PENDING", cursor=first.nextCursor))  # type: ignore[arg-type]
    assert [r.requestId for r in second.requests] == order[2:4]
    assert second.total == 4


def test_a_chunked_listing_deletion_moves_the_counts_of_every_chunk(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rejections spread over several transactions (chunks of 2 after a first of 1), one
    request decided before the deletion: every list and total still equals brute force."""
    monkeypatch.setattr(listing_deletion, "FIRST_CHUNK", 1)
    monkeypatch.setattr(listing_deletion, "CHUNK", 2)
    run = uuid.uuid4().hex[:8]
    owner = make_user("Owner").user_id
    requesters = [make_user(f"Req{n}").user_id for n in range(5)]
    listing_id, kept = active_listing(owner, run, 0), active_listing(owner, run, 1)
    ids = [send_match(r, listing_id) for r in requesters]
    send_match(requesters[0], kept)
    decide(owner, ids[2], "ACCEPTED")
    listing_deletion.delete_listing(Caller(user_id=owner), listing_id)
    assert_lists_exact([*requesters, owner], owner, [kept], page_size=3)  # one rejected, three PENDING
    assert handlers.handle_outbox_batch(stream_event(*events("listing.deleted"))) == {"batchItemFailures": []}
    assert {i["status"] for i in stored_requests() if i["subjectId"] == listing_id} == {"ACCEPTED", "REJECTED"}
    assert_lists_exact([*requesters, owner], owner, [kept], page_size=3)
    rejected = requests.list_received(Caller(user_id=owner), RequestListQuery(status="REJECTED"))  # type: ignore[arg-type]
    assert rejected.total == 4
