"""The store of idempotency records: powertools' DynamoDB persistence layer over the ``IdempotencyTable``.

The table (``infra/resources.json``) has the partition key ``id`` and the TTL attribute
``expiration`` (epoch seconds); powertools reads and writes its items
(https://docs.powertools.aws.dev/lambda/python/latest/utilities/idempotency/#dynamodbpersistencelayer).
"""

from __future__ import annotations

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage


def store() -> DynamoDBPersistenceLayer:
    """A persistence layer on the ``IDEMPOTENCY_TABLE`` through :mod:`chalicelib.persistence.storage`'s client
    (its timeouts, retries and the mapping of a silent DynamoDB to ``DependencyUnavailable``)."""
    return DynamoDBPersistenceLayer(
        table_name=settings().IDEMPOTENCY_TABLE,
        key_attr="id",
        expiry_attr="expiration",  # the table's TTL attribute (epoch seconds)
        boto3_client=storage.client("dynamodb"),
    )
