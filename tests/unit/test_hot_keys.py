"""bench/hot_keys.py's billing rules: item sizes, capacity units, index writes and the before-sharding view."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hot_keys() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hot_keys_bench", ROOT / "bench" / "hot_keys.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    saved = list(sys.path)  # the script puts the repository root first on the path
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def test_item_sizes_follow_dynamodbs_rules(hot_keys: ModuleType) -> None:
    # AWS docs "Item sizes and formats": names + values; numbers ~1 byte per 2 significant digits + 1.
    assert hot_keys.item_size({"pk": {"S": "abc"}}) == 2 + 3
    assert hot_keys.value_size({"N": "12345"}) == 4
    assert hot_keys.value_size({"N": "-0.50"}) == 2
    assert hot_keys.value_size({"BOOL": True}) == 1
    assert hot_keys.value_size({"M": {"a": {"S": "xy"}}}) == 3 + 1 + 2 + 1
    assert hot_keys.value_size({"L": [{"S": "x"}, {"NULL": True}]}) == 3 + (1 + 1) + (1 + 1)


def test_capacity_units(hot_keys: ModuleType) -> None:
    assert hot_keys.write_units(10) == 1
    assert hot_keys.write_units(1025) == 2
    assert hot_keys.read_units(4096, consistent=True) == 1
    assert hot_keys.read_units(4097, consistent=False) == 1.0
    assert hot_keys.read_units(100, consistent=False) == 0.5


def _recorder(hot_keys: ModuleType) -> object:
    template = {"Resources": {"ListingsTable": {"Type": "AWS::DynamoDB::Table", "Properties": {
        "KeySchema": [{"AttributeName": "listingId", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [{"IndexName": "pendingReview", "Projection": {"ProjectionType": "ALL"}, "KeySchema": [
            {"AttributeName": "pendingQueue", "KeyType": "HASH"}, {"AttributeName": "pendingSort", "KeyType": "RANGE"}]}],
    }}}}
    recorder = hot_keys.Recorder("http://127.0.0.1:1", hot_keys.schemas(template))
    recorder.phase = "approvals"
    return recorder


def test_a_write_bills_the_item_and_each_index_entry_it_adds_or_removes(hot_keys: ModuleType) -> None:
    recorder = _recorder(hot_keys)
    schema = recorder.tables["ListingsTable"]  # type: ignore[attr-defined]
    key = {"listingId": {"S": "lst_01ABCDEFGHJKMNPQRS"}}
    pending = {**key, "pendingQueue": {"S": "PENDING"}, "pendingSort": {"S": "2026#1"}}
    recorder._count_write(schema, key, None, pending, True)  # type: ignore[attr-defined]  # created in a transaction
    recorder._count_write(schema, key, pending, key, False)  # type: ignore[attr-defined]  # decided: leaves the queue
    recorder._count_write(schema, key, key, key, False)  # type: ignore[attr-defined]  # a refused condition
    units = dict(recorder.units)  # type: ignore[attr-defined]
    assert units[("approvals", "ListingsTable.pendingReview PENDING")] == [0.0, 2.0]  # added, then removed
    assert units[("approvals", "ListingsTable lst_01ABCDEFGHJKMNPQRS")] == [0.0, 2 + 1 + 1]


def test_query_partition_is_read_from_the_key_condition(hot_keys: ModuleType) -> None:
    recorder = _recorder(hot_keys)
    index = recorder.tables["ListingsTable"].gsis["pendingReview"]  # type: ignore[attr-defined]
    body = {"KeyConditionExpression": "#p = :p AND pendingSort > :s", "ExpressionAttributeNames": {"#p": "pendingQueue"},
            "ExpressionAttributeValues": {":p": {"S": "PENDING"}, ":s": {"S": "x"}}}
    assert recorder._query_partition(body, index) == "PENDING"  # type: ignore[attr-defined]


def test_the_before_view_merges_write_shards_and_counter_copies(hot_keys: ModuleType) -> None:
    assert hot_keys.unsharded("ListingsTable.activeByCategoryShard jobs#3") == "ListingsTable.activeByCategoryShard jobs"
    assert hot_keys.unsharded("SearchIndexTable count#listings#jobs#1#0") == "SearchIndexTable count#listings#jobs"
    assert hot_keys.unsharded("UsersTable.bySearchShard S5") == "UsersTable.bySearchShard S"
    assert hot_keys.unsharded("SearchIndexTable listings#jobs#q#ba") == "SearchIndexTable listings#jobs#q#ba"


def test_known_keys_are_held_under_a_whole_partition(hot_keys: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(hot_keys.KNOWN_OVER, "ListingsTable.activeByCategoryShard", "a reason")
    known = hot_keys.Projection("ListingsTable.activeByCategoryShard jobs#0", 2000.0, 0.0)
    assert known.over
    assert known.known
    assert not known.failed
    assert hot_keys.Projection("ListingsTable.activeByCategoryShard jobs#0", 3001.0, 0.0).failed
    # the review queue is sharded now: it is held under half a partition like any key
    assert hot_keys.Projection("ListingsTable.pendingReview PENDING#1", 0.0, 501.0).failed
    assert hot_keys.Projection("SearchIndexTable listings#jobs#q#ba", 0.0, 501.0).failed
    assert not hot_keys.Projection("SearchIndexTable listings#jobs#q#ba", 1500.0, 500.0).failed
