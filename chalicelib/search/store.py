"""The storage port of the engine: sorted lists of items in partitions, read and written in steps.

The engine sees its index as partitions (``pk``) of items sorted by ``sk`` (text order) and
asks for all the reads of one step at once (:meth:`Store.read`): ranges of lists and items by
key. :class:`DynamoStore` sends them together (parallel Queries, BatchGetItem in chunks of 100),
so a step costs one sequential round trip; :class:`MemoryStore` keeps the same model in
memory for unit and property tests. Writes are idempotent puts and deletes (BatchWriteItem,
25 per call, calls in parallel), counter additions (UpdateItem ``ADD``, in parallel; the
writer sends its puts, deletes and additions in one step) and version-conditioned puts (``attribute_not_exists(v) OR v < :v``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from chalicelib.kernel.config import settings
from chalicelib.kernel.threads import ContextPool
from chalicelib.persistence import storage

Key = tuple[str, str]
Item = dict[str, Any]

#: Requests of one step in flight at once (threads of :class:`DynamoStore`).
PARALLEL = 16
#: Threads of the reads of a step (:meth:`DynamoStore.read`; botocore's pool holds 32 connections,
#: ``chalicelib.persistence.storage``): one Query per list of a step, up to four scopes of a search without a
#: category, go out at once.
READ_PARALLEL = 32


#: The threads of a step's reads and of the writer's calls, started once per process: a step's calls
#: leave together instead of each waiting for a new thread, so they overlap as one round trip.
_READERS = ContextPool(READ_PARALLEL, "search-read")
_WRITERS = ContextPool(PARALLEL, "search-write")


@dataclass(frozen=True)
class Range:
    """A read of one list: items of partition ``pk`` whose ``sk`` starts with ``begins``, after
    ``after`` (exclusive) in ascending order, at most ``limit``."""

    pk: str
    after: str | None = None
    begins: str = ""
    limit: int = 100


@dataclass(frozen=True)
class Slice:
    """What a :class:`Range` returned: ``items`` in order and whether more may follow."""

    items: list[Item]
    more: bool


class Store(Protocol):
    """The engine's storage port."""

    def read(self, ranges: Sequence[Range], keys: Sequence[Key]) -> tuple[list[Slice], dict[Key, Item]]:
        """One step: every range (in order) and every item by key (missing ones absent)."""
        ...

    def write(self, puts: Sequence[Item], deletes: Sequence[Key]) -> None:
        """Put and delete items (idempotent; a key appears once)."""
        ...

    def add(self, changes: Sequence[tuple[Key, int]]) -> list[int]:
        """Add each delta to attribute ``n`` of its item (created at 0); the new values, in order."""
        ...

    def put_newer(self, items: Sequence[Item]) -> list[bool]:
        """Put each item unless the stored one has a ``v`` at least its own; which were written."""
        ...

    def write_and_add(self, puts: Sequence[Item], deletes: Sequence[Key], changes: Sequence[tuple[Key, int]]) -> list[int]:
        """One step of :meth:`write` and :meth:`add` (keys of the two apart); the new values of ``changes``, in order."""
        ...


@dataclass
class MemoryStore:
    """The port in memory (tests): partitions of items sorted by ``sk`` on read."""

    partitions: dict[str, dict[str, Item]]
    steps: int = 0

    def __init__(self) -> None:
        self.partitions = {}
        self.steps = 0

    def _range(self, wanted: Range) -> Slice:
        part = self.partitions.get(wanted.pk, {})
        keys = sorted(k for k in part if k.startswith(wanted.begins) and (wanted.after is None or k > wanted.after))
        return Slice([dict(part[k]) for k in keys[:wanted.limit]], len(keys) > wanted.limit)

    def read(self, ranges: Sequence[Range], keys: Sequence[Key]) -> tuple[list[Slice], dict[Key, Item]]:
        """See :meth:`Store.read`."""
        self.steps += 1
        found = {k: dict(self.partitions[k[0]][k[1]]) for k in keys if k[1] in self.partitions.get(k[0], {})}
        return [self._range(r) for r in ranges], found

    def write(self, puts: Sequence[Item], deletes: Sequence[Key]) -> None:
        """See :meth:`Store.write`."""
        for pk, sk in deletes:
            self.partitions.get(pk, {}).pop(sk, None)
        for item in puts:
            self.partitions.setdefault(item["pk"], {})[item["sk"]] = dict(item)

    def add(self, changes: Sequence[tuple[Key, int]]) -> list[int]:
        """See :meth:`Store.add`."""
        values = []
        for (pk, sk), delta in changes:
            item = self.partitions.setdefault(pk, {}).setdefault(sk, {"pk": pk, "sk": sk, "n": 0})
            item["n"] = int(item.get("n", 0)) + delta
            values.append(item["n"])
        return values

    def write_and_add(self, puts: Sequence[Item], deletes: Sequence[Key], changes: Sequence[tuple[Key, int]]) -> list[int]:
        """See :meth:`Store.write_and_add`."""
        self.write(puts, deletes)
        return self.add(changes)

    def put_newer(self, items: Sequence[Item]) -> list[bool]:
        """See :meth:`Store.put_newer`."""
        written = []
        for item in items:
            old = self.partitions.get(item["pk"], {}).get(item["sk"])
            ok = old is None or int(old["v"]) < int(item["v"])
            if ok:
                self.partitions.setdefault(item["pk"], {})[item["sk"]] = dict(item)
            written.append(ok)
        return written


