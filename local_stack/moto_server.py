"""The embedded AWS: moto's server app, one request at a time, with the one shim the local stack needs.

This is the tree's only module that reaches into moto's internals (``scripts/check_public_imports.py``
names it). Everything else, production and the unit and integration tiers, uses moto as it ships.
Each patch below works around a difference between moto 5.2 and AWS that makes the local stack
(``make run``, the end-to-end tier, the benchmarks) wrong or unbounded under a realistic load, and
``tests/integration/test_moto_behaviour.py`` asserts moto's own behaviour for each, so it fails
when a moto release changes it and the patch can go. No upstream moto issue was found for any of
them (getmoto/moto, searched 2026-11-30); the transaction copy came with moto's
``TransactWriteItems`` itself (getmoto/moto#2879). Nothing here makes moto cheaper per call:
the patches that did (a direct dispatch route, unsigned requests, serializer and parser
shortcuts) were removed, so the local stack pays moto's full cost per call.

* **One request at a time** (:func:`serialized`). ``python -m moto.server`` serves requests on
  many threads, but moto's DynamoDB backend is not thread-safe (a cancelled TransactWriteItems puts
  its copies of the tables back while other requests may write). Real DynamoDB serializes
  conflicting transactions; this server gives moto the same guarantee.
* **Transactions without table copies** (:func:`undo_cancelled_transactions`). moto makes
  TransactWriteItems atomic by deep-copying every table the transaction names before it writes
  (once per *item* of the transaction) and swapping the copies in on a cancellation: time and
  memory in proportion to the tables, and each copy's items stay in moto's model registry
  (``instances_tracked``) until a reset, so the embedded AWS grew by GBs with the data. It also
  leaves the cancelled writes' records in the live stream shard, which iterators issued before
  the transaction keep reading: a consumer could get records of a write that never happened, with
  the sequence numbers the next committed writes then reuse. The undo log keeps a copy of each item
  the transaction names (or notes its absence) and the length of each stream shard; on a
  cancellation it puts exactly those items back and drops the records appended since, as DynamoDB
  streams carry committed writes only. The tables are never copied or replaced.
* **Nothing kept for moto's dashboard** (:func:`forgetting_instances`). moto keeps every model
  object it ever made in a class-level register for its dashboard, so the embedded AWS grew with
  every write ever made, not with the data: each request now ends by emptying the register.
* **A Query reads its partition** (:func:`read_one_partition`). moto answers a Query of a table by
  listing and sorting every item of the table: each page of a search over 20,000 listings would
  sort the whole index.
* **SQS FIFO deduplication** (:func:`remember_deduplication_ids`). moto compares a new message's
  deduplication id only with messages still in the queue, SQS with every message sent in the last
  5 minutes, consumed or not.
* **``ClientRequestToken``** (:func:`honour_client_request_tokens`). DynamoDB makes a
  TransactWriteItems repeated with the same token within 10 minutes a no-op; botocore repeats a
  call whose answer timed out, so under load a committed transaction is sent twice, and moto would
  fail the repeat's own conditions (a 409 or 500 for a write that succeeded).

Usage: ``python -m local_stack.moto_server HOST PORT``
"""

from __future__ import annotations

import copy
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, cast

import waitress
from moto.core.model_instances import reset_model_data
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler
from moto.server import DomainDispatcherApplication, create_backend_app
from moto.sqs import models as sqs_models


