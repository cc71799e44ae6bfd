"""One in-process moto for a whole test session, emptied between tests.

Building a fresh moto with every table and queue of ``infra/resources.json`` for each test cost
most of the old suite's time (about a third of a second per test on a 2-core machine). Here the
resources are created once per session; :func:`reset` then brings moto back to that state at
the start of every test, in memory and in a few milliseconds:

* every table of the template keeps its definition (keys, indexes, TTL, stream ARN) but loses
  its items, and its stream gets a new, empty shard (a consumer that starts now reads only what
  the test writes, as with a new table);
* every queue of the template loses its messages, in flight or not, and the deduplication ids
  of a FIFO queue, and gets back the attributes the template gives it;
* tables and queues a test created itself are deleted.

So every test still starts from empty resources, independent of the order tests run in.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.botocore_stubber import BotocoreStubber
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.table import StreamShard
from moto.sqs.models import sqs_backends

from chalicelib import storage
from local_stack.moto_server import (
    fast_dynamo_types,
    fast_json_requests,
    fast_json_structures,
    fast_top_level_updates,
    fast_update_expressions,
    honour_client_request_tokens,
    list_action_methods_once,
    list_moto_modules_once,
    read_one_partition,
    remember_deduplication_ids,
    undo_cancelled_transactions,
)
from local_stack.resources import create_resources
from local_stack.runner import wire_session
from local_stack.signing import skip_signing

remember_deduplication_ids()  # SQS FIFO deduplication as in AWS (see local_stack/moto_server.py)
honour_client_request_tokens()  # TransactWriteItems idempotent by ClientRequestToken, as in DynamoDB
undo_cancelled_transactions()  # items and stream records put back from an undo log, no table copies (local_stack/moto_server.py)
read_one_partition()  # a Query of a table reads its partition, not every item (local_stack/moto_server.py)
fast_dynamo_types()  # moto's DynamoType methods test the type inline (local_stack/moto_server.py)
fast_update_expressions()  # UpdateExpressions parsed once per string, trees copied cheaply (local_stack/moto_server.py)
fast_top_level_updates()  # SET/REMOVE/ADD of top-level attributes applied without moto's ten tree walks (local_stack/moto_server.py)
list_moto_modules_once()  # moto's package folder listed once, not per request (local_stack/moto_server.py)
list_action_methods_once()  # a response class's methods listed once, not per request (local_stack/moto_server.py)
fast_json_structures()  # wire-shaped dicts serialized without moto's alias lookups (local_stack/moto_server.py)
fast_json_requests()  # DynamoDB data-plane request bodies read as decoded JSON, no shape walk (local_stack/moto_server.py)

REGION = "us-east-1"


@dataclass(frozen=True)
class Resources:
    """What the session created: the functions' environment and the queues' initial attributes."""

    environment: dict[str, str]
    tables: frozenset[str]
    queue_attributes: dict[str, dict[str, Any]]


def _dynamodb() -> Any:
    return dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION]


def _sqs() -> Any:
    return sqs_backends[DEFAULT_ACCOUNT_ID][REGION]


def _queue_state(queue: Any) -> dict[str, Any]:
    """The attributes of a moto queue that a test could change (everything but its messages)."""
    return {name: value for name, value in vars(queue).items()
            if name not in {"_messages", "_pending_messages", "deleted_messages", "_messages_lock", "last_purged_at",
                            "lambda_event_source_mappings", "_seen_deduplication_ids"}}


@contextmanager
def moto_session() -> Iterator[Resources]:
    """Start moto in-process, create the template's resources, and yield them until the session ends.

    moto handles one AWS call at a time here, as a real service is atomic per call: its
    DynamoDB backend is not thread-safe (a cancelled transaction restores a snapshot of the
    whole table), while the product code above it still runs truly concurrently.
    """
    lock = threading.Lock()
    original = BotocoreStubber.process_request

    def one_at_a_time(self: BotocoreStubber, request: Any) -> Any:
        with lock:
            return original(self, request)

    with pytest.MonkeyPatch.context() as patch, mock_aws():
        patch.setattr(BotocoreStubber, "process_request", one_at_a_time)
        skip_signing(storage.session(), wire_session(), boto3._get_default_session())
        environment = create_resources()
        queues = {name: _queue_state(queue) for name, queue in _sqs().queues.items()}
        yield Resources(environment, frozenset(_dynamodb().tables), queues)


#: The sequence number of the last record of each table's stream that
#: ``tests.integration.helpers.index_listings()`` fed to its consumer in this test (a Lambda event
#: source mapping's checkpoint); emptied by :func:`reset`, which gives every stream a new shard.
STREAM_CHECKPOINTS: dict[str, str] = {}


def reset(resources: Resources) -> None:
    """Bring the session's moto back to the freshly created resources (see the module docstring)."""
    STREAM_CHECKPOINTS.clear()
    dynamodb = _dynamodb()
    if not resources.tables <= set(dynamodb.tables):  # a test deleted one of ours: create it again
        create_resources()
    for name in list(dynamodb.tables):
        if name not in resources.tables:
            del dynamodb.tables[name]
            continue
        table = dynamodb.tables[name]
        table.items = defaultdict(dict)
        if table.stream_shard is not None:
            table.stream_shard = StreamShard(table.account_id, table)
    sqs = _sqs()
    if not set(resources.queue_attributes) <= set(sqs.queues):  # a test deleted one of ours
        create_resources()
    for name in list(sqs.queues):
        if name not in resources.queue_attributes:
            del sqs.queues[name]
    for name, state in resources.queue_attributes.items():
        queue = sqs.queues[name]
        with queue._messages_lock:
            queue._messages = []
            queue._pending_messages = set()
            queue.deleted_messages = set()
            queue.last_purged_at = None
            vars(queue).pop("_seen_deduplication_ids", None)  # FIFO deduplication memory
        vars(queue).update(state)