class DynamoStore:
    """The port on one DynamoDB table of string keys ``pk`` and ``sk`` (the SearchIndex table)."""

    def __init__(self, table: str) -> None:
        self.table = table

    def _query(self, wanted: Range) -> Slice:
        condition, values = "pk = :pk", {":pk": wanted.pk}
        if wanted.begins:
            condition += " AND begins_with(sk, :b)"
            values[":b"] = wanted.begins
        params: dict[str, Any] = {
            "KeyConditionExpression": condition, "ExpressionAttributeValues": storage.to_item(values),
            "Limit": wanted.limit,
        }
        if wanted.after is not None:
            params["ExclusiveStartKey"] = storage.to_item({"pk": wanted.pk, "sk": wanted.after})
        items, last = storage.query_page(self.table, **params)
        return Slice(items, last is not None)

    def _get(self, chunk: Sequence[Key]) -> list[Item]:
        return storage.batch_get(self.table, [{"pk": pk, "sk": sk} for pk, sk in chunk])

    def read(self, ranges: Sequence[Range], keys: Sequence[Key]) -> tuple[list[Slice], dict[Key, Item]]:
        """See :meth:`Store.read`: every Query and BatchGetItem of the step in parallel (:data:`_READERS`)."""
        unique = list(dict.fromkeys(keys))
        chunks = [unique[i:i + 100] for i in range(0, len(unique), 100)]
        tasks: list[Callable[[], Any]] = [functools.partial(self._query, r) for r in ranges]
        tasks += [functools.partial(self._get, c) for c in chunks]
        results = _READERS.map(lambda task: task(), tasks)
        found = {(i["pk"], i["sk"]): i for part in results[len(ranges):] for i in part}
        return results[:len(ranges)], found

    def _batch_write(self, requests: list[dict[str, Any]]) -> None:
        storage.batch_write(self.table, requests)

    @staticmethod
    def _write_chunks(puts: Sequence[Item], deletes: Sequence[Key]) -> list[list[dict[str, Any]]]:
        """The BatchWriteItem requests of ``puts`` and ``deletes``, 25 per call."""
        requests = [{"PutRequest": {"Item": storage.to_item(i)}} for i in puts]
        requests += [{"DeleteRequest": {"Key": storage.to_item({"pk": pk, "sk": sk})}} for pk, sk in deletes]
        return [requests[i:i + 25] for i in range(0, len(requests), 25)]

    def write(self, puts: Sequence[Item], deletes: Sequence[Key]) -> None:
        """See :meth:`Store.write`: BatchWriteItem of 25 requests, the calls in parallel."""
        _WRITERS.map(self._batch_write, self._write_chunks(puts, deletes))

    def write_and_add(self, puts: Sequence[Item], deletes: Sequence[Key], changes: Sequence[tuple[Key, int]]) -> list[int]:
        """See :meth:`Store.write_and_add`: the BatchWriteItem and UpdateItem calls of :meth:`write`
        and :meth:`add` in one pool, so the step is one round trip."""
        tasks: list[Callable[[], Any]] = [functools.partial(self._batch_write, c) for c in self._write_chunks(puts, deletes)]
        tasks += [functools.partial(self._add, c) for c in changes]
        results = _WRITERS.map(lambda task: task(), tasks)
        return [int(n) for n in results[len(tasks) - len(changes):]]

    def _add(self, change: tuple[Key, int]) -> int:
        (pk, sk), delta = change
        response = storage.dynamodb().update_item(
            TableName=self.table, Key=storage.to_item({"pk": pk, "sk": sk}), UpdateExpression="ADD n :d",
            ExpressionAttributeValues=storage.to_item({":d": delta}), ReturnValues="UPDATED_NEW",
        )
        return int(response["Attributes"]["n"]["N"])

    def add(self, changes: Sequence[tuple[Key, int]]) -> list[int]:
        """See :meth:`Store.add`: one UpdateItem each, in parallel."""
        return _WRITERS.map(self._add, list(changes))

    def _put_newer(self, item: Item) -> bool:
        try:
            storage.put(self.table, item, "attribute_not_exists(v) OR v < :v", ExpressionAttributeValues=storage.values(v=item["v"]))
        except storage.ConditionFailed:
            return False
        return True

    def put_newer(self, items: Sequence[Item]) -> list[bool]:
        """See :meth:`Store.put_newer`: one conditional PutItem each, in parallel."""
        return _WRITERS.map(self._put_newer, list(items))


def search_index() -> DynamoStore:
    """The SearchIndex table as the engine's store."""
    return DynamoStore(settings().SEARCH_INDEX_TABLE)


def keys_of(items: Iterable[Item]) -> list[Key]:
    """The ``(pk, sk)`` keys of ``items``."""
    return [(i["pk"], i["sk"]) for i in items]