def serialized(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    """Wrap a WSGI app so that requests run (and their bodies are produced) one at a time."""
    lock = threading.Lock()

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with lock:
            return list(app(environ, start_response))

    return wsgi


def forgetting_instances(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    """Wrap a WSGI app so that moto's register of model instances is emptied after every request.

    moto appends every model object it creates to a class-level list (``BaseModel.__new__``:
    ``instances_tracked``) that only its dashboard (``/moto-api/data.json``) reads: every item
    version, stream record, message, shard iterator and transaction copy stays reachable from it
    until a reset, which drops the data too. Emptying the register (``reset_model_data``, what the
    reset API calls first) frees what the backends no longer hold and leaves the data as it is.
    The dashboard then lists nothing; the local stack does not use it.
    """

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        try:
            return list(app(environ, start_response))
        finally:
            reset_model_data()

    return wsgi


class _LiveTables:
    """Stands in for the ``copy`` module inside ``moto.dynamodb.models``: while the current thread
    runs a transaction, the "deep copy" of a table is the table itself, so moto's backup costs
    nothing and its rollback (putting the backup back) changes nothing; everything else is
    :mod:`copy` itself."""

    def __init__(self) -> None:
        self.local = threading.local()

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        if getattr(self.local, "in_transaction", False) and isinstance(value, Table):
            return value
        return copy.deepcopy(value, memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def _item_key(table: Table, op_type: str, op: dict[str, Any]) -> tuple[DynamoType, DynamoType | None] | None:
    """The (hash, range) key of the item a transaction operation names, or None when the
    operation lacks it (moto then refuses the transaction before writing anything)."""
    attributes = op.get("Item", {}) if op_type == "Put" else op.get("Key", {})
    if table.hash_key_attr not in attributes:
        return None
    if table.range_key_attr is not None and table.range_key_attr not in attributes:
        return None
    range_value = DynamoType(attributes[table.range_key_attr]) if table.range_key_attr is not None else None
    return DynamoType(attributes[table.hash_key_attr]), range_value


def _put_back(table: Table, hash_value: DynamoType, range_value: DynamoType | None, item: Item | None) -> None:
    """Make ``item`` (None: no item) the table's item under the key, as before the transaction."""
    if range_value is None:
        if item is None:
            table.items.pop(hash_value, None)
        else:
            table.items[hash_value] = item  # type: ignore[assignment]  # hash-only tables hold items (moto's own ignore)
        return
    items = table.items[hash_value]
    if item is None:
        items.pop(range_value, None)
        if not items:
            del table.items[hash_value]
    else:
        items[range_value] = item


def undo_cancelled_transactions(backend: type[DynamoDBBackend] = DynamoDBBackend) -> None:
    """Patch ``backend.transact_write_items`` to roll a cancelled transaction back from an undo
    log (see the module docstring) instead of whole-table copies.

    The rollback restores exactly the state from before: a transaction writes only the items its
    operations name (one per operation; moto refuses two operations on one item), updates change
    an item in place, and each write appends its records to the end of its table's stream shard;
    so a deep copy of each named item and each shard's length, taken before, are all it needs.
    """
    transact = backend.transact_write_items
    if getattr(transact, "undoes_cancelled", False):
        return
    live_tables = _LiveTables()
    dynamodb_models.copy = live_tables  # type: ignore[attr-defined,assignment]

    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        undo_log: list[tuple[Table, DynamoType, DynamoType | None, Item | None]] = []
        for transact_item in transact_items:
            for op_type, op in transact_item.items():
                table = self.tables.get(op.get("TableName", "")) if isinstance(op, dict) else None
                key = _item_key(table, op_type, op) if table is not None else None
                if table is not None and key is not None:
                    undo_log.append((table, *key, copy.deepcopy(table.get_item(*key))))
        shards = [(table.stream_shard, len(table.stream_shard.items))
                  for table in {id(t): t for t, *_ in undo_log}.values() if table.stream_shard is not None]
        live_tables.local.in_transaction = True
        try:
            transact(self, transact_items)
        except Exception:
            for table, hash_value, range_value, item in reversed(undo_log):
                _put_back(table, hash_value, range_value, item)
            for shard, length in shards:
                del shard.items[length:]
            raise
        finally:
            live_tables.local.in_transaction = False

    transact_write_items.undoes_cancelled = True  # type: ignore[attr-defined]
    backend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def read_one_partition(table_class: type[Table] = Table) -> None:
    """Patch ``table_class.query`` so a Query of the table itself (no index) reads only the
    partition it names.

    moto answers such a Query by listing and sorting *every* item of the table, then keeping
    those of the partition (``Table.query`` via ``Table.all_items``): its cost grew with the
    table, about a tenth of moto's CPU in the contract run. Here ``all_items`` gives that Query
    the partition's items alone (the Query sorts them by range key itself), so the answer is the
    same. Queries of an index are left as they are (moto keeps no per-index structure).
    """
    query = table_class.query
    if getattr(query, "reads_one_partition", False):
        return
    all_items = table_class.all_items
    partition = threading.local()

    def partition_items(self: Table) -> list[Item]:
        named: tuple[Table, DynamoType] | None = getattr(partition, "named", None)
        if named is None or named[0] is not self:
            return all_items(self)
        found = self.items.get(named[1])
        if found is None:
            return []
        return list(found.values()) if self.range_key_attr is not None else [cast(Item, found)]

    def query_partition(self: Table, hash_key: DynamoType | None, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs["index_name"] if "index_name" in kwargs else (args[6] if len(args) > 6 else None)
        if index_name is not None or hash_key is None:
            return query(self, hash_key, *args, **kwargs)
        partition.named = (self, hash_key)
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            partition.named = None

    query_partition.reads_one_partition = True  # type: ignore[attr-defined]
    table_class.all_items = partition_items  # type: ignore[method-assign]
    table_class.query = query_partition  # type: ignore[method-assign]


def remember_deduplication_ids(queue_class: type[sqs_models.Queue] = sqs_models.Queue) -> None:
    """Patch ``queue_class.add_message`` so a FIFO queue drops a message whose deduplication id it
    accepted in the last 5 minutes, also when that message was already deleted (SQS semantics)."""
    add = queue_class.add_message
    if getattr(add, "remembers_deduplication_ids", False):
        return
    window_ms = sqs_models.DEDUPLICATION_TIME_IN_SECONDS * 1000

    def add_message(self: sqs_models.Queue, message: sqs_models.Message) -> None:
        dedup = message.deduplication_id
        if not self.fifo_queue or dedup is None:
            add(self, message)
            return
        seen: dict[str, int] = self.__dict__.setdefault("_seen_deduplication_ids", {})
        sent = int(message.sent_timestamp or 0)
        first = seen.get(dedup)
        if first is not None and sent - first < window_ms:
            return
        seen[dedup] = sent
        for key in [k for k, at in seen.items() if sent - at >= window_ms]:
            del seen[key]
        add(self, message)

    add_message.remembers_deduplication_ids = True  # type: ignore[attr-defined]
    queue_class.add_message = add_message  # type: ignore[method-assign]


#: How long DynamoDB remembers a ClientRequestToken (seconds; TransactWriteItems API reference).
CLIENT_REQUEST_TOKEN_SECONDS = 600


def honour_client_request_tokens(handler: type[DynamoHandler] = DynamoHandler) -> None:
    """Patch ``handler.transact_write_items`` so a repeat of a successful call with the same
    ``ClientRequestToken`` and the same request body (what botocore's retry sends) within
    :data:`CLIENT_REQUEST_TOKEN_SECONDS` returns success without writing again, as DynamoDB does
    (TransactWriteItems API reference, "ClientRequestToken"). A repeat with another body runs as
    a new call (DynamoDB would answer IdempotentParameterMismatchException for other items;
    nothing here sends that)."""
    transact = handler.transact_write_items
    if getattr(transact, "honours_tokens", False):
        return
    # token -> (time.monotonic() of the success, the request body, the answer), oldest first: a
    # token is moved to the end when written, so expired ones are pruned from the front.
    done: dict[str, tuple[float, bytes, Any]] = {}

    def transact_write_items(self: DynamoHandler) -> Any:
        token = self.body.get("ClientRequestToken")
        if not token:
            return transact(self)
        now = time.monotonic()
        while done:
            oldest = next(iter(done))
            if now - done[oldest][0] <= CLIENT_REQUEST_TOKEN_SECONDS:
                break
            del done[oldest]
        # botocore repeats a call with the very same body; any other body is a new call
        previous = done.get(token)
        if previous is not None and previous[1] == self.raw_body:
            return previous[2]
        result = transact(self)  # raises when cancelled: only successes are remembered
        done.pop(token, None)
        done[token] = (now, self.raw_body, result)
        return result

    transact_write_items.honours_tokens = True  # type: ignore[attr-defined]
    handler.transact_write_items = transact_write_items  # type: ignore[method-assign]


#: Threads serving requests (they take turns: :func:`serialized`); the API and the event runner
#: keep many connections open, which waitress holds without a thread each.
SERVER_THREADS = 4
#: Open connections waitress accepts (its default, 100, is below what the API's connection pools
#: and the runner's threads may hold at once).
CONNECTION_LIMIT = 1000


def behave_as_aws() -> None:
    """Apply this module's patches (see the module docstring): cancelled transactions rolled back
    from an undo log, a Query reading its partition, SQS FIFO deduplication of deleted messages,
    TransactWriteItems idempotent by ``ClientRequestToken``. Idempotent."""
    undo_cancelled_transactions()
    read_one_partition()
    remember_deduplication_ids()
    honour_client_request_tokens()


def main(host: str, port: int) -> None:
    """Serve moto on ``host:port`` until killed.

    The server is waitress, not werkzeug's development server (what ``python -m moto.server``
    runs): werkzeug answers every request with ``Connection: close``, so each boto3 call of the
    API and the event runner opened a new TCP connection (and the server a new thread); waitress
    keeps HTTP/1.1 connections alive, so a call reuses one from the client's pool.
    """
    behave_as_aws()
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # "task queue depth": requests wait their turn by design
    app = forgetting_instances(DomainDispatcherApplication(create_backend_app))
    waitress.serve(serialized(app), host=host, port=port,
                   threads=SERVER_THREADS, connection_limit=CONNECTION_LIMIT, ident="moto")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
