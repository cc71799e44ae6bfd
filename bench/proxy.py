"""The recording proxy: an HTTP proxy in front of the embedded AWS that accounts for every DynamoDB call.

The local stack (``python -m local_stack``) is pointed at the proxy with ``AWS_ENDPOINT_URL``;
the proxy forwards every request to the embedded AWS and, for each DynamoDB call, records what
DynamoDB would bill and what the call cost the caller:

* **capacity units per partition key** (table or index, and the partition key's value), as
  DynamoDB bills them (AWS docs, "Read/write capacity mode" and "Item sizes and formats"): a
  write 1 WCU per KB of the larger of the item's old and new images (twice in a transaction),
  each global secondary index whose keys or projection the write changes 1 WCU per KB of the
  index entry (+100 bytes) at the old and/or new index key; a read 1 RCU per 4 KB (half when
  eventually consistent, twice in a transaction), a Query per 4 KB of all the items it read
  (``bench/hot_keys.py`` projects these to the target traffic);
* **one :class:`Call` per DynamoDB call** while :attr:`Recorder.log_calls` is on: its operation,
  table, when it arrived and when its answer left (monotonic seconds), the items it read
  (``ScannedCount`` of a Query, the items of a BatchGetItem, TransactGetItems or GetItem), its
  read and write units. :func:`attribute` sums the calls of one time window (one API request):
  calls, **sequential round trips** (calls that overlap in time count as one: the reads of one
  parallel step), items and read units.

To see old images (index writes, the larger image) the proxy reads each item an UpdateItem or
DeleteItem names, and, with ``images`` on, each item a PutItem names, before and after the write
(serialized under a lock; those reads are not counted). With ``images`` off a Put is billed by
the item it sends (its new image), and an UpdateItem on a table without GSIs by the item it
leaves (one read after it, outside the lock: no index entry to account, and the index writer's
counter additions, most of its calls, are not held behind one another and the other writes).

Only the ``DynamoDB_20120810`` targets are accounted; DynamoDB Streams, SQS and the rest pass
through untouched.
"""

from __future__ import annotations

import http.client
import json
import math
import re
import socket
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: An entity's id in a key: ``usr_...`` and the other prefixed ids, an API key's rate-limit
#: bucket ``key#<key id>`` (one bucket per key: one key per user at the target), or a posting
#: indexer's ledger ``ledger|<uuid>`` (one per stream batch, written with the batch's states and
#: consumed by it: more traffic means more ledgers, not more writes to one; docs/search.md).
ENTITY = re.compile(r"\b(usr|lst|cnv|whk|ss|msg|evt|req|dlv)_[0-9A-Za-z]{8,}|\b(key)#[0-9a-f]{16,}|\b(ledger)\|[0-9a-f]{32}")


def _kind(match: re.Match[str]) -> str:
    """The entity kind of an :data:`ENTITY` match (``usr``, ``key``, ``ledger``, ...)."""
    return next(group for group in match.groups() if group)


# -- item sizes and capacity units (AWS docs, "Item sizes and formats") ---------------------------


def value_size(value: dict[str, Any]) -> int:
    """Bytes of one DynamoDB attribute value (JSON wire format ``{"S": ...}``)."""
    kind, inner = next(iter(value.items()))
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        digits = len(inner.lstrip("-").replace(".", "").lstrip("0")) or 1
        return math.ceil(digits / 2) + 1
    if kind == "B":
        return math.ceil(len(inner) * 3 / 4)  # base64 on the wire
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: v}) for v in inner)
    if kind == "L":
        return 3 + sum(value_size(v) + 1 for v in inner)
    if kind == "M":
        return 3 + sum(len(k.encode()) + value_size(v) + 1 for k, v in inner.items())
    raise ValueError(f"unknown attribute type {kind}")


def item_size(item: dict[str, Any] | None) -> int:
    """Bytes of an item: attribute names plus values."""
    return sum(len(name.encode()) + value_size(value) for name, value in (item or {}).items())


def write_units(size: int) -> int:
    """WCU of one write of ``size`` bytes: 1 per KB, at least 1."""
    return max(1, math.ceil(size / 1024))


def read_units(size: int, consistent: bool) -> float:
    """RCU of reading ``size`` bytes: 1 per 4 KB (at least one), half when eventually consistent."""
    units = max(1, math.ceil(size / 4096))
    return units if consistent else units / 2


