"""Where moto (as installed) differs from DynamoDB in a way the harness works around: these tests
assert moto's behaviour, so they fail when moto changes, and the workaround can go then.

moto 5.1 and 5.2 make ``TransactWriteItems`` atomic by deep-copying every table it names and, on a
cancellation, putting the copies back in place of the live tables (DynamoDBBackend.
transact_write_items). Writes of the transaction's earlier items are applied to the live table (and
its stream shard) before a later item fails. With concurrent requests, a write made by another
thread meanwhile is lost with the discarded table: ``local_stack.one_call_at_a_time`` therefore
makes the integration tier's AWS calls run one at a time (the local stack's embedded AWS takes one
request at a time itself, ``local_stack.moto_server``). The test below sees the
copy through the public API: a shard iterator taken before the cancelled transaction still reads
the discarded table's stream shard, with a record of the write that never happened (DynamoDB
streams carry committed writes only). When moto stops replacing tables, it fails.
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from chalicelib.persistence import storage
from tests.integration.aws_session import streams_client

TABLE = "MotoBehaviourProbe"


def test_a_cancelled_transaction_swaps_in_a_copy_of_the_table(aws: dict[str, str]) -> None:
    dynamodb, streams = storage.dynamodb(), streams_client()
    arn = dynamodb.create_table(
        TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )["TableDescription"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    before = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    with pytest.raises(ClientError, match="TransactionCanceledException"):
        dynamodb.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "written-then-undone"}}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": {"pk": {"S": "absent"}}, "ConditionExpression": "attribute_exists(pk)"}},
        ])
    after = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]

    assert "Item" not in dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "written-then-undone"}})
    assert streams.get_records(ShardIterator=after)["Records"] == []  # the table now in place: as DynamoDB
    ghost = streams.get_records(ShardIterator=before)["Records"]  # the discarded table's shard
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in ghost] == ["written-then-undone"]
