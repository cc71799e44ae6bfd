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

The local stack's embedded AWS (``local_stack.moto_server``, the tree's one shim) also works around
two more differences, each probed here through the public API: moto ignores a
TransactWriteItems ``ClientRequestToken`` (``honour_client_request_tokens``), and a FIFO queue
forgets a deduplication id once its message is deleted (``remember_deduplication_ids``). When a
probe fails, moto now behaves as AWS there and that patch can go.
"""

from __future__ import annotations

import boto3
import pytest
import requests
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


def test_a_transaction_repeated_with_its_client_request_token_runs_again(aws: dict[str, str]) -> None:
    dynamodb = storage.dynamodb()
    dynamodb.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    call = {"ClientRequestToken": "probe-token", "TransactItems": [{"Put": {
        "TableName": TABLE, "Item": {"pk": {"S": "once"}}, "ConditionExpression": "attribute_not_exists(pk)"}}]}
    dynamodb.transact_write_items(**call)
    # DynamoDB: the same token and body within 10 minutes succeed without writing again
    with pytest.raises(ClientError, match="TransactionCanceledException"):
        dynamodb.transact_write_items(**call)


def test_a_fifo_queue_forgets_a_deduplication_id_once_its_message_is_deleted(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.create_queue(QueueName="moto-behaviour-probe.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    sent = {"QueueUrl": url, "MessageBody": "once", "MessageGroupId": "g", "MessageDeduplicationId": "probe-dedup"}
    sqs.send_message(**sent)
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"])
    sqs.send_message(**sent)  # SQS: a duplicate within 5 minutes, accepted and not delivered
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1).get("Messages", [])] == ["once"]


def test_moto_keeps_a_deleted_item_in_its_register_of_instances(aws: dict[str, str]) -> None:
    dynamodb = storage.dynamodb()
    dynamodb.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    listed_before = len(_dashboard_items())
    dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": "deleted-but-kept"}})
    dynamodb.delete_item(TableName=TABLE, Key={"pk": {"S": "deleted-but-kept"}})

    assert "Item" not in dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "deleted-but-kept"}})
    # DynamoDB frees a deleted item; moto's dashboard data still lists it (moto_server.forgetting_instances)
    assert len(_dashboard_items()) > listed_before


def _dashboard_items() -> list[dict[str, object]]:
    """The DynamoDB items moto's dashboard data lists (one entry per ``Item`` object it made), under ``mock_aws``."""
    data = requests.get("http://motoapi.amazonaws.com/moto-api/data.json", timeout=30).json()
    return list(data.get("dynamodb", {}).get("Item", []))
