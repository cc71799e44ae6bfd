"""One in-process moto (``moto.mock_aws``) for a whole test session, emptied between tests.

The template's tables and queues (``infra/resources.json``) are created once per session;
:func:`reset` then brings them back to empty at the start of every test, through AWS's own API
only (moto's objects are never touched):

* every table with a stream that a test wrote to (:class:`Touched` sees each call's parameters
  through botocore's ``before-parameter-build`` event) is deleted and created again from the
  template: no items, and a new, empty stream, as a consumer that starts now would see it. Emptying
  it item by item would leave every deletion in its stream, and moto keeps a stream's records for
  as long as the table lives (and copies them with the table in every ``TransactWriteItems``), so
  each test would be slower than the one before;
* every table without a stream that a test wrote to is emptied item by item: :class:`Touched`
  also keeps the key of every item a call put, updated or deleted there, and BatchWriteItem deletes
  those keys (no Scan; a write whose key it cannot read, in a form other than DynamoDB's wire
  form, makes it Scan that table's keys instead). The same empty table, at a fraction of the cost
  of DeleteTable and CreateTable, whose answers (the table's description with its indexes) moto
  serializes at length. After a test created or deleted a table, the tables it wrote to are all
  created again;
* every queue a test used is deleted and created again with the template's attributes (no
  messages, none in flight, no deduplication ids remembered);
* tables and queues a test created itself are deleted, and one of ours a test deleted is
  created again.

A table created again has a new stream ARN: :attr:`Resources.environment` follows it, and the event
runner (``local_stack.runner``) asks DynamoDB for a table's current stream. So every test still
starts from empty resources, independent of the order tests run in.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import requests
from botocore.config import Config
from moto import mock_aws

from local_stack.one_call_at_a_time import serialize_calls_of_this_process
from local_stack.resources import create_resources, create_table, load_template, resources_of_type

#: Attributes of a queue that CreateQueue takes (the others are counts and timestamps).
QUEUE_SETTINGS = ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "FifoQueue", "ContentBasedDeduplication",
                  "RedrivePolicy", "ReceiveMessageWaitTimeSeconds", "MaximumMessageSize")
#: Calls that change a table's items.
_TABLE_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
#: Calls that add or remove a table or queue.
_CREATE_DELETE = frozenset({"CreateTable", "DeleteTable", "CreateQueue", "DeleteQueue"})


#: One item's key as DynamoDB's wire form gives it: attribute name -> ``{"S"|"N"|"B": value}``.
Key = dict[str, dict[str, Any]]
#: The types a key attribute can have (DynamoDB API reference, ``KeySchemaElement``).
_KEY_TYPES = frozenset({"S", "N", "B"})


def _key_of(attributes: Mapping[str, Any], names: tuple[str, ...]) -> Key | None:
    """The key ``names`` of an item or key in DynamoDB's wire form, or None when one is missing or
    not a plain ``{"S"|"N"|"B": value}``."""
    key = {name: attributes.get(name) for name in names}
    for value in key.values():
        if not (isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _KEY_TYPES):
            return None
    return key  # type: ignore[return-value]


@dataclass
class Touched:
    """The tables written and the queues used since the last :func:`reset` (by physical name / URL),
    and the keys of the items written to the tables of :attr:`key_names`."""

    tables: set[str] = field(default_factory=set)
    queues: set[str] = field(default_factory=set)
    #: Whether a table or queue was created or deleted (then :func:`reset` lists them all).
    created_or_deleted: bool = True
    #: The key attribute names of the tables whose written keys are kept (physical name -> names).
    key_names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The keys written to each table of :attr:`key_names` (each key once).
    keys: dict[str, dict[tuple[Any, ...], Key]] = field(default_factory=dict)
    #: Tables of :attr:`key_names` with a write whose key could not be read: :func:`reset` scans them.
    unknown_keys: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, params: Mapping[str, Any], model: Any, **_: Any) -> None:
        """``before-parameter-build`` handler: remember what the call is about to change."""
        service, operation = model.service_model.service_name, model.name
        with self.lock:
            if operation in _CREATE_DELETE:
                self.created_or_deleted = True
            if service == "sqs" and "QueueUrl" in params:
                self.queues.add(params["QueueUrl"])
            elif service == "dynamodb" and operation in _TABLE_WRITES:
                if "TableName" in params:
                    self._written(params["TableName"], params.get("Item", params.get("Key")))
                for table, requests in params.get("RequestItems", {}).items():
                    for request in requests:
                        change = request.get("PutRequest") or request.get("DeleteRequest") or {}
                        self._written(table, change.get("Item", change.get("Key")))
                for item in params.get("TransactItems", []):
                    for kind, change in item.items():
                        if kind != "ConditionCheck" and "TableName" in change:
                            self._written(change["TableName"], change.get("Item", change.get("Key")))

    def _written(self, table: str, attributes: Any) -> None:
        """Note a write to ``table`` of the item with these attributes (an item or a key); lock held."""
        self.tables.add(table)
        names = self.key_names.get(table)
        if names is None:
            return
        key = _key_of(attributes, names) if isinstance(attributes, Mapping) else None
        if key is None:
            self.unknown_keys.add(table)
        else:
            self.keys.setdefault(table, {})[tuple((name, *value.items()) for name, value in key.items())] = key

    def take(self) -> tuple[set[str], set[str], bool, dict[str, list[Key]], set[str]]:
        """The tables and queues noted so far, whether any was created or deleted, the keys written
        per table and the tables whose keys are unknown; forgets them."""
        with self.lock:
            noted = (set(self.tables), set(self.queues), self.created_or_deleted,
                     {table: list(keys.values()) for table, keys in self.keys.items()}, set(self.unknown_keys))
            self.tables.clear()
            self.queues.clear()
            self.keys.clear()
            self.unknown_keys.clear()
            self.created_or_deleted = False
        return noted


@dataclass(frozen=True)
class Resources:
    """What the session created: the functions' environment (kept current: a table created again
    has a new stream ARN), each table's template properties, the queues' URLs with their creation
    attributes, what tests touch and the session's clients."""

    environment: dict[str, str]
    tables: dict[str, dict[str, Any]]
    queue_attributes: dict[str, dict[str, str]]
    touched: Touched
    clients: dict[str, Any]


