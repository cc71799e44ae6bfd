"""Deleting a saved search removes its stored matches: at once unreachable,
then deleted by the ``saved_search.deleted`` event in bounded steps that continue themselves,
reading only what they delete. In-process moto, the local event runner."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.persistence import outbox, storage
from chalicelib.saved_searches import cleanup, handlers, repository
from chalicelib.saved_searches.records import MatchRecord
from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, assert_error, create_listing, table_items
from tests.integration.test_saved_searches import LISBON, MENTORS_NEAR_LISBON, matches, mentor, saved
from tests.integration.webhook_helpers import stream_event


def matches_of(saved_search_id: str) -> list[str]:
    return sorted(m["listingId"] for m in table_items(settings().SAVED_SEARCH_MATCHES_TABLE) if m["savedSearchId"] == saved_search_id)


def deleted_events() -> list[dict[str, Any]]:
    return [e for e in table_items(settings().EVENTS_TABLE) if e["type"] == outbox.SAVED_SEARCH_DELETED]


def store_matches(saved_search_id: str, owner_id: str, count: int) -> list[str]:
    """``count`` match items of a saved search written straight to the table (listing ids lst_000...)."""
    ids = [f"lst_{i:03d}" for i in range(count)]
    for listing_id in ids:
        record: MatchRecord = {"savedSearchId": saved_search_id, "listingId": listing_id, "ownerId": owner_id,
                               "matchedAt": "2026-01-01T00:00:00Z"}
        storage.transact([repository.match_op(record)])
    return ids


def test_deleting_a_search_removes_its_matches_and_entries_and_never_lists_them(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    search = saved(api, alice, MENTORS_NEAR_LISBON)
    kept = saved(api, bob, {"category": "mentoring"})
    mentee = create_listing(api, admin, "mentoring", "mentee", meta=LISBON)  # only bob's search matches it
    first, second = mentor(api, admin, LISBON, "Mentor one"), mentor(api, admin, LISBON, "Mentor two")
    activate(api, admin, runner, mentee["id"], first["id"], second["id"])
    assert matches(api, alice, search["savedSearchId"])["total"] == 2
    assert matches_of(search["savedSearchId"]) == sorted([first["id"], second["id"]])

    assert api.call("DELETE", f"/v1/saved-searches/{search['savedSearchId']}", alice.key).status_code == 200
    # Never listed again, before and after the cleanup ran.
    assert_error(api.call("GET", f"/v1/saved-searches/{search['savedSearchId']}/matches", alice.key), 404, "NOT_FOUND")
    [event] = deleted_events()  # written in the deleting transaction
    assert event["data"] == {"savedSearchId": search["savedSearchId"], "ownerId": alice.user_id}
    runner.drain()
    assert matches_of(search["savedSearchId"]) == []
    assert_error(api.call("GET", f"/v1/saved-searches/{search['savedSearchId']}/matches", alice.key), 404, "NOT_FOUND")
    # Its posting entries went with the deletion; the other search and its matches are untouched.
    postings = table_items(settings().PERCOLATOR_TABLE)
    assert not [p for p in postings if search["savedSearchId"] in repository.entries(p)]
    assert [p for p in postings if kept["savedSearchId"] in repository.entries(p)]
    assert matches_of(kept["savedSearchId"]) == sorted([mentee["id"], first["id"], second["id"]])
    assert matches(api, bob, kept["savedSearchId"])["total"] == 3


def test_a_step_deletes_at_most_its_budget_reading_only_what_it_deletes_and_continues(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cleanup, "PAGE", 3)
    monkeypatch.setattr(cleanup, "BUDGET_PAGES", 2)
    search = saved(api, alice, {"category": "mentoring"})
    store_matches(search["savedSearchId"], alice.user_id, 8)
    reads: list[int] = []
    original = repository.match_listing_ids

    def counted(saved_search_id: str, limit: int) -> tuple[list[str], bool]:
        found = original(saved_search_id, limit)
        reads.append(len(found[0]))
        return found

    monkeypatch.setattr(repository, "match_listing_ids", counted)
    assert cleanup.remove_matches(search["savedSearchId"], alice.user_id) == 6
    assert reads == [3, 3]  # two pages, each deleted; the budget stops the step
    assert len(matches_of(search["savedSearchId"])) == 2
    [continuation] = deleted_events()  # written with the last page's deletions
    assert continuation["data"] == {"savedSearchId": search["savedSearchId"], "ownerId": alice.user_id}

    handlers.handle_outbox_batch(stream_event(continuation))  # the next step, as the stream consumer runs it
    assert matches_of(search["savedSearchId"]) == []
    assert reads == [3, 3, 2]  # it read the 2 it deleted and learned nothing follows: the chain ends
    assert len(deleted_events()) == 1


def test_many_matches_are_all_removed_through_the_event_chain(
    api: Api, alice: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cleanup, "PAGE", 4)
    monkeypatch.setattr(cleanup, "BUDGET_PAGES", 2)
    search, other = saved(api, alice, {"category": "mentoring"}), saved(api, alice, {"category": "jobs"})
    store_matches(search["savedSearchId"], alice.user_id, 30)
    store_matches(other["savedSearchId"], alice.user_id, 3)
    runner.drain()
    assert api.call("DELETE", f"/v1/saved-searches/{search['savedSearchId']}", alice.key).status_code == 200
    runner.drain()
    assert matches_of(search["savedSearchId"]) == []
    assert len(matches_of(other["savedSearchId"])) == 3
    assert len(deleted_events()) == 4  # the deletion's event + 3 continuations of 8 matches per step (30 = 8+8+8+6)


def test_a_replayed_or_late_cleanup_event_is_harmless(api: Api, alice: User, runner: Any) -> None:
    search = saved(api, alice, {"category": "mentoring"})
    store_matches(search["savedSearchId"], alice.user_id, 3)
    assert api.call("DELETE", f"/v1/saved-searches/{search['savedSearchId']}", alice.key).status_code == 200
    runner.drain()
    [event] = deleted_events()
    assert handlers.handle_outbox_batch(stream_event(event)) == {"batchItemFailures": []}
    assert matches_of(search["savedSearchId"]) == []
    assert len(deleted_events()) == 1
