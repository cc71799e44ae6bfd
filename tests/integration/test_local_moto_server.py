"""The embedded AWS of the local stack: a cancelled transaction leaves no stream records and no
writes (undone item by item); a transaction repeated with its ClientRequestToken is not applied
twice."""

from __future__ import annotations

import time
import uuid
from typing import Any

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler

from local_stack import moto_server
from local_stack.moto_server import CLIENT_REQUEST_TOKEN_SECONDS, honour_client_request_tokens, undo_cancelled_transactions

# Tests of the local stack's embedded AWS (pyproject.toml, marker embedded_aws).
pytestmark = pytest.mark.embedded_aws


def _client_with_table(name: str, **options: Any) -> Any:
    """A DynamoDB client of the running ``mock_aws`` and a new on-demand table ``name`` keyed by string ``k``."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    dynamodb.create_table(
        TableName=name, KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST", **options,
    )
    return dynamodb


def test_a_stream_iterator_never_reads_the_records_of_a_cancelled_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DynamoDBBackend, "transact_write_items", DynamoDBBackend.transact_write_items)  # undone after
    undo_cancelled_transactions()
    with mock_aws():
        dynamodb = _client_with_table("Events", StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
        arn = dynamodb.describe_table(TableName="Events")["Table"]["LatestStreamArn"]
        streams = boto3.client("dynamodbstreams", region_name="us-east-1", config=Config(account_id_endpoint_mode="disabled"))
        shard_id = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
        dynamodb.put_item(TableName="Events", Item={"k": {"S": "first"}})
        # A consumer takes an iterator; a transaction is cancelled before it reads.
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        with pytest.raises(ClientError, match="TransactionCanceled"):
            dynamodb.transact_write_items(TransactItems=[
                {"Put": {"TableName": "Events", "Item": {"k": {"S": "never written"}}}},
                {"Put": {"TableName": "Events", "Item": {"k": {"S": "first"}}, "ConditionExpression": "attribute_not_exists(k)"}},
            ])
        dynamodb.put_item(TableName="Events", Item={"k": {"S": "second"}})

        records = streams.get_records(ShardIterator=iterator)["Records"]
        assert [r["dynamodb"]["Keys"]["k"]["S"] for r in records] == ["first", "second"]
        numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
        assert numbers == sorted(set(numbers))
        assert dynamodb.get_item(TableName="Events", Key={"k": {"S": "never written"}}).get("Item") is None


def test_a_repeated_transaction_with_the_same_client_request_token_succeeds_without_writing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(DynamoHandler, "transact_write_items", DynamoHandler.transact_write_items)  # undone after
    honour_client_request_tokens()
    with mock_aws():
        dynamodb = _client_with_table("Keys")
        items = [
            {"Put": {"TableName": "Keys", "Item": {"k": {"S": "key"}}, "ConditionExpression": "attribute_not_exists(k)"}},
            {"Update": {"TableName": "Keys", "Key": {"k": {"S": "count"}}, "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        ]
        dynamodb.transact_write_items(TransactItems=items, ClientRequestToken="token-1")
        # botocore's resend after a read timeout: same token, same items -> success, nothing applied twice.
        dynamodb.transact_write_items(TransactItems=items, ClientRequestToken="token-1")
        assert dynamodb.get_item(TableName="Keys", Key={"k": {"S": "count"}})["Item"]["n"] == {"N": "1"}
        # Another token is another call: its condition fails as before.
        with pytest.raises(ClientError, match="TransactionCanceled"):
            dynamodb.transact_write_items(TransactItems=items, ClientRequestToken="token-2")
        assert dynamodb.get_item(TableName="Keys", Key={"k": {"S": "count"}})["Item"]["n"] == {"N": "1"}
        # DynamoDB forgets a token after 10 minutes: past them, the same call is a new one.
        later = time.monotonic() + CLIENT_REQUEST_TOKEN_SECONDS + 1
        monkeypatch.setattr(moto_server.time, "monotonic", lambda: later)
        with pytest.raises(ClientError, match="TransactionCanceled"):
            dynamodb.transact_write_items(TransactItems=items, ClientRequestToken="token-1")


def _dump(dynamodb: object, table: str) -> list[dict[str, object]]:
    """Every item of ``table`` in key order (a test's whole-table view)."""
    items = dynamodb.scan(TableName=table, ConsistentRead=True)["Items"]  # type: ignore[attr-defined]
    return sorted(items, key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


def _operation(kind: str, table: str, pk: str, sk: str, value: int) -> dict[str, object]:
    key = {"pk": {"S": pk}, "sk": {"S": sk}}
    if kind == "Put":
        return {"Put": {"TableName": table, "Item": {**key, "n": {"N": str(value)}, "tags": {"SS": [f"t{value}"]}}}}
    if kind == "Update":
        return {"Update": {"TableName": table, "Key": key, "UpdateExpression": "ADD n :v, tags :t SET seen = :v",
                           "ExpressionAttributeValues": {":v": {"N": str(value)}, ":t": {"SS": [f"u{value}"]}}}}
    if kind == "Delete":
        return {"Delete": {"TableName": table, "Key": key}}
    return {"ConditionCheck": {"TableName": table, "Key": key, "ConditionExpression": "attribute_exists(pk) OR attribute_not_exists(pk)"}}


KEYS = [(pk, sk) for pk in ("a", "b") for sk in ("1", "2", "3")]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    initial=st.dictionaries(st.sampled_from(KEYS), st.integers(0, 9), max_size=len(KEYS)),
    writes=st.lists(st.tuples(st.sampled_from(["Put", "Update", "Delete", "ConditionCheck"]), st.integers(0, 9)),
                    min_size=1, max_size=len(KEYS) - 1),
    order=st.permutations(KEYS),
)
def test_a_cancelled_transaction_leaves_every_item_as_it_was_and_a_committed_one_writes_all(
    aws: dict[str, str], initial: dict[tuple[str, str], int], writes: list[tuple[str, int]], order: list[tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The undo log (``undo_cancelled_transactions``, installed for this test only) restores
    exactly the items of a cancelled transaction: puts over existing items, in-place updates (ADD
    to numbers and sets), deletes and new items alike; the table object itself is never replaced."""
    monkeypatch.setattr(DynamoDBBackend, "transact_write_items", DynamoDBBackend.transact_write_items)  # undone after
    undo_cancelled_transactions()
    items_table, expected_table = f"Items-{uuid.uuid4().hex}", f"Expected-{uuid.uuid4().hex}"  # per example
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    for name in (items_table, expected_table):
        dynamodb.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
        )
        for (pk, sk), value in initial.items():
            dynamodb.put_item(TableName=name, Item={"pk": {"S": pk}, "sk": {"S": sk}, "n": {"N": str(value)}})
    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    table = backend.tables[items_table]
    before = _dump(dynamodb, items_table)
    operations = [_operation(kind, items_table, *key, value) for (kind, value), key in zip(writes, order, strict=False)]
    # The last key of the permutation is untouched by the writes: a condition on it fails.
    failing = {"ConditionCheck": {"TableName": items_table, "Key": {"pk": {"S": order[-1][0]}, "sk": {"S": order[-1][1]}},
                                  "ConditionExpression": "attribute_exists(never)"}}
    with pytest.raises(ClientError, match="TransactionCanceled"):
        dynamodb.transact_write_items(TransactItems=[*operations, failing])
    assert _dump(dynamodb, items_table) == before
    assert backend.tables[items_table] is table

    dynamodb.transact_write_items(TransactItems=operations)
    for operation in operations:  # the same writes one by one, on the twin table
        kind, op = next(iter(operation.items()))
        op = {**op, "TableName": expected_table}
        if kind == "Put":
            dynamodb.put_item(**op)
        elif kind == "Update":
            dynamodb.update_item(**op)
        elif kind == "Delete":
            dynamodb.delete_item(**op)
    assert _dump(dynamodb, items_table) == _dump(dynamodb, expected_table)
    for name in (items_table, expected_table):
        dynamodb.delete_table(TableName=name)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    items=st.dictionaries(st.tuples(st.sampled_from("abc"), st.integers(0, 30)), st.integers(0, 9), max_size=40),
    partition=st.sampled_from("abcd"),
    forward=st.booleans(),
    limit=st.integers(1, 7),
    above=st.integers(-1, 30),
)
def test_a_query_of_one_partition_answers_as_a_full_table_read_would(
    aws: dict[str, str], items: dict[tuple[str, int], int], partition: str, forward: bool, limit: int, above: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``read_one_partition`` (installed for this test only) gives a Query of the table
    the items of its partition only: pages, order, range conditions and filters as before; a Query
    of an index still reads through the whole table."""
    for name in ("query", "all_items"):  # undone after
        monkeypatch.setattr(Table, name, getattr(Table, name))
    moto_server.read_one_partition()
    table = f"Pages-{uuid.uuid4().hex}"  # per example
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    dynamodb.create_table(
        TableName=table, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "n", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "n", "AttributeType": "N"},
                              {"AttributeName": "v", "AttributeType": "N"}],
        GlobalSecondaryIndexes=[{"IndexName": "byValue", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}, {"AttributeName": "n", "KeyType": "RANGE"}]}],
    )
    for (pk, n), v in items.items():
        dynamodb.put_item(TableName=table, Item={"pk": {"S": pk}, "n": {"N": str(n)}, "v": {"N": str(v)}})

    def read_all(**query: object) -> list[tuple[str, int]]:
        keys: list[tuple[str, int]] = []
        start: dict[str, object] = {}
        while True:
            page = dynamodb.query(TableName=table, Limit=limit, ScanIndexForward=forward, **query, **start)
            keys += [(i["pk"]["S"], int(i["n"]["N"])) for i in page["Items"]]
            if "LastEvaluatedKey" not in page:
                return keys
            start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}

    expected = sorted(((pk, n) for pk, n in items if pk == partition and n > above), key=lambda k: k[1], reverse=not forward)
    assert read_all(KeyConditionExpression="pk = :p AND n > :a",
                    ExpressionAttributeValues={":p": {"S": partition}, ":a": {"N": str(above)}}) == expected
    odd = [k for k in sorted((k for k in items if k[0] == partition), key=lambda k: k[1], reverse=not forward) if items[k] % 2]
    odd_values = {f":{d}": {"N": str(d)} for d in (1, 3, 5, 7, 9)}
    assert read_all(KeyConditionExpression="pk = :p", FilterExpression="v IN (:1, :3, :5, :7, :9)",
                    ExpressionAttributeValues={":p": {"S": partition}, **odd_values}) == odd
    by_value = sorted((k for k, v in items.items() if v == 4), key=lambda k: k[1], reverse=not forward)
    assert sorted(read_all(IndexName="byValue", KeyConditionExpression="v = :v",
                           ExpressionAttributeValues={":v": {"N": "4"}})) == sorted(by_value)
    dynamodb.delete_table(TableName=table)


def test_a_request_leaves_moto_no_instance_to_keep_and_the_data_as_it_was() -> None:
    with mock_aws():
        dynamodb = _client_with_table("Forgetting")

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            dynamodb.put_item(TableName="Forgetting", Item={"k": {"S": "kept"}, "v": {"N": "1"}})
            dynamodb.update_item(TableName="Forgetting", Key={"k": {"S": "kept"}}, UpdateExpression="SET v = :v",
                                 ExpressionAttributeValues={":v": {"N": "2"}})
            start_response("200 OK", [])
            return [b"done"]

        assert moto_server.forgetting_instances(app)({}, lambda *_: None) == [b"done"]

        listed = requests.get("http://motoapi.amazonaws.com/moto-api/data.json", timeout=30).json()
        assert listed.get("dynamodb", {}).get("Item", []) == []
        assert dynamodb.get_item(TableName="Forgetting", Key={"k": {"S": "kept"}})["Item"]["v"] == {"N": "2"}
