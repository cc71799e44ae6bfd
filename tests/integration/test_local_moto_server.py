"""The embedded AWS of the local stack: a cancelled transaction leaves no stream records; a
transaction repeated with its ClientRequestToken is not applied twice."""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.responses import DynamoHandler

from local_stack.moto_server import honour_client_request_tokens, keep_stream_shards


def test_a_stream_iterator_never_reads_the_records_of_a_cancelled_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DynamoDBBackend, "transact_write_items", DynamoDBBackend.transact_write_items)  # undone after
    keep_stream_shards()
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        dynamodb.create_table(
            TableName="Events", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        )
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
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        dynamodb.create_table(
            TableName="Keys", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        )
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
