"""What one test writes is gone in the next (``tests.integration.aws_session.reset``): the items
the API, the stream consumers and a test's own clients wrote, whichever way the keys reached
DynamoDB. The tests run in file order: the first writes, the second finds every table empty."""

from __future__ import annotations

from typing import Any

import boto3

from chalicelib.kernel.config import settings
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, create_listing, table_items


def test_a_writes_through_the_api_its_stream_consumers_and_its_own_clients(
    api: Api, alice: User, admin: User, runner: Any, aws_resources: Resources
) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])  # the listing indexer writes the search index from the stream
    config = settings()
    assert table_items(config.SEARCH_INDEX_TABLE), "the stream consumer wrote no posting"
    assert table_items(config.API_KEYS_TABLE)
    # A write through boto3's resource layer (Python values, which it turns into DynamoDB's wire
    # form on botocore's events): removed whether the reset reads its key or scans the table.
    boto3.resource("dynamodb").Table(config.BLOCKS_TABLE).put_item(Item={"userId": "left", "otherId": "behind"})
    # And one in the wire form, from a test's own low-level client.
    boto3.client("dynamodb").put_item(TableName=config.REPORTS_TABLE, Item={"reportId": {"S": "left-behind"}})
    # The same key in two tables (a counter before and after the search backfill moves it): the
    # reset's deletes of both must not share one BatchWriteItem call, which moto refuses.
    same_key = {"pk": {"S": "count#listings#jobs#0#0"}, "sk": {"S": "0"}}
    for table in (config.COUNTERS_TABLE, config.SEARCH_INDEX_TABLE):
        boto3.client("dynamodb").put_item(TableName=table, Item={**same_key, "n": {"N": "1"}})


def test_b_finds_every_table_of_the_template_empty(aws: dict[str, str], aws_resources: Resources) -> None:
    left = {table: table_items(table) for table in aws_resources.tables}
    assert {table: items for table, items in left.items() if items} == {}
