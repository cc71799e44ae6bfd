"""The shared BatchGetItem parts (chalicelib.persistence.batch_reads) and the typed transaction items
(chalicelib.persistence.transact_items)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.persistence import batch_reads, storage
from chalicelib.persistence.record_check import MalformedRecord
from chalicelib.persistence.transact_items import typed
from chalicelib.users.records import record as user_record


def _part(table: str) -> batch_reads.Part[dict[str, Any]]:
    return batch_reads.Part(table, [{"id": "a"}], lambda item: str(item["id"]), dict)


def test_found_files_each_part_under_its_ids_through_the_owners_decoder() -> None:
    users = batch_reads.Part("Users", [{"userId": "usr_1"}], lambda item: str(item["userId"]), user_record)
    other = _part("Other")
    found = batch_reads.Found({"Users": [{"userId": "usr_1", "displayName": "Ada"}], "Other": [{"id": "a"}, {"id": "b"}]})
    assert set(found.of(other)) == {"a", "b"}
    with pytest.raises(MalformedRecord) as caught:  # the users part decodes with the checked record
        found.of(users)
    assert caught.value.field == "verifiedLevel"


def test_two_parts_on_one_table_are_refused_before_any_read() -> None:
    with pytest.raises(ValueError, match="same table"):
        batch_reads.read(_part("Users"), _part("Users"))


def test_a_builders_item_passes_the_shape_check_unchanged() -> None:
    op = storage.update_op("Counters", {"pk": "count#x", "sk": "0"}, "ADD n :d", ExpressionAttributeValues=storage.values(d=1))
    assert typed(op) is op
    assert typed(op)["Update"]["TableName"] == "Counters"


@pytest.mark.parametrize(
    "op",
    [{}, {"Put": {"TableName": "T"}, "Delete": {"TableName": "T"}}, {"Insert": {"TableName": "T"}}, {"Put": {"Item": {}}}],
)
def test_a_malformed_item_is_refused(op: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not a TransactWriteItems element"):
        typed(op)


def test_typed_builders_set_only_the_expressions_given() -> None:
    op = storage.tx_delete("T", {"id": "a"}, condition="attribute_exists(id)")
    assert op == {"Delete": {"TableName": "T", "Key": {"id": {"S": "a"}}, "ConditionExpression": "attribute_exists(id)"}}
    check = storage.tx_check("T", {"id": "a"}, "#s = :v", ExpressionAttributeNames={"#s": "status"})
    assert check["ConditionCheck"]["ExpressionAttributeNames"] == {"#s": "status"}