def streams_client() -> Any:
    """A DynamoDB Streams client of the session's moto (botocore's account-based stream endpoints
    are unknown to moto, as in ``local_stack.runner``)."""
    return boto3.client("dynamodbstreams", config=Config(account_id_endpoint_mode="disabled"))


@contextmanager
def moto_session() -> Iterator[Resources]:
    """Start moto in-process, create the template's resources, and yield them until the session ends.

    The process's AWS calls run one at a time (``local_stack.one_call_at_a_time``: moto's
    DynamoDB is not safe for concurrent requests), while the product code above them still runs
    concurrently.
    """
    with mock_aws():
        serialize_calls_of_this_process()
        touched = Touched()
        from chalicelib.persistence import storage

        for session in (storage.session(), boto3.DEFAULT_SESSION):
            session.events.register("before-parameter-build", touched.note, unique_id="tests.aws_session.touched")  # type: ignore[union-attr]
        environment = create_resources()
        tables = {name: res["Properties"] for name, res in resources_of_type(load_template(), "AWS::DynamoDB::Table").items()}
        touched.key_names.update({name: tuple(key["AttributeName"] for key in properties["KeySchema"])
                                  for name, properties in tables.items() if "StreamSpecification" not in properties})
        clients = {"dynamodb": boto3.client("dynamodb"), "sqs": boto3.client("sqs")}
        sqs = clients["sqs"]
        queues = {}
        for url in sqs.list_queues()["QueueUrls"]:
            attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
            queues[url] = {name: value for name, value in attributes.items() if name in QUEUE_SETTINGS}
        yield Resources(environment, tables, queues, touched, clients)


#: The sequence number of the last record of each table's stream that
#: ``tests.integration.helpers.index_listings()`` fed to its consumer in this test (a Lambda event
#: source mapping's checkpoint); emptied by :func:`reset`.
STREAM_CHECKPOINTS: dict[str, str] = {}


def _create_again(resources: Resources, table: str) -> None:
    """Create ``table`` of the template again; its new stream ARN replaces the old one in the environment."""
    dynamodb = resources.clients["dynamodb"]
    description = create_table(dynamodb, table, resources.tables[table])
    arn = description.get("LatestStreamArn")
    if arn:
        prefix = arn.split("/stream/", 1)[0] + "/stream/"
        for name, value in resources.environment.items():
            if value.startswith(prefix):
                resources.environment[name] = arn


#: BatchWriteItem's limit of requests per call (DynamoDB API reference, BatchWriteItem).
_BATCH_WRITE_LIMIT = 25