def scalar(value: dict[str, Any] | None) -> str | None:
    """The plain text of a key attribute value (``{"S": "jobs#0"}`` -> ``jobs#0``)."""
    return None if value is None else str(next(iter(value.values())))


# -- key schemas from the template ----------------------------------------------------------------


#: The DynamoDB operations that write.
WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
#: ``(table, key, the item a Put sends or None)`` of one item a write call writes.
Write = tuple[str, dict[str, Any], dict[str, Any] | None]


@dataclass(frozen=True)
class Index:
    """A table or a GSI: its name as keys are reported, its key attributes and projection."""

    label: str
    hash: str
    range: str | None
    keys_only: bool = False


@dataclass
class Schema:
    """A table's key and its GSIs."""

    table: Index
    gsis: dict[str, Index] = field(default_factory=dict)


def schemas(template: dict[str, Any]) -> dict[str, Schema]:
    """Logical table name -> :class:`Schema`, from ``infra/resources.json``."""
    found = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::DynamoDB::Table":
            continue
        props = resource["Properties"]

        def keys(schema: list[dict[str, str]]) -> tuple[str, str | None]:
            by_type = {k["KeyType"]: k["AttributeName"] for k in schema}
            return by_type["HASH"], by_type.get("RANGE")

        table = Index(name, *keys(props["KeySchema"]))
        gsis = {
            g["IndexName"]: Index(f"{name}.{g['IndexName']}", *keys(g["KeySchema"]), g["Projection"]["ProjectionType"] == "KEYS_ONLY")
            for g in props.get("GlobalSecondaryIndexes", [])
        }
        found[name] = Schema(table, gsis)
    return found


# -- the recording proxy --------------------------------------------------------------------------


@dataclass
class Call:
    """One DynamoDB call seen by the proxy.

    ``start`` and ``end``: monotonic seconds when the request arrived and when its answer was
    ready; ``items``: items read (:func:`items_read`); ``rcu`` / ``wcu``: capacity units billed;
    ``tables``: the table labels it touched.
    """

    operation: str
    start: float
    end: float = 0.0
    items: int = 0
    rcu: float = 0.0
    wcu: float = 0.0
    tables: set[str] = field(default_factory=set)


def items_read(operation: str, parsed: dict[str, Any]) -> int:
    """Items one read call read: a Query's or Scan's ``ScannedCount`` (what it was billed for, filtered
    out or not), the items a BatchGetItem or TransactGetItems returned, 1 for a GetItem that found one."""
    if operation in ("Query", "Scan"):
        return int(parsed.get("ScannedCount", len(parsed.get("Items") or [])))
    if operation == "BatchGetItem":
        return sum(len(v) for v in (parsed.get("Responses") or {}).values())
    if operation == "TransactGetItems":
        return sum(1 for r in parsed.get("Responses") or [] if r.get("Item"))
    if operation == "GetItem":
        return 1 if parsed.get("Item") else 0
    return 0


def round_trips(calls: Iterable[Call]) -> int:
    """Sequential round trips of a set of calls: calls whose [start, end] intervals overlap (directly
    or through a chain of overlapping calls) count as one, the calls of one parallel step."""
    trips, reach = 0, float("-inf")
    for call in sorted(calls, key=lambda c: c.start):
        if call.start > reach:
            trips += 1
        reach = max(reach, call.end)
    return trips


@dataclass
class Cost:
    """What the DynamoDB calls of one window (one API request) cost: calls, sequential round trips
    (:func:`round_trips`), items read, read units and write units."""

    calls: int
    round_trips: int
    items: int
    rcu: float
    wcu: float
    #: Labels of the tables and indexes written to.
    written: frozenset[str] = frozenset()


def attribute(calls: Iterable[Call], start: float, end: float) -> Cost:
    """The :class:`Cost` of the calls that arrived within ``[start, end]`` (monotonic seconds)."""
    inside = [c for c in calls if start <= c.start <= end]
    return Cost(len(inside), round_trips(inside), sum(c.items for c in inside), sum(c.rcu for c in inside),
                sum(c.wcu for c in inside), frozenset(t for c in inside if c.wcu for t in c.tables))


