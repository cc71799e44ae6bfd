"""The request rules (:mod:`chalicelib.match_requests.service`) over in-memory fakes: no moto, milliseconds.

The fake commit (tests/unit/fakes/match_requests.py) writes a new request unless its id exists,
and fails the items a test names in ``refuse`` (a block, the listing's or profile's guard, the
quota): the conditions themselves are covered by tests/integration/test_requests.py and test_blocks.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel import errors
from chalicelib.listings import service as listing_service
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.status import ListingStatus
from chalicelib.match_requests import repository, service
from chalicelib.match_requests.models import (
    ListingRequestQuery,
    MatchRequest,
    MatchRequestCreate,
    ProfileRequestCreate,
    RequestListQuery,
    RequestStatus,
)
from chalicelib.match_requests.ports import Ports, RequestsRepository
from chalicelib.persistence.transactions import Transaction
from chalicelib.rate_limits.service import TRANSACTION_ITEM
from tests.clocks import distinct_milliseconds
from tests.unit.fakes.match_requests import FakeRequests
from tests.unit.fakes.people import FakeUsers, caller, user_record

ALICE, BOB, CAROL = caller("usr_alice"), caller("usr_bob"), caller("usr_carol")


def _listing(listing_id: str, owner_id: str, status: ListingStatus = ListingStatus.ACTIVE) -> ListingRecord:
    return {"listingId": listing_id, "ownerId": owner_id, "categoryKey": "jobs", "roleKey": "hiring", "title": f"Job {listing_id}",
            "meta": {"title": f"Job {listing_id}"}, "channels": ["telegram"], "webhookIds": [], "status": status, "version": 1,
            "searchText": "", "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"}


@pytest.fixture
def store() -> Iterator[FakeRequests]:
    users = FakeUsers(user_record("usr_alice"), user_record("usr_bob", ["telegram", "email"]), user_record("usr_carol", []),
                      user_record("usr_dora", requestPolicy={"minVerifiedLevel": 2}),
                      user_record("usr_erin", requestPolicy={"acceptingRequests": False}))
    fake = FakeRequests(users, _listing("lst_bob", "usr_bob"), _listing("lst_new", "usr_bob", ListingStatus.PENDING))
    previous = service.use_ports(Ports(repository=fake, commit=fake.commit))
    listings_before = listing_service.use_ports(replace(listing_service.DEFAULT_PORTS, blocks=fake.blocks))
    yield fake
    service.use_ports(previous)
    listing_service.use_ports(listings_before)


def _match(who: Caller = ALICE, listing_id: str = "lst_bob", channels: tuple[str, ...] = ("telegram",)) -> MatchRequest:
    return service.create_match_request(who, MatchRequestCreate.model_validate(
        {"listingId": listing_id, "message": "Hello", "channels": list(channels)}))


def _profile(who: Caller = ALICE, user_id: str = "usr_bob", channel: str = "telegram") -> MatchRequest:
    return service.create_profile_request(who, ProfileRequestCreate.model_validate(
        {"userId": user_id, "message": "Hello", "channel": channel}))


def test_the_real_modules_satisfy_the_ports() -> None:
    _r: RequestsRepository = repository
    assert Ports(repository=repository, commit=Transaction.commit) == service.DEFAULT_PORTS


def test_a_match_request_is_pending_and_written_with_its_guard_counters_event_block_check_and_quota(store: FakeRequests) -> None:
    sent = _match()
    assert (sent.status, sent.recipientId, sent.listingTitle) == (RequestStatus.PENDING, "usr_bob", "Job lst_bob")
    names = store.committed[0]
    assert {"request", "listing", "event", "block", TRANSACTION_ITEM} <= set(names)
    assert any(n.startswith("counters.") for n in names)


def test_one_request_per_requester_and_listing_ever(store: FakeRequests) -> None:
    _match()
    with pytest.raises(errors.Conflict, match="already sent a match request"):
        _match()
    assert len(store.requests) == 1


@pytest.mark.parametrize(("who", "listing_id", "error"), [
    (BOB, "lst_bob", errors.Forbidden),  # one's own listing
    (ALICE, "lst_new", errors.NotFound),  # not ACTIVE
    (ALICE, "lst_gone", errors.NotFound),
])
def test_a_match_request_needs_someone_elses_active_listing(
    store: FakeRequests, who: Caller, listing_id: str, error: type[errors.DomainError]
) -> None:
    with pytest.raises(error):
        _match(who, listing_id)
    assert store.requests == {}


def test_a_match_request_offers_only_connected_channels(store: FakeRequests) -> None:
    with pytest.raises(errors.RuleViolation) as raised:
        _match(channels=("telegram", "email"))
    assert [d.field for d in raised.value.details or []] == ["channels"]


@pytest.mark.parametrize(("refused", "error"), [
    ("block", errors.Blocked),
    ("listing", errors.NotFound),  # the listing stopped being ACTIVE meanwhile
    (TRANSACTION_ITEM, errors.RateLimited),
])
def test_a_failed_condition_at_commit_maps_to_its_error_and_writes_nothing(
    store: FakeRequests, refused: str, error: type[errors.DomainError]
) -> None:
    store.refuse = {refused}
    with pytest.raises(error):
        _match()
    assert store.requests == {}


def test_a_profile_request_uses_one_of_the_targets_active_channels(store: FakeRequests) -> None:
    assert _profile().channels == ["telegram"]
    with pytest.raises(errors.RuleViolation) as raised:
        _profile(CAROL, "usr_alice", "email")
    assert [d.field for d in raised.value.details or []] == ["channel"]


@pytest.mark.parametrize(("user_id", "reason"), [
    ("usr_alice", "yourself"),
    ("usr_erin", "not accepting"),
    ("usr_dora", "verification level 2"),
    ("usr_carol", "no active channels"),
])
def test_the_targets_policy_must_admit_the_caller(store: FakeRequests, user_id: str, reason: str) -> None:
    with pytest.raises(errors.Forbidden, match=reason):
        _profile(ALICE, user_id)


def test_a_profile_request_to_an_account_being_erased_is_404(store: FakeRequests) -> None:
    store.users.users["usr_bob"]["erasure"] = {"startedAt": "2026-01-01T00:00:00.000Z"}
    with pytest.raises(errors.NotFound):
        _profile()


def test_a_policy_changed_before_the_commit_is_a_conflict(store: FakeRequests) -> None:
    store.refuse = {"profile"}
    with pytest.raises(errors.Conflict, match="policy or channels changed"):
        _profile()


def test_a_request_is_seen_by_its_two_parties_only(store: FakeRequests) -> None:
    request_id = _match().requestId
    assert service.get_request(ALICE, request_id).requestId == service.get_request(BOB, request_id).requestId == request_id
    for who, wanted in ((CAROL, request_id), (ALICE, "req_unknown")):
        with pytest.raises(errors.NotFound):
            service.get_request(who, wanted)


def test_sent_and_received_lists_page_newest_first_with_exact_totals(store: FakeRequests) -> None:
    with distinct_milliseconds():
        first, second = _match(), _profile()
    sent = service.list_sent(ALICE, RequestListQuery(pageSize=1))
    rest = service.list_sent(ALICE, RequestListQuery(pageSize=1, cursor=sent.nextCursor))
    assert [r.requestId for r in sent.requests + rest.requests] == [second.requestId, first.requestId]
    assert (sent.total, rest.nextCursor) == (2, None)
    profiles = service.list_received(BOB, RequestListQuery.model_validate({"subjectType": "PROFILE"}))
    assert ([r.requestId for r in profiles.requests], profiles.total) == ([second.requestId], 1)


def test_a_listings_requests_are_its_owners_to_read(store: FakeRequests) -> None:
    request_id = _match().requestId
    assert [r.requestId for r in service.list_for_listing(BOB, "lst_bob", ListingRequestQuery()).requests] == [request_id]
    with pytest.raises(errors.Forbidden):
        service.list_for_listing(ALICE, "lst_bob", ListingRequestQuery())
    with pytest.raises(errors.NotFound):  # another user's listing that is not public
        service.list_for_listing(ALICE, "lst_new", ListingRequestQuery())
    store.blocks.pairs.add(("usr_bob", "usr_alice"))
    with pytest.raises(errors.NotFound):  # a block hides the listing as a missing one
        service.list_for_listing(ALICE, "lst_bob", ListingRequestQuery())
