"""Planner statistics: the posting-list sizes a process read, remembered for a short time.

A search plans from the sizes of the lists it could read (:func:`chalicelib.search.postings.sizes`):
which path drives the page, how many entries each Query asks for. Reading them is one of the
three DynamoDB calls of a covered page. An inverted index keeps such term statistics at hand
(Lucene reads a term's ``docFreq`` from its in-memory term index, not per query); here the sizes
one request read plan the next requests naming the same lists for :data:`TTL_SECONDS`, and so does
the share of entries a covered read accepted (:func:`share`: how many entries its Queries ask for).

A remembered size is an estimate, and a plan made from estimates may only cost more, never
return other listings (a ``total`` may then be a lower bound, ``"gte"``, where sizes read would
have let the page count it: the API allows either). The callers keep to that rule
(``docs/search.md``, "Two-call pages: planner statistics"):
they plan from remembered sizes only paths whose answer comes from what they read (a covered
page counted from its entries, a range probed in value order), re-read the sizes of the lists
they passed over as empty with the page's listings and plan again from fresh sizes if one is
not, and take an exact total never from a remembered size. Every fresh read refreshes the sizes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cachetools import TTLCache

#: How long a size read plans later searches, in seconds. It bounds how stale an estimate is
#: (a list that grew from 50 to 500 entries meanwhile costs one page a larger read), not what
#: a search answers.
TTL_SECONDS = 60.0
#: Most sizes remembered (least recently used dropped first): a few hundred KB of memory.
MAX_LISTS = 20_000

#: Fewest entries a read must have checked for its share of accepted entries to be remembered.
MIN_OBSERVED = 20

_lock = threading.Lock()


@dataclass(frozen=True)
class _Remembered:
    sizes: TTLCache[str, int]  # list id -> entries
    shares: TTLCache[str, float]  # a covered read's key -> share of its entries accepted


_remembered: _Remembered | None = None


def _timer() -> float:
    """The caches' clock, in seconds (monotonic; tests patch it instead of sleeping)."""
    return time.monotonic()


def _caches() -> _Remembered:
    global _remembered
    if _remembered is None:
        from cachetools import TTLCache  # with the first search, not at cold start

        _remembered = _Remembered(TTLCache(maxsize=MAX_LISTS, ttl=TTL_SECONDS, timer=lambda: _timer()),
                                  TTLCache(maxsize=MAX_LISTS, ttl=TTL_SECONDS, timer=lambda: _timer()))
    return _remembered


def remembered(names: Iterable[str]) -> dict[str, int] | None:
    """The remembered size of every list of ``names`` (entries), or ``None`` when one is not
    remembered or older than :data:`TTL_SECONDS` (then read them all: one BatchGetItem either way)."""
    with _lock:
        sizes = _caches().sizes
        found: dict[str, int] = {}
        for name in names:
            size = sizes.get(name)
            if size is None:
                return None
            found[name] = size
        return found


def remember(sizes: Mapping[str, int]) -> None:
    """Remember sizes just read from the index (list id -> entries)."""
    with _lock:
        _caches().sizes.update(sizes)


def share(check: str) -> float | None:
    """The share of entries a covered read of the same lists with the same checks accepted
    (``check``: the caller's key naming both), or ``None`` when none is remembered.

    Like a size, an estimate (the pace of the next read's Queries, :class:`chalicelib.search.join.Pace`):
    a share that turned out too high costs that read one more Query, never a different answer.
    """
    with _lock:
        return _caches().shares.get(check)


def remember_share(check: str, accepted: int, read: int) -> None:
    """Remember that a covered read ``check`` accepted ``accepted`` of the ``read`` entries it read
    (only when it read at least :data:`MIN_OBSERVED`: a share of a few entries says little)."""
    if read < MIN_OBSERVED:
        return
    with _lock:
        _caches().shares[check] = max(accepted, 1) / read


def forget() -> None:
    """Drop every remembered size and share (tests; a process starts with none)."""
    with _lock:
        _caches().sizes.clear()
        _caches().shares.clear()
