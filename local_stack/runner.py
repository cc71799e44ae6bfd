"""The local event runner: what event source mappings do in AWS, for the embedded AWS.

It polls every DynamoDB stream and SQS queue the Chalice app subscribes to
(``app.event_sources``) and invokes the same handlers with Lambda-shaped events:

* streams: batches of up to ``batch_size`` records from each shard (Lambda's ``BatchSize``, up to
  10,000 for DynamoDB streams: read in GetRecords calls of at most 1,000), gathered for up to the
  source's ``maximum_batching_window_in_seconds`` (Lambda's ``MaximumBatchingWindowInSeconds``:
  a polling thread invokes the handler when the batch is full or its first record has waited
  that long; :meth:`EventRunner.pump`, the tests' synchronous pass, never waits); records after the first
  one reported in ``batchItemFailures`` (or all, if the handler raises) are retried, up to
  :data:`MAX_RETRY_ATTEMPTS` times, then skipped (AWS: ``MaximumRetryAttempts``);
* queues: messages received in batches; those not reported as failures are deleted, failed
  ones become visible again after their visibility timeout (AWS: ``ReportBatchItemFailures``);
* FIFO queues (the webhook delivery lanes): a pool of worker threads that grows with the lanes
  that have work (:mod:`local_stack.lane_pool`: spare pollers beside the busy workers, at most
  ``LOCAL_LANE_WORKERS``, default 32; the slow lanes' queue at most ``DELIVERY_SLOW_LANES``
  workers, as its own function), as Lambda scales a FIFO event source mapping with the
  number of active message groups; SQS (here moto) gives no thread a message of a group another
  thread holds in flight, so lanes run concurrently and each lane one message at a time, in
  order. moto's gaps are worked around in :mod:`local_stack.moto_server` (deduplication of
  deleted messages), the local stack's embedded AWS.

Streams carry only what this process writes (the API's writes, and the handlers'). The local
stack calls :meth:`EventRunner.notify` after every API request, and the runner after every batch
it handled, so a stream is read soon after a write (each stream thread still polls at most every
:data:`POLL_INTERVAL_SECONDS`, however often it is notified), and an idle stream is polled only
every ``idle_poll_seconds`` (2 s in the local stack): moto serves one request at a time, and idle
polling of the streams (two requests per poll) was most of an idle stack's CPU (measured in
docs/testing.md). Queues are woken the same way (their messages come from this process's handlers
and API requests) and otherwise polled every :data:`QUEUE_IDLE_SECONDS`, since their messages also
become visible by time alone (delays, visibility timeouts); a busy queue is still polled at most
every :data:`POLL_INTERVAL_SECONDS` (the lanes' spare workers together). A runner that nobody
notifies (the default ``idle_poll_seconds``: tests, and the benchmark's lane worker process, whose
lane messages another process sends) polls its queues every :data:`POLL_INTERVAL_SECONDS` too.
"""

from __future__ import annotations

import base64
import functools
import importlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from chalice import Chalice
from chalice.app import DynamoDBEventConfig, SQSEventConfig

from chalicelib.kernel.config import settings
from local_stack import lane_pool

logger = logging.getLogger("local_stack.runner")

