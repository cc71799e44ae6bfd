"""Listing posting lists kept from the Listings stream (issue 13): create, update, pause, resume,
delete, replayed and out-of-order records, chunked changes of long listings (in-process moto)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from chalicelib import typo_dictionary
from chalicelib.config import settings
from chalicelib.listings.search.postings import NAMESPACE, number_list, posting_keys, stem_list, value_list, word_list
from chalicelib.search import postings
from tests.integration.conftest import Api, User
from tests.integration.helpers import (
    activate,
    create_listing,
    index_listings,
    listing_stream_records,
    search_index_items,
    table_items,
)


def _filed() -> tuple[set[tuple[str, str]], dict[str, int]]:
    """The posting entries and the non-zero list sizes in the SearchIndex table now."""
    items = search_index_items()
    entries = {(pk, sk) for pk, sk in items if pk.startswith(f"{NAMESPACE}#")}
    sizes = {pk.removeprefix("size|"): int(i["n"]) for (pk, _), i in items.items() if pk.startswith(f"size|{NAMESPACE}#") and int(i["n"])}
    return entries, sizes


def _expected() -> tuple[set[tuple[str, str]], dict[str, int]]:
    """The entries and sizes the Listings table's current items call for (brute force)."""
    keys = {k for item in table_items(settings().LISTINGS_TABLE) for k in posting_keys(item)}
    return {(k.list_id, k.sort) for k in keys}, dict(Counter(k.list_id for k in keys))


def _assert_in_sync() -> None:
    assert _filed() == _expected()


def _wipe_postings() -> None:
    """Delete every posting item (entries, sizes, states), as if the consumer had never run."""
    from chalicelib import storage

    for pk, sk in search_index_items():
        if pk.startswith((f"{NAMESPACE}#", "size|", "state|")):
            storage.delete(settings().SEARCH_INDEX_TABLE, {"pk": pk, "sk": sk})


def _members(list_name: str) -> list[str]:
    return [p.item_id for p in postings.read(list_name, 100).postings]


RUST_JOB = {"title": "Rust wizard", "description": "<p>Compilers and tooling</p>", "location": "Berlin",
            "location_lat": "52.52", "location_lng": "13.405", "employmentType": "full_time", "salary": "85000",
            "skills": "python,rust"}


