"""The listing rules (:mod:`chalicelib.listings.service`) over in-memory fakes: no moto, milliseconds.

The fakes enforce the real repository's write conditions (tests/unit/fakes/listings.py); the
repository itself, its conditions and its indexes are covered by tests/integration/test_listings.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from chalicelib.kernel import errors
from chalicelib.kernel.pagination import PageQuery
from chalicelib.listings import service
from chalicelib.listings.models import ListingCreate, ListingStatusChange, ListingUpdate
from chalicelib.listings.ports import BlockDirectory, ListingsRepository, Ports, UserDirectory, WebhookDirectory
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.status import ListingStatus
from tests.clocks import distinct_milliseconds
from tests.listing_bodies import listing_body
from tests.unit.fakes.events import event_types
from tests.unit.fakes.listings import FakeListings, FakeWebhooks
from tests.unit.fakes.people import FakeBlocks, FakeUsers, caller, user_record

ALICE, BOB = caller("usr_alice"), caller("usr_bob")


@dataclass
class World:
    """The fakes the rules run on."""

    listings: FakeListings
    users: FakeUsers
    blocks: FakeBlocks


@pytest.fixture
def world() -> Iterator[World]:
    users = FakeUsers(user_record("usr_alice", ["telegram", "email"]), user_record("usr_bob"))
    hooks = FakeWebhooks({"webhookId": "whk_alice", "ownerId": "usr_alice", "name": None, "url": "https://example.com/h",
                          "secret": "whsec_x", "active": True, "failCount": 0, "createdAt": "", "updatedAt": ""})
    fakes = World(FakeListings(users), users, FakeBlocks())
    previous = service.use_ports(Ports(repository=fakes.listings, users=users, webhooks=hooks, blocks=fakes.blocks))
    yield fakes
    service.use_ports(previous)


def _create(who: str = "usr_alice", /, **changes: object) -> str:
    body = ListingCreate.model_validate({**listing_body(), "channels": ["telegram"], **changes})
    return service.create_listing(caller(who), body).id


def _set_status(world: World, listing_id: str, status: ListingStatus) -> None:
    world.listings.items[listing_id]["status"] = status


def test_the_real_modules_satisfy_the_ports() -> None:
    from chalicelib.blocks import api as blocks
    from chalicelib.listings import repository
    from chalicelib.users import api as users
    from chalicelib.webhooks import api as webhooks

    _b: BlockDirectory = blocks
    _r: ListingsRepository = repository
    _u: UserDirectory = users
    _w: WebhookDirectory = webhooks
    assert service.DEFAULT_PORTS.repository is repository


def test_create_stores_a_pending_listing_at_version_1_with_its_submitted_event(world: World) -> None:
    listing = service.create_listing(ALICE, ListingCreate.model_validate({**listing_body(), "webhookIds": ["whk_alice"]}))
    stored = world.listings.items[listing.id]
    assert (listing.status, stored["version"], listing.webhookIds) == (ListingStatus.PENDING, 1, ["whk_alice"])
    assert [e["status"] for e in stored.get("statusHistory") or []] == [ListingStatus.PENDING]
    assert event_types(world.listings.committed_ops) == ["listing.submitted"]


@pytest.mark.parametrize(("changes", "field"), [
    ({"categoryKey": "pets"}, "categoryKey"),
    ({"roleKey": "landlord"}, "roleKey"),
    ({"channels": ["whatsapp"]}, "channels"),
    ({"webhookIds": ["whk_unknown"]}, "webhookIds"),
])
def test_create_names_the_field_that_breaks_a_rule_and_writes_nothing(world: World, changes: dict[str, object], field: str) -> None:
    with pytest.raises(errors.RuleViolation) as raised:
        _create(**changes)
    assert [d.field for d in raised.value.details or []] == [field]
    assert world.listings.items == {}


def test_another_users_webhook_cannot_be_bound(world: World) -> None:
    with pytest.raises(errors.RuleViolation, match="whk_alice"):
        _create("usr_bob", webhookIds=["whk_alice"])


def test_only_active_listings_are_visible_to_others(world: World) -> None:
    listing_id = _create()
    assert service.get_visible(ALICE, listing_id)["listingId"] == listing_id
    with pytest.raises(errors.NotFound):
        service.get_visible(BOB, listing_id)
    _set_status(world, listing_id, ListingStatus.ACTIVE)
    assert service.get_visible(BOB, listing_id)["listingId"] == listing_id


def test_changing_another_users_listing_is_404_unless_it_is_public(world: World) -> None:
    listing_id = _create()
    with pytest.raises(errors.NotFound):
        service.owned(BOB, listing_id)
    _set_status(world, listing_id, ListingStatus.ACTIVE)
    with pytest.raises(errors.Forbidden):
        service.owned(BOB, listing_id)


@pytest.mark.parametrize("blocker", ["usr_alice", "usr_bob"])
def test_a_public_listing_is_404_to_a_user_a_block_separates_from_its_owner(world: World, blocker: str) -> None:
    listing_id = _create()
    _set_status(world, listing_id, ListingStatus.ACTIVE)
    world.blocks.pairs.add((blocker, "usr_bob" if blocker == "usr_alice" else "usr_alice"))
    with pytest.raises(errors.NotFound):
        service.owned(BOB, listing_id)
    assert service.owned(ALICE, listing_id)["listingId"] == listing_id  # the owner is not hidden from herself


def test_new_meta_sends_an_active_listing_back_to_review(world: World) -> None:
    listing_id = _create()
    _set_status(world, listing_id, ListingStatus.ACTIVE)
    updated = service.update_listing(ALICE, listing_id, ListingUpdate.model_validate({"meta": {"title": "Senior engineer"}}))
    assert (updated.status, updated.title, world.listings.items[listing_id]["version"]) == (ListingStatus.PENDING, "Senior engineer", 2)
    assert event_types(world.listings.committed_ops) == ["listing.submitted", "listing.submitted"]


def test_rebinding_channels_keeps_an_active_listing_active_without_a_new_review(world: World) -> None:
    listing_id = _create()
    _set_status(world, listing_id, ListingStatus.ACTIVE)
    updated = service.update_listing(ALICE, listing_id, ListingUpdate.model_validate({"channels": ["email"]}))
    assert (updated.status, updated.channels, world.listings.items[listing_id]["version"]) == (ListingStatus.ACTIVE, ["email"], 2)
    assert event_types(world.listings.committed_ops) == ["listing.submitted"]


@pytest.mark.parametrize("given", ["{}", "same meta", "same channels", "same address spelt with spaces", "same options reordered"])
def test_a_patch_that_changes_nothing_writes_nothing(world: World, given: str) -> None:
    listing_id = _create(meta={**listing_body()["meta"], "skills": "python,aws"})
    stored = world.listings.items[listing_id]
    before, title = dict(stored), stored["meta"]["title"]
    body = {"{}": {}, "same meta": {"meta": {"title": title}}, "same channels": {"channels": stored["channels"]},
            "same address spelt with spaces": {"meta": {"location": f" {stored['meta']['location']}  "}},
            "same options reordered": {"meta": {"skills": "aws,python"}}}
    updated = service.update_listing(ALICE, listing_id, ListingUpdate.model_validate(body[given]))
    assert (updated.status, updated.title) == (ListingStatus.PENDING, title)
    assert world.listings.items[listing_id] == before  # version, updatedAt and status as they were
    assert event_types(world.listings.committed_ops) == ["listing.submitted"]  # the create's only: no new review


def test_rebinding_a_pending_listing_requeues_it_for_its_new_version(world: World) -> None:
    listing_id = _create()
    service.update_listing(ALICE, listing_id, ListingUpdate.model_validate({"channels": ["email"]}))
    assert event_types(world.listings.committed_ops) == ["listing.submitted", "listing.submitted"]


def test_an_update_checks_only_the_lists_it_gives(world: World) -> None:
    listing_id = _create(channels=["telegram", "email"], webhookIds=["whk_alice"])
    stored = world.listings.items[listing_id]
    stored["channels"], stored["webhookIds"] = ["telegram", "discord"], ["whk_deleted"]  # disconnected, deleted since
    updated = service.update_listing(ALICE, listing_id, ListingUpdate.model_validate({"meta": {"title": "Senior engineer"}}))
    assert (updated.channels, updated.webhookIds) == (["telegram"], ["whk_deleted"])  # the view offers connected ones only
    assert world.listings.items[listing_id]["channels"] == ["telegram", "discord"]  # stored as they were
    for given, field in (({"channels": ["discord"]}, "channels"), ({"webhookIds": ["whk_deleted"]}, "webhookIds")):
        with pytest.raises(errors.RuleViolation) as raised:
            service.update_listing(ALICE, listing_id, ListingUpdate.model_validate(given))
        assert [d.field for d in raised.value.details or []] == [field]


def test_an_update_at_a_stale_if_match_version_is_412_and_changes_nothing(world: World) -> None:
    listing_id = _create()
    with pytest.raises(errors.PreconditionFailed):
        service.update_listing(ALICE, listing_id, ListingUpdate.model_validate({"meta": {"title": "New"}}), expected_version=7)
    assert world.listings.items[listing_id]["title"] == "Backend engineer"


class _RacedListings(FakeListings):
    """A listing store where another writer changes the listing between the rule's read and its write."""

    def get(self, listing_id: str, consistent: bool = False) -> ListingRecord | None:
        item = super().get(listing_id, consistent)
        if item is not None:
            self.items[listing_id] = {**item, "version": item["version"] + 1}
        return item