MAX_RETRY_ATTEMPTS = 3
#: How often a source is polled at most (seconds): 4 times a second, the base rate at which Lambda
#: polls a DynamoDB stream's shards (AWS Lambda Developer Guide, "Using AWS Lambda with Amazon
#: DynamoDB"). It was 0.1 s: on a busy stack, the five stream sources' polls (two requests each)
#: and the queues' then made about a third of the requests of the one-request-at-a-time moto, and
#: an idle stack spent 15% of a core on polling (0.25 s: half that; docs/testing.md).
POLL_INTERVAL_SECONDS = 0.25
#: How often an idle queue is polled when nothing notified the runner (seconds). Messages sent by
#: this process (the handlers' lanes and retries) wake the pollers at once (:meth:`EventRunner.notify`
#: after every API request and every handled batch); this interval bounds how late a message that
#: becomes visible by time alone (a retry's delay, a visibility timeout) or one sent by another
#: process is received. Polling every 0.25 s kept about a tenth of a core busy per idle stack
#: (docs/testing.md, the event runner's polling, near the top).
QUEUE_IDLE_SECONDS = 1.0
#: Most records one GetRecords call returns (DynamoDB Streams API Reference, "GetRecords": ``Limit``
#: at most 1,000); a larger stream batch is read in several calls (:meth:`EventRunner._read`).
GET_RECORDS_LIMIT = 1000
#: Bounds of the worker pool of a FIFO queue (Lambda: one invocation per active message group, up
#: to the function's concurrency): at most ``LOCAL_LANE_WORKERS`` (default 32).
LANE_POOL = lane_pool.bounds_from_environment()


def _pool_bounds(queue: _QueueSource) -> lane_pool.PoolBounds:
    """The bounds of ``queue``'s worker pool: the slow lanes' queue its own few workers, any other :data:`LANE_POOL`."""
    config = settings()
    if queue.queue_url == config.DELIVERY_SLOW_QUEUE_URL:
        return lane_pool.slow_lane_bounds(config.DELIVERY_SLOW_LANES)
    return LANE_POOL


@dataclass
class LanePool:
    """The live worker counts of one FIFO queue's pool (guarded by ``lock``); ``peak`` is the most workers seen."""

    bounds: lane_pool.PoolBounds
    busy: int = 0
    idle: int = 0
    peak: int = 0
    started: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reserve(self, count: int) -> None:
        """Count ``count`` new idle workers (called under ``lock`` before they start)."""
        self.idle += count
        self.started += count
        self.peak = max(self.peak, self.busy + self.idle)


def load_checkpoints(path: Path) -> dict[str, dict[str, str]]:
    """The stream checkpoints an :class:`EventRunner` saved to ``path`` (``{stream ARN: {shard id:
    sequence number}}``); empty when the file does not exist yet.

    Raises
    ------
    SystemExit
        When the file exists but is not such a JSON object (names the file).
    """
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError:
        raise SystemExit(f"{path}: not the event runner's checkpoints (JSON); delete it to replay the streams") from None
    if not isinstance(state, dict) or not all(isinstance(shards, dict) for shards in state.values()):
        raise SystemExit(f"{path}: not the event runner's checkpoints; delete it to replay the streams")
    return {str(arn): {str(k): str(v) for k, v in shards.items()} for arn, shards in state.items()}