def _lifecycle(api: Api, alice: User, admin: User, runner: Any) -> str:
    """Create, approve, update (new words and values), approve, pause, resume and delete one listing,
    with a second listing ACTIVE throughout; checks the postings after every step."""
    other = create_listing(api, alice, "jobs", "hiring")["id"]
    listing = create_listing(api, alice, "jobs", "hiring", meta=RUST_JOB)["id"]
    runner.drain()
    _assert_in_sync()
    assert _members(word_list("jobs", "rust") or "") == []  # PENDING: filed nowhere

    activate(api, admin, runner, listing, other)
    _assert_in_sync()
    assert _members(word_list("jobs", "rust") or "") == [listing]
    assert _members(word_list("jobs", "compilers") or "") == [listing]  # "compi": the 5-letter cap
    assert _members(stem_list("jobs", "compil")) == [listing]  # the Snowball stem of "compilers"
    # The consumer taught the typo dictionary the listing's words and stems.
    assert typo_dictionary.corrections(NAMESPACE, ["jobs"], ["compliers"]) == {"compliers": ["compilers", "compil"]}
    assert _members(value_list("jobs", "skills", "rust")) == [listing]
    assert set(_members(value_list("jobs", "employmentType", "full_time"))) == {listing, other}
    assert _members(number_list("jobs", "salary")) == [listing]

    changed = {**RUST_JOB, "title": "Zig wizard", "salary": "90000", "skills": "go"}
    assert api.call("PATCH", f"/v1/listings/{listing}", alice.key, {"meta": changed}).status_code == 200
    runner.drain()
    _assert_in_sync()
    assert _members(word_list("jobs", "wizard") or "") == []  # PENDING again: out of every list

    activate(api, admin, runner, listing)
    _assert_in_sync()
    assert _members(word_list("jobs", "zig") or "") == [listing]
    assert _members(word_list("jobs", "rust") or "") == []
    assert _members(value_list("jobs", "skills", "go")) == [listing]
    assert postings.sizes([value_list("jobs", "skills", "rust"), value_list("jobs", "skills", "go")]) == {
        value_list("jobs", "skills", "rust"): 0, value_list("jobs", "skills", "go"): 1}

    assert api.call("PATCH", f"/v1/listings/{listing}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    runner.drain()
    _assert_in_sync()
    assert _members(word_list("jobs", "zig") or "") == []
    assert api.call("PATCH", f"/v1/listings/{listing}/status", alice.key, {"status": "ACTIVE"}).status_code == 200
    runner.drain()
    _assert_in_sync()
    assert _members(word_list("jobs", "zig") or "") == [listing]

    assert api.call("DELETE", f"/v1/listings/{listing}", alice.key).status_code == 200
    runner.drain()
    _assert_in_sync()
    assert _members(word_list("jobs", "zig") or "") == []
    version, keys = postings.applied_keys(NAMESPACE, listing)
    assert keys == set()
    assert version >= 6
    return listing


def test_postings_follow_create_update_pause_resume_and_delete(api: Api, alice: User, admin: User, runner: Any) -> None:
    _lifecycle(api, alice, admin, runner)


def test_replayed_and_out_of_order_records_change_nothing(api: Api, alice: User, admin: User, runner: Any) -> None:
    _lifecycle(api, alice, admin, runner)
    records = listing_stream_records()
    assert len(records) == 9  # 2 creates, 3 approvals, update, pause, resume, delete
    settled = search_index_items()

    assert index_listings(records) == {"batchItemFailures": []}  # the whole stream replayed
    assert index_listings(records[::-1]) == {"batchItemFailures": []}  # and backwards
    assert search_index_items() == settled

    for seed in range(3):  # from scratch, records in a random order: the newest version wins
        _wipe_postings()
        shuffled = random.Random(seed).sample(records, len(records))
        assert index_listings(shuffled) == {"batchItemFailures": []}
        _assert_in_sync()


def test_an_older_record_after_a_newer_one_is_ignored(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice, "jobs", "hiring", meta=RUST_JOB)["id"]
    activate(api, admin, runner, listing)
    active_record = listing_stream_records()[-1]
    assert api.call("PATCH", f"/v1/listings/{listing}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    runner.drain()
    assert _members(word_list("jobs", "rust") or "") == []
    index_listings([active_record])  # the ACTIVE image arrives again, late
    assert _members(word_list("jobs", "rust") or "") == []
    _assert_in_sync()


def test_a_long_listing_is_filed_in_chunks_and_removed_whole(
    api: Api, alice: User, admin: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks of 7 keys instead of 49: the same code path with a seventh of the items (moto copies the
    # whole index table once per item of every transaction, so the 49-key version ran minutes).
    monkeypatch.setattr(postings, "CHUNK_KEYS", 7)
    words = " ".join(f"w{n:03d}x" for n in range(20))  # 20 words, up to 4 prefixes each: over 4 chunks
    listing = create_listing(api, alice, "jobs", "hiring", meta={**RUST_JOB, "description": f"<p>{words}</p>"})["id"]
    activate(api, admin, runner, listing)
    _assert_in_sync()
    _, keys = postings.applied_keys(NAMESPACE, listing)
    assert len(keys) > 4 * postings.CHUNK_KEYS
    assert _members(word_list("jobs", "w019x") or "") == [listing]
    assert api.call("PATCH", f"/v1/listings/{listing}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    runner.drain()
    _assert_in_sync()
    assert postings.applied_keys(NAMESPACE, listing)[1] == set()


def test_the_backfill_files_existing_listings_and_a_second_run_changes_nothing(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    from scripts.search_backfill import backfill

    _lifecycle(api, alice, admin, runner)  # leaves one ACTIVE listing and one deleted
    paused = create_listing(api, alice, "jobs", "hiring", meta=RUST_JOB)["id"]
    activate(api, admin, runner, paused)
    assert api.call("PATCH", f"/v1/listings/{paused}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    runner.drain()
    _wipe_postings()  # as before the first deployment of posting lists
    assert _filed() == (set(), {})
    assert backfill()["postings"] == 2  # the ACTIVE and the PAUSED listing (filed under nothing, at its version)
    _assert_in_sync()
    assert backfill()["postings"] == 0  # every listing is at its version already
    _assert_in_sync()
    index_listings(listing_stream_records())  # the whole stream replayed over the backfill: nothing moves
    _assert_in_sync()
