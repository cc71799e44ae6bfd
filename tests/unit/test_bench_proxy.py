"""The recording proxy's billing rules (bench/proxy.py: item sizes, capacity units, index writes, round trips)
and bench/hot_keys.py's before-sharding view."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.script_modules import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hot_keys() -> ModuleType:
    return load_script("bench/hot_keys.py", "hot_keys_bench")


@pytest.fixture(scope="module")
def proxy(hot_keys: ModuleType) -> ModuleType:
    """bench/proxy.py, as bench/hot_keys.py imported it."""
    return sys.modules["bench.proxy"]


def test_item_sizes_follow_dynamodbs_rules(proxy: ModuleType) -> None:
    # AWS docs "Item sizes and formats": names + values; numbers ~1 byte per 2 significant digits + 1.
    assert proxy.item_size({"pk": {"S": "abc"}}) == 2 + 3
    assert proxy.value_size({"N": "12345"}) == 4
    assert proxy.value_size({"N": "-0.50"}) == 2
    assert proxy.value_size({"BOOL": True}) == 1
    assert proxy.value_size({"M": {"a": {"S": "xy"}}}) == 3 + 1 + 2 + 1
    assert proxy.value_size({"L": [{"S": "x"}, {"NULL": True}]}) == 3 + (1 + 1) + (1 + 1)


def test_capacity_units(proxy: ModuleType) -> None:
    assert proxy.write_units(10) == 1
    assert proxy.write_units(1025) == 2
    assert proxy.read_units(4096, consistent=True) == 1
    assert proxy.read_units(4097, consistent=False) == 1.0
    assert proxy.read_units(100, consistent=False) == 0.5


def _recorder(proxy: ModuleType) -> object:
    template = {"Resources": {"ListingsTable": {"Type": "AWS::DynamoDB::Table", "Properties": {
        "KeySchema": [{"AttributeName": "listingId", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [{"IndexName": "pendingReview", "Projection": {"ProjectionType": "ALL"}, "KeySchema": [
            {"AttributeName": "pendingQueue", "KeyType": "HASH"}, {"AttributeName": "pendingSort", "KeyType": "RANGE"}]}],
    }}}}
    recorder = proxy.Recorder("http://127.0.0.1:1", proxy.schemas(template))
    recorder.phase = "approvals"
    return recorder


def test_a_write_bills_the_item_and_each_index_entry_it_adds_or_removes(proxy: ModuleType) -> None:
    recorder = _recorder(proxy)
    schema = recorder.tables["ListingsTable"]  # type: ignore[attr-defined]
    key = {"listingId": {"S": "lst_01ABCDEFGHJKMNPQRS"}}
    pending = {**key, "pendingQueue": {"S": "PENDING"}, "pendingSort": {"S": "2026#1"}}
    recorder._count_write(schema, key, None, pending, True)  # type: ignore[attr-defined]  # created in a transaction
    recorder._count_write(schema, key, pending, key, False)  # type: ignore[attr-defined]  # decided: leaves the queue
    recorder._count_write(schema, key, key, key, False)  # type: ignore[attr-defined]  # a refused condition
    units = dict(recorder.units)  # type: ignore[attr-defined]
    assert units[("approvals", "ListingsTable.pendingReview PENDING")] == [0.0, 2.0]  # added, then removed
    assert units[("approvals", "ListingsTable lst_01ABCDEFGHJKMNPQRS")] == [0.0, 2 + 1 + 1]


def test_query_partition_is_read_from_the_key_condition(proxy: ModuleType) -> None:
    recorder = _recorder(proxy)
    index = recorder.tables["ListingsTable"].gsis["pendingReview"]  # type: ignore[attr-defined]
    body = {"KeyConditionExpression": "#p = :p AND pendingSort > :s", "ExpressionAttributeNames": {"#p": "pendingQueue"},
            "ExpressionAttributeValues": {":p": {"S": "PENDING"}, ":s": {"S": "x"}}}
    assert recorder._query_partition(body, index) == "PENDING"  # type: ignore[attr-defined]


def test_the_before_view_merges_write_shards_and_counter_copies(hot_keys: ModuleType) -> None:
    assert hot_keys.unsharded("ListingsTable.activeByCategoryShard jobs#3") == "ListingsTable.activeByCategoryShard jobs"
    assert hot_keys.unsharded("CountersTable count#listings#jobs#1#0") == "CountersTable count#listings#jobs"
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


def test_calls_that_overlap_in_time_count_as_one_round_trip(proxy: ModuleType) -> None:
    call = proxy.Call
    # two sequential calls, then three in parallel (one overlapping the next through a chain), then one
    calls = [call("GetItem", 0.0, 1.0), call("Query", 1.5, 2.0), call("Query", 3.0, 4.0), call("Query", 3.1, 4.5),
             call("Query", 4.4, 5.0), call("BatchGetItem", 6.0, 7.0)]
    assert proxy.round_trips(calls) == 4
    assert proxy.round_trips(reversed(calls)) == 4
    assert proxy.round_trips([]) == 0


def test_a_window_sums_the_calls_that_arrived_in_it(proxy: ModuleType) -> None:
    call = proxy.Call
    calls = [call("Query", 0.5, 0.9, items=30, rcu=2.5), call("BatchGetItem", 1.0, 1.2, items=20, rcu=10.0),
             call("Query", 1.1, 1.3, items=5, rcu=0.5), call("PutItem", 5.0, 5.1, wcu=1.0)]
    cost = proxy.attribute(calls, 0.0, 2.0)
    assert (cost.calls, cost.round_trips, cost.items, cost.rcu, cost.wcu) == (3, 2, 55, 13.0, 0.0)


def test_items_read_per_operation(proxy: ModuleType) -> None:
    assert proxy.items_read("Query", {"Items": [{}], "ScannedCount": 7}) == 7
    assert proxy.items_read("BatchGetItem", {"Responses": {"a": [{}, {}], "b": [{}]}}) == 3
    assert proxy.items_read("GetItem", {}) == 0
    assert proxy.items_read("GetItem", {"Item": {"pk": {"S": "x"}}}) == 1
    assert proxy.items_read("TransactGetItems", {"Responses": [{"Item": {"pk": {"S": "x"}}}, {}]}) == 1


def test_without_images_an_update_of_a_table_without_indexes_is_billed_by_the_item_it_leaves(proxy: ModuleType) -> None:
    template = {"Resources": {"SearchIndexTable": {"Type": "AWS::DynamoDB::Table", "Properties": {
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]}}}}
    recorder = proxy.Recorder("http://127.0.0.1:1", proxy.schemas(template), images=False)
    recorder.phase = "approvals"
    key = {"pk": {"S": "listings.v8|jobs|v|p"}, "sk": {"S": "python"}}
    reads: list[dict[str, object]] = []

    def get_item(table: str, wanted: dict[str, object]) -> dict[str, object]:
        reads.append(wanted)
        return {**key, "n": {"N": "3"}}

    recorder._get_item = get_item  # type: ignore[attr-defined]  # the embedded AWS's answer after the write
    body = {"TableName": "SearchIndexTable", "Key": key, "UpdateExpression": "ADD n :d"}
    answer = recorder._handle_write("UpdateItem", body, lambda: (200, [], b"{}"))  # type: ignore[attr-defined]
    assert answer[0] == 200
    assert reads == [key]  # the new image only, no old one read
    assert dict(recorder.units)[("approvals", "SearchIndexTable listings.v8|jobs|v|p")] == [0.0, 1.0]  # type: ignore[attr-defined]