def lambda_event_json(value: Any) -> Any:
    """``value`` (botocore's parse of a stream record) with the JSON types of a Lambda event: a
    ``datetime`` as whole epoch seconds (``ApproximateCreationDateTime``), ``bytes`` (a binary
    attribute value) as base64 text; everything else as it is."""
    if isinstance(value, dict):
        return {key: lambda_event_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [lambda_event_json(item) for item in value]
    if isinstance(value, datetime):
        return int(value.timestamp())
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


class _Context:
    """The few Lambda context attributes handlers and powertools read."""

    function_name = "local-event-runner"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:local"
    aws_request_id = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


@dataclass
class _Shard:
    """Checkpoint of one shard: records up to ``after`` are done; ``retry_at`` is re-read next;
    ``gathering_since``: when a polling thread first saw the records it is gathering into a batch
    (monotonic seconds; ``None`` when none wait); ``iterator``: the ``NextShardIterator`` of the
    last read when it found no record, where the next read starts (``None``: ask GetShardIterator)."""

    after: str | None = None
    retry_at: str | None = None
    attempts: int = 0
    gathering_since: float | None = None
    iterator: str | None = None


@dataclass
class _StreamSource:
    handler: Any
    stream_arn: str
    batch_size: int
    starting_position: str
    batching_window: float = 0.0
    shards: dict[str, _Shard] = field(default_factory=dict)

    def due(self) -> float | None:
        """When the first batch being gathered is due (monotonic seconds), or ``None``."""
        started = [s.gathering_since for s in self.shards.values() if s.gathering_since is not None]
        return min(started) + self.batching_window if started else None


@dataclass
class _QueueSource:
    handler: Any
    queue_url: str
    queue_arn: str
    batch_size: int

    @property
    def fifo(self) -> bool:
        """True for a FIFO queue (message groups; polled by a :class:`LanePool`)."""
        return self.queue_url.endswith(".fifo")


def _resolve_handler(handler_string: str) -> Any:
    module_name, _, name = handler_string.rpartition(".")
    return getattr(importlib.import_module(module_name), name)


class EventRunner:
    """Polls the app's event sources on the current AWS endpoint and invokes its handlers.

    Parameters
    ----------
    app:
        The Chalice app whose ``event_sources`` to run.
    idle_poll_seconds:
        How often an idle stream polls when :meth:`notify` does not wake it first, in seconds
        (default :data:`POLL_INTERVAL_SECONDS`: right for callers that never notify; the local
        stack, which notifies after every request, uses 2 s). Idle queues poll every
        ``min(idle_poll_seconds, QUEUE_IDLE_SECONDS)``: a runner that is never notified must not
        receive its queues' messages up to :data:`QUEUE_IDLE_SECONDS` late (the webhook
        benchmark's lane worker process: its healthy p99 rose from 0.7 s to 2.1 s).
    checkpoints:
        Where to start in each stream, as :meth:`checkpoints` returns them (``{stream ARN: {shard
        id: sequence number}}``): a shard named there is read after that record; any other from
        the source's starting position (``TRIM_HORIZON``: its first record).
    state_file:
        A JSON file the runner saves its checkpoints to after every handled batch, and resumes
        from when ``checkpoints`` is not given: a runner restarted against the same embedded AWS
        goes on where the last one stopped, as an event source mapping does after a redeploy.
    """

    def __init__(self, app: Chalice, idle_poll_seconds: float = POLL_INTERVAL_SECONDS,
                 checkpoints: Mapping[str, Mapping[str, str]] | None = None, state_file: Path | None = None) -> None:
        self._idle_poll_seconds = idle_poll_seconds
        self._state_file = state_file
        self._state_lock = threading.Lock()
        if checkpoints is None and state_file is not None:
            checkpoints = load_checkpoints(state_file)
        self._start = {arn: dict(shards) for arn, shards in (checkpoints or {}).items()}
        self._queue_idle_seconds = min(idle_poll_seconds, QUEUE_IDLE_SECONDS)
        #: One event per polling thread (streams, queues, lane workers), set by :meth:`notify` (and by :meth:`stop`).
        self._wakers: list[threading.Event] = []
        self._wakers_lock = threading.Lock()
        # botocore's account-based stream endpoints (<account>.streams-ddb...) are unknown to moto.
        self._streams_client = boto3.client("dynamodbstreams", config=Config(account_id_endpoint_mode="disabled"))
        self._sqs = boto3.client("sqs")
        self._region = self._sqs.meta.region_name
        self.streams: list[_StreamSource] = []
        self.queues: list[_QueueSource] = []
        dynamodb = boto3.client("dynamodb")  # one for every stream: building a client costs milliseconds, and tests build a runner per test
        for source in app.event_sources:
            handler = _resolve_handler(source.handler_string)
            if isinstance(source, DynamoDBEventConfig):
                stream_arn = self._current_stream_arn(dynamodb, source.stream_arn)
                self.streams.append(_StreamSource(handler, stream_arn, source.batch_size or 100, source.starting_position,
                                                  float(source.maximum_batching_window_in_seconds or 0)))
            elif isinstance(source, SQSEventConfig):
                arn = source.queue_arn or ""
                name = arn.rsplit(":", 1)[-1] if arn else str(source.queue)
                url = self._sqs.get_queue_url(QueueName=name)["QueueUrl"]
                self.queues.append(_QueueSource(handler, url, arn, source.batch_size or 10))
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()
        #: The worker pool of each FIFO queue (by URL), from :meth:`start` on.
        self.lane_pools: dict[str, LanePool] = {}
        for stream in self.streams:
            self._discover_shards(stream)

    # -- streams -------------------------------------------------------------------------
    @staticmethod
    def _current_stream_arn(dynamodb: Any, configured: str) -> str:
        """The table's current stream ARN (asked of ``dynamodb``, a boto3 client): the ARN given at
        import may be a placeholder or stale (tests)."""
        table = configured.split(":table/", 1)[1].split("/", 1)[0]
        return str(dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"])

    def _discover_shards(self, stream: _StreamSource) -> None:
        description = self._streams_client.describe_stream(StreamArn=stream.stream_arn)["StreamDescription"]
        for shard in description["Shards"]:
            if shard["ShardId"] in stream.shards:
                continue
            checkpoint = _Shard(after=self._start.get(stream.stream_arn, {}).get(shard["ShardId"]))
            if checkpoint.after is None and stream.starting_position == "LATEST":  # start after what the shard holds now
                while records := self._read(stream, shard["ShardId"], checkpoint):
                    checkpoint.after = records[-1]["dynamodb"]["SequenceNumber"]
            stream.shards[shard["ShardId"]] = checkpoint

    def _read(self, stream: _StreamSource, shard_id: str, shard: _Shard) -> list[dict[str, Any]]:
        """Read the next batch after the checkpoint: up to ``batch_size`` records, in GetRecords calls
        of at most :data:`GET_RECORDS_LIMIT` (a batch larger than that follows ``NextShardIterator``
        until it is full or the shard has no more records).

        A read that found records asks GetShardIterator for the next one at the checkpoint (what a
        checkpointing consumer does: a batch gathered but not handled yet is read again). A read
        that found none keeps its ``NextShardIterator``, which points at the same place, for the
        next read, so an idle shard costs one call per poll instead of two (AWS keeps an iterator
        valid for 15 minutes; an expired one is replaced).
        """
        iterator = shard.iterator if shard.retry_at is None else None
        shard.iterator = None
        if iterator is None:
            iterator = self._fresh_iterator(stream, shard_id, shard)
        records: list[dict[str, Any]] = []
        while iterator and len(records) < stream.batch_size:
            limit = min(GET_RECORDS_LIMIT, stream.batch_size - len(records))
            try:
                page = self._streams_client.get_records(ShardIterator=iterator, Limit=limit)
            except self._streams_client.exceptions.ExpiredIteratorException:
                iterator = self._fresh_iterator(stream, shard_id, shard)
                continue
            records += page["Records"]
            if len(page["Records"]) < limit:  # the shard has nothing more now
                if not records:
                    shard.iterator = page.get("NextShardIterator")
                break
            iterator = page.get("NextShardIterator")
        return records

    def _fresh_iterator(self, stream: _StreamSource, shard_id: str, shard: _Shard) -> str:
        """A GetShardIterator answer at ``shard``'s checkpoint: its retry point, after its last record, or its start."""
        position: dict[str, str] = {"ShardIteratorType": "TRIM_HORIZON"}
        if shard.retry_at is not None:
            position = {"ShardIteratorType": "AT_SEQUENCE_NUMBER", "SequenceNumber": shard.retry_at}
        elif shard.after is not None:
            position = {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": shard.after}
        return str(self._streams_client.get_shard_iterator(StreamArn=stream.stream_arn, ShardId=shard_id,
                                                           **position)["ShardIterator"])

    def _lambda_stream_record(self, record: dict[str, Any], stream_arn: str) -> dict[str, Any]:
        """A GetRecords record (botocore's parse: datetimes, bytes) as a Lambda event carries it (JSON)."""
        return {**lambda_event_json(record), "eventSourceARN": stream_arn, "awsRegion": self._region}

    def _pump_stream(self, stream: _StreamSource, gather: bool = False) -> int:
        """One batch from each shard of ``stream``; returns the records handled (a failed batch counts 1).

        ``gather`` (the polling threads): a batch smaller than ``batch_size`` waits, unread, until
        its first record was seen ``batching_window`` seconds ago (Lambda's batching window).
        """
        handled = 0
        for shard_id, shard in stream.shards.items():
            records = self._read(stream, shard_id, shard)
            if not records:
                shard.gathering_since = None
                continue
            if gather and stream.batching_window and len(records) < stream.batch_size and shard.retry_at is None:
                now = time.monotonic()
                shard.gathering_since = shard.gathering_since if shard.gathering_since is not None else now
                if now - shard.gathering_since < stream.batching_window:
                    continue
            shard.gathering_since = None
            event = {"Records": [self._lambda_stream_record(r, stream.stream_arn) for r in records]}
            failed_at = self._invoke_stream(stream.handler, event)
            if failed_at is None or shard.attempts >= MAX_RETRY_ATTEMPTS:
                if failed_at is not None:
                    logger.error("skipping stream records after %d attempts (shard %s)", shard.attempts, shard_id)
                shard.after, shard.retry_at, shard.attempts = records[-1]["dynamodb"]["SequenceNumber"], None, 0
                handled += len(records)
                self._save_checkpoints()
                continue
            # Retry from the first failed record, as Lambda does with ReportBatchItemFailures.
            shard.retry_at = failed_at
            shard.attempts += 1
            handled += 1
        return handled

    def _invoke_stream(self, handler: Any, event: dict[str, Any]) -> str | None:
        """Invoke a stream handler; return the sequence number to retry from, or None on success."""
        try:
            result = handler(event, _Context())
        except Exception:
            logger.exception("stream handler raised")
            return str(event["Records"][0]["dynamodb"]["SequenceNumber"])
        failures = (result or {}).get("batchItemFailures") or [] if isinstance(result, dict) else []
        if not failures:
            return None
        return str(min((f["itemIdentifier"] for f in failures), key=int))

    def checkpoints(self) -> dict[str, dict[str, str]]:
        """Where each stream's consumer stands: ``{stream ARN: {shard id: sequence number of the
        last record handled (or skipped after its retries)}}``; shards with nothing handled yet are
        left out. A runner given these as ``checkpoints`` goes on after them."""
        return {stream.stream_arn: {shard_id: shard.after for shard_id, shard in stream.shards.items() if shard.after}
                for stream in self.streams}

    def _save_checkpoints(self) -> None:
        """Write :meth:`checkpoints` to the state file, if the runner has one (whole, then renamed:
        a crash leaves the previous state, never half a file)."""
        if self._state_file is None:
            return
        with self._state_lock:
            state = {**load_checkpoints(self._state_file), **self.checkpoints()}
            partial = self._state_file.with_suffix(".tmp")
            partial.write_text(json.dumps(state, indent=1, sort_keys=True))
            partial.replace(self._state_file)

    # -- queues --------------------------------------------------------------------------
    def _pump_queue(self, queue: _QueueSource) -> int:
        """Receive one batch of ``batch_size`` messages, invoke the handler, delete the successes."""
        response = self._sqs.receive_message(
            QueueUrl=queue.queue_url, MaxNumberOfMessages=min(queue.batch_size, 10), AttributeNames=["All"], WaitTimeSeconds=0
        )
        messages = response.get("Messages", [])
        if not messages:
            return 0
        self._invoke_queue(queue, messages)
        return len(messages)

    def _pump_queue_fully(self, queue: _QueueSource) -> int:
        """One pass of :meth:`pump`: batches until the queue has no visible message (tests' drain)."""
        handled = 0
        while handled < 1000 and (received := self._pump_queue(queue)):
            handled += received
        return handled

    def _invoke_queue(self, queue: _QueueSource, messages: list[dict[str, Any]]) -> None:
        event = {
            "Records": [
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "attributes": m.get("Attributes", {}),
                    "messageAttributes": m.get("MessageAttributes", {}),
                    "md5OfBody": m.get("MD5OfBody", ""),
                    "eventSource": "aws:sqs",
                    "eventSourceARN": queue.queue_arn,
                    "awsRegion": self._region,
                }
                for m in messages
            ]
        }
        try:
            result = queue.handler(event, _Context())
            failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])} if isinstance(result, dict) else set()
        except Exception:
            logger.exception("queue handler raised")
            failed = {m["MessageId"] for m in messages}
        done = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages) if m["MessageId"] not in failed]
        if done:
            self._sqs.delete_message_batch(QueueUrl=queue.queue_url, Entries=done)

    # -- driving -------------------------------------------------------------------------
    def pump(self) -> int:
        """One pass over every source; returns how many records or messages were handled."""
        handled = 0
        for stream in self.streams:
            handled += self._pump_stream(stream)
        for queue in self.queues:
            handled += self._pump_queue_fully(queue) if queue.fifo else self._pump_queue(queue)
        return handled

    def drain(self, max_passes: int = 50) -> int:
        """Pump until a pass handles nothing (tests); returns the total handled."""
        total = 0
        for _ in range(max_passes):
            handled = self.pump()
            total += handled
            if handled == 0:
                break
        return total

    def start(self) -> None:
        """Poll every source on its own daemon thread until :meth:`stop`.

        One thread per source mirrors AWS, where each event source mapping invokes its own
        function: a slow webhook delivery never holds up the approval queue.
        """
        pumps: list[tuple[str, Callable[[], int], float, threading.Event, Callable[[], float | None] | None]] = [
            (f"stream-{i}", functools.partial(self._pump_stream, s, gather=True), self._idle_poll_seconds, threading.Event(), s.due)
            for i, s in enumerate(self.streams)
        ] + [
            (f"queue-{i}", functools.partial(self._pump_queue, q), self._queue_idle_seconds, threading.Event(), None)
            for i, q in enumerate(self.queues)
            if not q.fifo
        ]
        for name, pump, idle_wait, waker, due in pumps:
            self._register_waker(waker)
            thread = threading.Thread(target=self._loop, args=(pump, idle_wait, 0.0, waker, due), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        for queue in self.queues:
            if queue.fifo:
                pool = self.lane_pools[queue.queue_url] = LanePool(_pool_bounds(queue))
                with pool.lock:
                    pool.reserve(pool.bounds.initial)
                for worker in range(pool.bounds.initial):
                    self._start_lane_worker(queue, pool, first_wait=POLL_INTERVAL_SECONDS * worker)

    # -- the lane worker pool ------------------------------------------------------------------
    def _start_lane_worker(self, queue: _QueueSource, pool: LanePool, first_wait: float = 0.0) -> None:
        """Start one worker of ``pool`` (already counted idle by :meth:`LanePool.reserve`)."""
        thread = threading.Thread(
            target=self._lane_worker, args=(queue, pool, first_wait), name=f"lane-{pool.started}", daemon=True
        )
        with self._threads_lock:
            self._threads.append(thread)
        thread.start()

    def _lane_worker(self, queue: _QueueSource, pool: LanePool, first_wait: float) -> None:
        """Receive one message at a time; while its attempt runs, the pool starts a spare poller.

        An idle worker polls when :meth:`notify` wakes it (at most every ``spare`` x
        :data:`POLL_INTERVAL_SECONDS`, the spares staggered: together about every
        :data:`POLL_INTERVAL_SECONDS`, like one consumer) and otherwise every ``spare`` x
        the runner's idle queue interval; one beyond the spares stops after
        :data:`local_stack.lane_pool.RETIRE_AFTER_SECONDS` without work.
        """
        self._stop.wait(first_wait)
        idle_since = time.monotonic()
        waker = threading.Event()
        self._register_waker(waker)
        try:
            self._lane_polls(queue, pool, waker, idle_since)
        finally:
            self._unregister_waker(waker)

    def _lane_polls(self, queue: _QueueSource, pool: LanePool, waker: threading.Event, idle_since: float) -> None:
        """The polling loop of one lane worker (:meth:`_lane_worker`)."""
        while not self._stop.is_set():
            waker.clear()  # a send from now on wakes the wait below
            polled = time.monotonic()
            try:
                response = self._sqs.receive_message(
                    QueueUrl=queue.queue_url, MaxNumberOfMessages=1, AttributeNames=["All"], WaitTimeSeconds=0
                )
            except Exception:
                logger.exception("lane worker poll failed")
                self._stop.wait(1.0)
                continue
            messages = response.get("Messages", [])
            if messages:
                with pool.lock:
                    pool.idle, pool.busy = pool.idle - 1, pool.busy + 1
                    more = pool.bounds.to_start(pool.busy, pool.idle)
                    pool.reserve(more)
                for _ in range(more):
                    self._start_lane_worker(queue, pool)
                try:
                    self._invoke_queue(queue, messages)
                except Exception:
                    logger.exception("lane worker pass failed")
                finally:
                    with pool.lock:
                        pool.idle, pool.busy = pool.idle + 1, pool.busy - 1
                self.notify()  # the handler may have written records the streams carry
                idle_since = time.monotonic()
                continue
            with pool.lock:
                if time.monotonic() - idle_since > lane_pool.RETIRE_AFTER_SECONDS and pool.bounds.may_retire(pool.busy, pool.idle):
                    pool.idle -= 1
                    return
            waker.wait(self._queue_idle_seconds * pool.bounds.spare)
            self._stop.wait(max(0.0, polled + POLL_INTERVAL_SECONDS * pool.bounds.spare - time.monotonic()))

    def notify(self) -> None:
        """Something may have been written or sent: idle stream and queue threads poll now (each at
        most once every :data:`POLL_INTERVAL_SECONDS`). Cheap and thread-safe; the local stack calls
        it after every API request, and the runner after every batch a handler took.
        """
        with self._wakers_lock:
            wakers = list(self._wakers)
        for waker in wakers:
            waker.set()

    def _register_waker(self, waker: threading.Event) -> None:
        """Let :meth:`notify` set ``waker`` (a polling thread's event) from now on."""
        with self._wakers_lock:
            self._wakers.append(waker)

    def _unregister_waker(self, waker: threading.Event) -> None:
        """Stop :meth:`notify` setting ``waker`` (its lane worker retired)."""
        with self._wakers_lock:
            self._wakers.remove(waker)

    def _loop(self, pump: Callable[[], int], idle_wait: float = POLL_INTERVAL_SECONDS, first_wait: float = 0.0,
              waker: threading.Event | None = None, due: Callable[[], float | None] | None = None) -> None:
        """Pump until :meth:`stop`; an idle pump waits ``idle_wait`` seconds or until ``waker`` is set,
        and no longer than until ``due()`` (a stream's batch being gathered)."""
        self._stop.wait(first_wait)  # the stagger of the lane workers
        while not self._stop.is_set():
            if waker is not None:
                waker.clear()  # a write from now on wakes the wait below, even one during this pump
            polled = time.monotonic()
            try:
                handled = pump()
            except Exception:
                logger.exception("event runner pass failed")
                self._stop.wait(1.0)
                continue
            if handled:
                self.notify()  # the handler may have written records the streams carry
                continue
            if waker is None:
                self._stop.wait(idle_wait)
                continue
            deadline = due() if due is not None else None
            waker.wait(idle_wait if deadline is None else min(idle_wait, max(0.0, deadline - time.monotonic())))
            # Woken early: still no more than one poll per POLL_INTERVAL_SECONDS (a busy API
            # notifies many times a second: a thread's polls stay at the interval of the queues).
            self._stop.wait(max(0.0, polled + POLL_INTERVAL_SECONDS - time.monotonic()))

    def stop(self) -> None:
        """Stop the polling threads and wait for them."""
        self._stop.set()
        self.notify()
        with self._threads_lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=15)