class Recorder:
    """Capacity units per (phase, key) of every DynamoDB call that passes the proxy, and (while
    :attr:`log_calls` is on) one :class:`Call` per DynamoDB call in :attr:`calls`.

    ``images``: read the old image of every item a PutItem replaces (index writes and the larger
    image; ``bench/hot_keys.py``); off, a Put is billed by the item it sends.
    """

    def __init__(self, upstream: str, tables: dict[str, Schema], images: bool = True) -> None:
        self.upstream = upstream.removeprefix("http://")
        self.tables = tables
        self.images = images
        self.log_calls = False
        #: Seconds each DynamoDB call waits in the proxy before it is forwarded, while
        #: :attr:`log_calls` is on: a network's latency, so the calls of one parallel step overlap
        #: however the caller's threads happened to be scheduled, while calls in sequence still
        #: cannot (``bench/search.py``'s round trips). 0: forwarded at once.
        self.latency = 0.0
        self.calls: list[Call] = []
        self.phase = "setup"
        self.units: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])  # [rcu, wcu]
        self.sizes: dict[str, list[int]] = defaultdict(list)  # table[.index] -> sizes of the entries written
        self.entities: dict[tuple[str, str], set[str]] = defaultdict(set)  # (phase, kind) -> ids seen
        self.last_write = time.monotonic()
        #: When the last DynamoDB call (read or write) arrived or ended (monotonic seconds).
        self.last_call = time.monotonic()
        self.write_lock = threading.Lock()
        self.count_lock = threading.Lock()
        self.local = threading.local()

    # upstream calls ---------------------------------------------------------------------------
    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self.local, "connection", None)
        if connection is None:
            connection = self.local.connection = http.client.HTTPConnection(self.upstream, timeout=120)
        return connection

    def forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """Send the request on to the embedded AWS; returns (status, headers, body)."""
        for attempt in (1, 2):
            connection = self._connection()
            try:
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                return response.status, response.getheaders(), response.read()
            except (http.client.HTTPException, OSError):
                connection.close()
                self.local.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _get_item(self, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
        body = json.dumps({"TableName": table, "Key": key, "ConsistentRead": True}).encode()
        headers = {"X-Amz-Target": "DynamoDB_20120810.GetItem", "Content-Type": "application/x-amz-json-1.0",
                   "Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request"}
        status, _, text = self.forward("POST", "/", headers, body)
        return json.loads(text).get("Item") if status == 200 else None

    # accounting -------------------------------------------------------------------------------
    def _schema(self, physical: str) -> Schema | None:
        matches = [name for name in self.tables if physical == name or physical.endswith(name)]
        return self.tables[max(matches, key=len)] if matches else None

    def _add(self, index: Index, value: str | None, rcu: float = 0.0, wcu: float = 0.0) -> None:
        key = f"{index.label} {value}"
        call: Call | None = getattr(self.local, "call", None)
        if call is not None:  # this thread's call (one proxy request per thread)
            call.rcu += rcu
            call.wcu += wcu
            call.tables.add(index.label)
        with self.count_lock:
            units = self.units[(self.phase, key)]
            units[0] += rcu
            units[1] += wcu
            for match in ENTITY.finditer(value or ""):
                self.entities[(self.phase, _kind(match))].add(match.group(0))

    def _key_of(self, schema: Schema, item: dict[str, Any]) -> dict[str, Any]:
        names = [schema.table.hash] + ([schema.table.range] if schema.table.range else [])
        return {n: item[n] for n in names if n in item}

    def _count_write(self, schema: Schema, key: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None,
                     transactional: bool) -> None:
        base = write_units(max(item_size(old), item_size(new))) * (2 if transactional else 1)
        if new is not None:
            self.sizes[schema.table.label].append(item_size(new))
        self._add(schema.table, scalar(key.get(schema.table.hash)), wcu=base)
        if old == new:
            return  # a refused condition: the base write is billed, no index changes
        table_keys = [schema.table.hash] + ([schema.table.range] if schema.table.range else [])
        for index in schema.gsis.values():
            index_keys = [index.hash] + ([index.range] if index.range else [])

            def entry(image: dict[str, Any] | None, index_keys: list[str] = index_keys, index: Index = index) -> dict[str, Any] | None:
                if image is None or any(k not in image for k in index_keys):
                    return None  # sparse index: no entry
                return {k: image[k] for k in {*table_keys, *index_keys}} if index.keys_only else image

            before, after = entry(old), entry(new)
            if before == after:
                continue
            same_key = before is not None and after is not None and all(before[k] == after[k] for k in index_keys)
            if before is not None and not same_key:
                self._add(index, scalar(before[index.hash]), wcu=write_units(item_size(before) + 100))
            if after is not None:
                self._add(index, scalar(after[index.hash]), wcu=write_units(item_size(after) + 100))
                self.sizes[index.label].append(item_size(after) + 100)

    def _query_partition(self, body: dict[str, Any], index: Index) -> str | None:
        names = body.get("ExpressionAttributeNames") or {}
        values = body.get("ExpressionAttributeValues") or {}
        for name, placeholder in re.findall(r"(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)", body.get("KeyConditionExpression", "")):
            if names.get(name, name) == index.hash:
                return scalar(values.get(placeholder))
        conditions = body.get("KeyConditions") or {}
        if index.hash in conditions:
            return scalar(conditions[index.hash]["AttributeValueList"][0])
        return None

    def handle(self, target: str, raw: bytes, send: Any) -> tuple[int, list[tuple[str, str]], bytes]:
        """Forward one DynamoDB call (``send()``) and count it; returns the upstream answer."""
        operation = target.split(".", 1)[1]
        call = Call(operation, time.monotonic())
        self.last_call = call.start
        self.local.call = call
        if self.log_calls and self.latency:
            time.sleep(self.latency)
        try:
            return self._account(operation, json.loads(raw or b"{}"), send, call)
        finally:
            self.local.call = None
            call.end = self.last_call = time.monotonic()
            if self.log_calls:
                with self.count_lock:
                    self.calls.append(call)

    def _account(self, operation: str, body: dict[str, Any], send: Any, call: Call) -> tuple[int, list[tuple[str, str]], bytes]:
        if operation in WRITE_OPERATIONS:
            self.last_write = time.monotonic()
            return self._handle_write(operation, body, send)
        answer = send()
        status, _, text = answer
        if status != 200:
            return answer
        parsed = json.loads(text)
        call.items = items_read(operation, parsed)
        bill = {"GetItem": self._bill_get, "BatchGetItem": self._bill_batch_get, "TransactGetItems": self._bill_transact_get,
                "Query": self._bill_query, "Scan": self._bill_query}.get(operation)
        if bill is not None:
            bill(operation, body, parsed)
        return answer

    def _bill_get(self, _: str, body: dict[str, Any], parsed: dict[str, Any]) -> None:
        schema = self._schema(body["TableName"])
        if schema:
            size = item_size(parsed.get("Item"))
            self._add(schema.table, scalar(body["Key"].get(schema.table.hash)), rcu=read_units(size, bool(body.get("ConsistentRead"))))

    def _bill_batch_get(self, _: str, body: dict[str, Any], parsed: dict[str, Any]) -> None:
        for table, items in (parsed.get("Responses") or {}).items():
            schema = self._schema(table)
            if schema is None:
                continue
            consistent = bool((body["RequestItems"].get(table) or {}).get("ConsistentRead"))
            for item in items:
                self._add(schema.table, scalar(item.get(schema.table.hash)), rcu=read_units(item_size(item), consistent))

    def _bill_transact_get(self, _: str, body: dict[str, Any], parsed: dict[str, Any]) -> None:
        for request, response in zip(body["TransactItems"], parsed.get("Responses") or [], strict=False):
            get = request["Get"]
            schema = self._schema(get["TableName"])
            if schema:
                units = 2 * read_units(item_size(response.get("Item")), True)
                self._add(schema.table, scalar(get["Key"].get(schema.table.hash)), rcu=units)

    def _bill_query(self, operation: str, body: dict[str, Any], parsed: dict[str, Any]) -> None:
        schema = self._schema(body["TableName"])
        if schema is None:
            return
        index = schema.gsis.get(body.get("IndexName", ""), schema.table)
        items = parsed.get("Items") or []
        mean = (sum(item_size(i) for i in items) / len(items)) if items else 100
        scanned = int(parsed.get("ScannedCount", len(items)))
        size = sum(item_size(i) for i in items) + max(0, scanned - len(items)) * mean
        value = self._query_partition(body, index) if operation == "Query" else "<scan>"
        self._add(index, value, rcu=read_units(int(size), bool(body.get("ConsistentRead"))))

    def _writes_of(self, operation: str, body: dict[str, Any]) -> tuple[list[Write], list[tuple[str, dict[str, Any]]]]:
        """The items a write call writes, as ``(table, key, the item a Put sends or None)``, and the
        ``(table, key)`` of its condition checks."""
        if operation == "TransactWriteItems":
            requests = [next(iter(entry.items())) for entry in body["TransactItems"]]
        elif operation == "BatchWriteItem":
            requests = [("Put", {"TableName": table, "Item": r["PutRequest"]["Item"]}) if "PutRequest" in r
                        else ("Delete", {"TableName": table, "Key": r["DeleteRequest"]["Key"]})
                        for table, batch in body["RequestItems"].items() for r in batch]
        else:
            requests = [("Put" if operation == "PutItem" else operation, body)]
        writes: list[Write] = []
        checks: list[tuple[str, dict[str, Any]]] = []
        for kind, request in requests:
            table = request["TableName"]
            if kind == "ConditionCheck":
                checks.append((table, request["Key"]))
            elif kind == "Put":
                schema = self._schema(table)
                writes.append((table, self._key_of(schema, request["Item"]) if schema else {}, request["Item"]))
            else:
                writes.append((table, request["Key"], None))
        return writes, checks

    def _handle_write(self, operation: str, body: dict[str, Any], send: Any) -> tuple[int, list[tuple[str, str]], bytes]:
        writes, checks = self._writes_of(operation, body)
        transactional = operation == "TransactWriteItems"
        if not self.images and operation == "UpdateItem" and (schema := self._schema(body["TableName"])) is not None and not schema.gsis:
            # Images off, no index to account: billed by the item it leaves (one read after it, no lock).
            answer = send()
            if answer[0] == 200:
                self._count_write(schema, body["Key"], None, self._get_item(body["TableName"], body["Key"]), False)
            return answer
        read = [self.images or item is None for _, _, item in writes]
        if not any(read) and not checks:  # nothing to read around the write: no need to hold the others back
            answer = send()
            for table, key, item in writes:
                self._count(table, key, None, item, transactional)
            return answer
        with self.write_lock:
            olds = [self._get_item(t, k) if r else None for (t, k, _), r in zip(writes, read, strict=True)]
            answer = send()
            for (table, key, item), old, r in zip(writes, olds, read, strict=True):
                self._count(table, key, old, self._get_item(table, key) if r else item, transactional)
            for table, key in checks:
                schema = self._schema(table)
                if schema is not None:  # a transactional read of the checked item
                    units = 2 * read_units(item_size(self._get_item(table, key)), True)
                    self._add(schema.table, scalar(key.get(schema.table.hash)), rcu=units)
        return answer

    def _count(self, table: str, key: dict[str, Any], old: dict[str, Any] | None, new: dict[str, Any] | None,
               transactional: bool) -> None:
        schema = self._schema(table)
        if schema is not None:
            self._count_write(schema, key, old, new, transactional)


def proxy_server(recorder: Recorder, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server on ``port`` (0: a free one) forwarding everything to the embedded AWS, counting DynamoDB calls."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            target = self.headers.get("X-Amz-Target") or ""

            def send() -> tuple[int, list[tuple[str, str]], bytes]:
                return recorder.forward(self.command, self.path, headers, raw)

            status, response_headers, body = recorder.handle(target, raw, send) if target.startswith("DynamoDB_") else send()
            self.send_response(status)
            for name, value in response_headers:
                if name.lower() not in ("content-length", "connection", "transfer-encoding", "server", "date"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            if not isinstance(sys.exc_info()[1], ConnectionError):  # a client gone (a stack stopping) is not an error
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_quiet(recorder: Recorder, quiet_seconds: float = 3.0, bound_seconds: float = 3600) -> bool:
    """Wait until no DynamoDB call at all (read or write) passed the proxy for ``quiet_seconds``: the
    stream consumers are done (an indexer reading a batch's lists writes nothing for a while).
    Returns False when ``bound_seconds`` passed first."""
    deadline = time.monotonic() + bound_seconds
    while time.monotonic() - recorder.last_call < quiet_seconds:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def wait_idle(recorder: Recorder, quiet_seconds: float = 1.5, bound_seconds: float = 120) -> None:
    """Wait until no DynamoDB write passed the proxy for ``quiet_seconds`` (the stream consumers are done)."""
    deadline = time.monotonic() + bound_seconds
    while time.monotonic() - recorder.last_write < quiet_seconds and time.monotonic() < deadline:
        time.sleep(0.2)
