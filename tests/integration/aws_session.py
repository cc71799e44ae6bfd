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

import pytest
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.botocore_stubber import BotocoreStubber
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.table import StreamShard
from moto.sqs.models import sqs_backends

from local_stack.moto_server import behave_as_aws, speed_up
from local_stack.resources import create_resources
from local_stack.signing import skip_signing_of_this_process

behave_as_aws()  # FIFO deduplication, idempotent transactions, rollback from an undo log (local_stack/moto_server.py)
speed_up()  # moto's CPU patches: the same answers (local_stack/moto_server.py)

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
        skip_signing_of_this_process()
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
