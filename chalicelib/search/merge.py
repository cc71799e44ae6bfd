"""Lazy newest-first merge of write-sharded index partitions (pure; no DynamoDB here).

Each shard is a callable ``fetch(before, limit) -> (entries, more)`` returning up to ``limit``
entries (sort keys, or items with a sort key) strictly below ``before`` (``None``: from the
newest), newest first, and whether the shard may hold more. :func:`merge_newest` yields the
entries of all shards in one descending order of their sort keys,
asking a shard for more only when its buffered keys run out, and sizing each request by what
the page still needs divided over the shards, so the keys read stay close to the keys used
(a k-way merge, D. E. Knuth, TAOCP vol. 3, §5.4.1, with lazily filled runs).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: Largest request once the merge reads past what the caller expected.
MAX_LIMIT = 1000
#: ``fetch(before, limit) -> (entries newest first, shard may hold more)``.
Fetch = Callable[[str | None, int], tuple[list[Any], bool]]


def _identity(entry: Any) -> str:
    return str(entry)


class _Shard:
    def __init__(self, fetch: Fetch, before: str | None, key: Callable[[Any], str]) -> None:
        self.fetch = fetch
        self.before = before
        self.key = key
        self.buffer: list[Any] = []
        self.more = True
        self.last_limit = 0

    def refill(self, limit: int) -> None:
        self.last_limit = limit
        entries, more = self.fetch(self.before, limit)
        self.buffer = entries
        self.more = more and bool(entries)
        if entries:
            self.before = self.key(entries[-1])


def merge_newest(
    shards: Sequence[Fetch], want: int, before: str | None = None, key: Callable[[Any], str] = _identity
) -> Iterator[Any]:
    """Yield the entries of every shard below ``before``, largest (newest) sort key first.

    Parameters
    ----------
    shards:
        One fetch function per shard.
    want:
        How many entries the caller expects to take (sizes the requests; taking more is
        allowed, then each further request of a shard asks for twice its previous one, up to
        :data:`MAX_LIMIT`).
    before:
        Exclusive upper bound (the last key of the previous page), or ``None``.
    key:
        The sort key of an entry (entries are their own keys by default).
    """
    runs = [_Shard(fetch, before, key) for fetch in shards]
    taken = 0

    def limit(run: _Shard | None = None) -> int:
        if taken < want or run is None:
            return max(1, math.ceil((want - taken) / len(runs)))
        # Past ``want`` the caller keeps reading (e.g. a rare filter): ask for twice as many each time.
        return min(MAX_LIMIT, max(2, 2 * run.last_limit))

    heap: list[tuple[_Reverse, int, int]] = []  # (key reversed, shard index, position in buffer)
    for index, run in enumerate(runs):
        run.refill(limit())
        if run.buffer:
            heapq.heappush(heap, (_Reverse(key(run.buffer[0])), index, 0))
    while heap:
        _, index, position = heapq.heappop(heap)
        run = runs[index]
        yield run.buffer[position]
        taken += 1
        if position + 1 < len(run.buffer):
            heapq.heappush(heap, (_Reverse(key(run.buffer[position + 1])), index, position + 1))
        elif run.more:
            run.refill(limit(run))
            if run.buffer:
                heapq.heappush(heap, (_Reverse(key(run.buffer[0])), index, 0))


class _Reverse:
    """Orders strings descending inside :mod:`heapq`'s min-heap."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    def __lt__(self, other: _Reverse) -> bool:
        return self.key > other.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reverse) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)