@pytest.mark.parametrize(("expected_version", "error"), [(None, errors.Conflict), (1, errors.PreconditionFailed)])
def test_an_update_raced_by_another_write_is_a_conflict_or_412_with_if_match(
    world: World, expected_version: int | None, error: type[errors.DomainError]
) -> None:
    listing_id = _create()
    raced = _RacedListings(world.users)
    raced.items = dict(world.listings.items)
    service.use_ports(Ports(repository=raced, users=world.users, webhooks=FakeWebhooks(), blocks=world.blocks))
    with pytest.raises(error):
        service.update_listing(ALICE, listing_id, ListingUpdate.model_validate({"meta": {"title": "New"}}), expected_version)


def test_pause_and_resume_move_between_active_and_paused(world: World) -> None:
    listing_id = _create()
    _set_status(world, listing_id, ListingStatus.ACTIVE)
    paused = service.change_status(ALICE, listing_id, ListingStatusChange(status=ListingStatus.PAUSED))
    resumed = service.change_status(ALICE, listing_id, ListingStatusChange(status=ListingStatus.ACTIVE))
    assert (paused.status, resumed.status) == (ListingStatus.PAUSED, ListingStatus.ACTIVE)
    assert [e["status"] for e in world.listings.items[listing_id].get("statusHistory") or []] == [
        ListingStatus.PENDING, ListingStatus.PAUSED, ListingStatus.ACTIVE]


