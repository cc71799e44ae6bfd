"""Lazy newest-first merge of write-sharded index partitions (pure; no DynamoDB here).

Each shard is a callable ``fetch(before, limit) -> (keys, more)`` returning up to ``limit`` sort
keys strictly below ``before`` (``None``: from the newest), newest first, and whether the shard
may hold more. :func:`merge_newest` yields the keys of all shards in one descending order,
asking a shard for more only when its buffered keys run out, and sizing each request by what
the page still needs divided over the shards, so the keys read stay close to the keys used
(a k-way merge, D. E. Knuth, TAOCP vol. 3, §5.4.1, with lazily filled runs).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Sequence

#: ``fetch(before, limit) -> (keys newest first, shard may hold more)``.
Fetch = Callable[[str | None, int], tuple[list[str], bool]]


class _Shard:
    def __init__(self, fetch: Fetch, before: str | None) -> None:
        self.fetch = fetch
        self.before = before
        self.buffer: list[str] = []
        self.more = True

    def refill(self, limit: int) -> None:
        keys, more = self.fetch(self.before, limit)
        self.buffer = keys
        self.more = more and bool(keys)
        if keys:
            self.before = keys[-1]


def merge_newest(shards: Sequence[Fetch], want: int, before: str | None = None) -> Iterator[str]:
    """Yield the sort keys of every shard below ``before``, largest (newest) first.

    Parameters
    ----------
    shards:
        One fetch function per shard.
    want:
        How many keys the caller expects to take (sizes the requests; taking more is allowed,
        then each further request asks for one key per shard).
    before:
        Exclusive upper bound (the last key of the previous page), or ``None``.
    """
    runs = [_Shard(fetch, before) for fetch in shards]
    taken = 0

    def limit() -> int:
        return max(1, math.ceil((want - taken) / len(runs)))

    heap: list[tuple[_Reverse, int, int]] = []  # (key reversed, shard index, position in buffer)
    for index, run in enumerate(runs):
        run.refill(limit())
        if run.buffer:
            heapq.heappush(heap, (_Reverse(run.buffer[0]), index, 0))
    while heap:
        wrapped, index, position = heapq.heappop(heap)
        yield wrapped.key
        taken += 1
        run = runs[index]
        if position + 1 < len(run.buffer):
            heapq.heappush(heap, (_Reverse(run.buffer[position + 1]), index, position + 1))
        elif run.more:
            run.refill(limit())
            if run.buffer:
                heapq.heappush(heap, (_Reverse(run.buffer[0]), index, 0))


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