def _delete_items(dynamodb: Any, keys: Mapping[str, list[Key]], scanned: Mapping[str, list[dict[str, str]]]) -> None:
    """Delete the items of ``keys`` (physical name -> the keys written there) and every item of
    ``scanned`` (physical name -> the template's ``KeySchema``: a Scan of each table's key
    attributes), in BatchWriteItem deletes of up to 25 keys a call across the tables (one call
    for a test's usual handful of items), until none is left unprocessed. Deleting a key that
    holds no item is a no-op in DynamoDB."""
    deletes: list[tuple[str, dict[str, Any]]] = [
        (table, {"DeleteRequest": {"Key": key}}) for table, written in keys.items() if table not in scanned for key in written
    ]
    for table, key_schema in scanned.items():
        names = {f"#k{i}": key["AttributeName"] for i, key in enumerate(key_schema)}
        scan: dict[str, Any] = {"TableName": table, "ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names}
        while True:
            page = dynamodb.scan(**scan)
            deletes.extend((table, {"DeleteRequest": {"Key": key}}) for key in page["Items"])
            if "LastEvaluatedKey" not in page:
                break
            scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    for pending in _batches(deletes):
        while pending:
            pending = dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}


def _batches(deletes: list[tuple[str, dict[str, Any]]]) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """``deletes`` (table, request) as BatchWriteItem ``RequestItems`` of up to 25 requests, no key
    twice in one call, even in two tables: moto as it ships compares a call's keys without their
    tables and refuses the call ("Provided list of item keys contains duplicates"), where DynamoDB
    refuses only a key repeated within one table (``count#...`` keys are in the Counters table and,
    before the search backfill moves them, in the SearchIndex table)."""
    pending: dict[str, list[dict[str, Any]]] = {}
    keys: set[str] = set()
    for table, request in deletes:
        key = json.dumps(request["DeleteRequest"]["Key"], sort_keys=True)
        if key in keys or len(keys) == _BATCH_WRITE_LIMIT:
            yield pending
            pending, keys = {}, set()
        pending.setdefault(table, []).append(request)
        keys.add(key)
    if pending:
        yield pending


def reset(resources: Resources) -> None:
    """Bring the session's moto back to the freshly created resources (see the module docstring)."""
    STREAM_CHECKPOINTS.clear()
    dynamodb, sqs = resources.clients["dynamodb"], resources.clients["sqs"]
    tables, queues, created_or_deleted, keys, unknown_keys = resources.touched.take()
    present, urls = set(resources.tables), set(resources.queue_attributes)
    if created_or_deleted:
        present = set(dynamodb.list_tables()["TableNames"])
        for name in present - set(resources.tables):
            dynamodb.delete_table(TableName=name)
        urls = set(sqs.list_queues().get("QueueUrls", []))
        for url in urls - set(resources.queue_attributes):
            sqs.delete_queue(QueueUrl=url)
    emptied = set() if created_or_deleted else {t for t in tables & present if "StreamSpecification" not in resources.tables.get(t, {})}
    _delete_items(dynamodb, {table: keys.get(table, []) for table in emptied},
                  {table: resources.tables[table]["KeySchema"] for table in emptied & unknown_keys})
    for table in (tables - emptied) & present & set(resources.tables):
        dynamodb.delete_table(TableName=table)
    for table in (tables - emptied | set(resources.tables) - present) & set(resources.tables):
        _create_again(resources, table)
    for url in queues & set(resources.queue_attributes) | set(resources.queue_attributes) - urls:
        if url in urls:
            sqs.delete_queue(QueueUrl=url)
        sqs.create_queue(QueueName=url.rsplit("/", 1)[-1], Attributes=resources.queue_attributes[url])
    resources.touched.take()  # the reset's own calls


#: moto's reset API as seen in-process (moto intercepts ``requests`` calls to it under ``mock_aws``;
#: docs.getmoto.org, "Reset API").
RESET_URL = "http://motoapi.amazonaws.com/moto-api/reset"


def wipe(resources: Resources) -> None:
    """Drop everything moto holds, through its reset API, and create the template's resources again.

    :func:`reset` creates again only what a test touched, but moto keeps every model instance it
    ever made (its ``/moto-api/`` dashboard lists them) until a reset: the items of a deleted table,
    and the copy of every table a ``TransactWriteItems`` names, taken once per item. A session that
    only created tables again grew past 22 GB over the integration tier; a reset at the start of
    every test module bounds it to one module's writes. The queues keep their URLs (same names);
    the tables' new stream ARNs replace the old ones in :attr:`Resources.environment`.

    Raises
    ------
    requests.HTTPError
        When moto refuses the reset.
    """
    STREAM_CHECKPOINTS.clear()
    requests.post(RESET_URL, timeout=30).raise_for_status()
    resources.environment.update(create_resources())
    resources.touched.take()