@pytest.mark.parametrize("target", [ListingStatus.PAUSED, ListingStatus.ACTIVE])
def test_a_pending_listing_can_be_neither_paused_nor_resumed(world: World, target: ListingStatus) -> None:
    listing_id = _create()
    with pytest.raises(errors.Conflict, match="only ACTIVE -> PAUSED and PAUSED -> ACTIVE"):
        service.change_status(ALICE, listing_id, ListingStatusChange(status=target))
    assert world.listings.items[listing_id]["status"] == ListingStatus.PENDING


class _ResumedMeanwhile(FakeListings):
    """A listing store where another request resumes the listing between the rule's read and its write."""

    def get(self, listing_id: str, consistent: bool = False) -> ListingRecord | None:
        item = super().get(listing_id, consistent)
        if item is not None and item["status"] == ListingStatus.PAUSED:
            self.items[listing_id] = {**item, "status": ListingStatus.ACTIVE, "version": item["version"] + 1}
        return item


def test_a_resume_that_loses_a_race_to_another_names_the_status_now(world: World) -> None:
    """The 409 of a resume another request made first names the status now (ACTIVE to ACTIVE), not an
    allowed move (PAUSED to ACTIVE) as if it were forbidden."""
    listing_id = _create()
    _set_status(world, listing_id, ListingStatus.PAUSED)
    raced = _ResumedMeanwhile(world.users)
    raced.items = dict(world.listings.items)
    service.use_ports(Ports(repository=raced, users=world.users, webhooks=FakeWebhooks(), blocks=world.blocks))
    with pytest.raises(errors.Conflict, match="Cannot change status from ACTIVE to ACTIVE"):
        service.change_status(ALICE, listing_id, ListingStatusChange(status=ListingStatus.ACTIVE))


def test_a_status_change_at_another_version_is_412(world: World) -> None:
    listing_id = _create()
    _set_status(world, listing_id, ListingStatus.ACTIVE)
    with pytest.raises(errors.PreconditionFailed):
        service.change_status(ALICE, listing_id, ListingStatusChange(status=ListingStatus.PAUSED), expected_version=2)


def test_my_listings_page_newest_first_with_the_exact_total(world: World) -> None:
    with distinct_milliseconds():
        created = [_create() for _ in range(3)]
        _create("usr_bob")
    first = service.list_my_listings(ALICE, PageQuery.model_validate({"pageSize": 2}))
    second = service.list_my_listings(ALICE, PageQuery.model_validate({"pageSize": 2, "cursor": first.nextCursor}))
    assert [x.id for x in first.listings + second.listings] == created[::-1]
    assert (first.total, second.nextCursor) == (3, None)
