"""Conjunctions by zigzag (leapfrog) merge join of sorted posting lists (pure over a read port).

A conjunction ``A and B and ...`` is answered by walking its *restrictions* together. Each
restriction is a union of posting lists (one list, a word's stem and prefix lists, a number
range's buckets, one list per category of the scope); every list of a join sorts an item under
the same key (for listings ``<createdAt>#<listingId>``, for profiles the result order), so a
position means the same item in every list. The walk keeps a *target* position and repeatedly:

1. seeks every restriction to the target: the first entry at or beyond it (each list answers
   from the entries it already buffered, or with one ``Query`` whose key condition starts at
   the target: ``sk <= target`` newest first);
2. if every restriction's head is the same item, that item is a hit, and the target moves just
   past it; otherwise the target jumps to the head furthest ahead (no item before it can be in
   every restriction).

This is the merge join of equality filters of Google App Engine Datastore ("zigzag merge
join": each step a scan starting at the current candidate) and the leapfrog triejoin's unary
case (T. L. Veldhuizen, "Leapfrog Triejoin", ICDT 2014). Its reads follow the answer, not the
length of the largest list: a list is read only around the positions where the others have
entries. The seeks of one step are independent (they all start at the same target), so the
lists that must be read in a step are read **in parallel** (threads): a step costs one
sequential round trip however many lists it reads.

Each Query asks for the list's ``limit`` entries (the planner sizes it from the lists' measured
sizes, :func:`limits`), so that the walk usually finds its answers in a few steps; a list whose
buffer is passed by a jump is read again from the new target, never from where it stopped.

**Covering entries**: every entry carries its item's projection
(:mod:`chalicelib.search.postings`), so a restriction the domain can check on that projection
need not be read at all: ``accept`` drops the entries that fail it as they are met, and a
:class:`Pace` sizes each further Query from the share of entries accepted so far (a one-list
read whose other filters are checked on the entry, :mod:`chalicelib.search.planner`).

A hit carries whether it is **exact**: every restriction held it in a list whose entries all
satisfy that restriction (a number bucket wholly inside the range, an equality list). Hits that
are not exact are candidates the domain verifies with its matcher; exact hits can be counted
(``page=N`` skipping pages) without reading their items.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from chalicelib.search.postings import Posting, PostingPage

#: ``read(list_name, limit, *, descending, low, high) -> PostingPage``: the posting store's
#: :func:`chalicelib.search.postings.read` (or an in-memory fake of it in tests).
Read = Callable[..., PostingPage]
#: Fewest and most entries one Query of a list asks for (a seek past an entry equal to the
#: target needs two; DynamoDB returns at most 1 MB, far more than 1,000 small entries).
MIN_LIMIT = 2
MAX_LIMIT = 1000
#: Threads reading the lists of one step (one step reads at most one Query per list).
WORKERS = 8


@dataclass(frozen=True)
class Member:
    """One posting list of a restriction."""

    #: The list id.
    name: str
    #: Entries per Query of this list.
    limit: int
    #: Every entry of the list satisfies the restriction (False: a number bucket reaching past the range's end, a word
    #: list that also holds other words).
    exact: bool = True
    #: The list's share of its restriction's entries (sizes its Queries under a :class:`Pace`).
    share: float = 1.0


class Hit(NamedTuple):
    """An item held by every restriction: its sort key, id and whether no verification is needed.

    A named tuple (cheap to build: a page yields hundreds), like :class:`Posting`.
    """

    sort: str
    item_id: str
    exact: bool
    #: The item's covering projection, as its entry carries it (``None``: none stored).
    data: Mapping[str, str] | None = None


class Pace:
    """Entries per Query of a read whose entries are accepted or dropped on their projection.

    The first Queries ask for ``want / rate`` entries (``rate``: the planner's estimate of the
    share of entries accepted, from the measured list sizes); each later one for what the
    page still needs at the share observed so far, the estimate counting as :data:`PRIOR`
    entries (a Beta-prior mean), and no margin (a short first read costs one small step).

    Parameters
    ----------
    want:
        Hits the caller expects to take (page size + 1).
    rate:
        Estimated share of entries accepted, in (0, 1].
    """

    #: Weight of the planner's estimate, in entries read.
    PRIOR = 30
    MARGIN = 1.0

    def __init__(self, want: int, rate: float) -> None:
        self.want = max(1, want)
        self.rate = min(1.0, max(rate, 1e-3))
        self.read = 0
        self.hits = 0
        self.lock = threading.Lock()  # the lists of one step are read on threads

    def observe(self, entries: int) -> None:
        """Count ``entries`` read."""
        with self.lock:
            self.read += entries

    def hit(self) -> None:
        """Count one accepted hit."""
        self.hits += 1

    def limit(self, share: float) -> int:
        """Entries the next Query of a list holding ``share`` of the restriction should ask for."""
        with self.lock:
            rate = (self.hits + self.rate * self.PRIOR) / (self.read + self.PRIOR)
            remaining = self.want - self.hits if self.hits < self.want else max(2, self.want // 2)
        return max(MIN_LIMIT, min(MAX_LIMIT, math.ceil(share * (remaining * self.MARGIN + 1) / max(rate, 1e-3)) + 1))


class _Run:
    """One list's read state: the entries buffered from the last Query, starting at ``origin``."""

    def __init__(self, member: Member, read: Read, descending: bool, low: str | None, high: str | None,
                 pace: Pace | None = None) -> None:
        self.member = member
        self.pace = pace
        self.read = read
        self.descending = descending
        self.low = low
        self.high = high
        self.buffer: list[Posting] | None = None
        self.position = 0
        self.more = True
        self.limit = max(MIN_LIMIT, min(MAX_LIMIT, member.limit))

    def _ahead(self, a: str, b: str) -> bool:
        return a < b if self.descending else a > b

    def _passes(self, sort: str, key: str | None, strict: bool) -> bool:
        return key is None or self._ahead(sort, key) or (sort == key and not strict)

    def head(self, key: str | None, strict: bool) -> tuple[bool, Posting | None]:
        """``(known, entry)``: the first buffered entry at (or, ``strict``, past) ``key``, or
        ``(True, None)`` when the list has nothing there, ``(False, None)`` when a read is needed.

        Targets only move forward during a walk, so the scan resumes where the last one stopped.
        """
        if self.buffer is None:
            return False, None
        while self.position < len(self.buffer) and not self._passes(self.buffer[self.position].sort, key, strict):
            self.position += 1
        if self.position < len(self.buffer):
            return True, self.buffer[self.position]
        return not self.more, None

    def fetch(self, key: str | None) -> None:
        """One Query of the list from ``key`` (inclusive) within the walk's bounds."""
        low, high = self.low, self.high
        if key is not None:
            if self.descending:
                high = key if high is None or key < high else high
            else:
                low = key if low is None or key > low else low
        if low is not None and high is not None and low > high:
            self.buffer, self.position, self.more = [], 0, False
            return
        if self.pace is not None:
            self.limit = self.pace.limit(self.member.share)
        page = self.read(self.member.name, self.limit, descending=self.descending, low=low, high=high)
        if self.pace is not None:
            self.pace.observe(len(page.postings))
        self.buffer, self.position, self.more = page.postings, 0, page.more and bool(page.postings)


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="search-join")


def _fetch_all(runs: Sequence[_Run], key: str | None, parallel: bool) -> None:
    if len(runs) == 1 or not parallel:
        for run in runs:
            run.fetch(key)
        return
    list(_pool().map(lambda run: run.fetch(key), runs))  # list(): wait, and re-raise a failed read


def intersect(
    restrictions: Sequence[Sequence[Member]],
    read: Read,
    *,
    descending: bool,
    after: str | None = None,
    low: str | None = None,
    high: str | None = None,
    parallel: bool = True,
    accept: Callable[[Posting], bool] | None = None,
    pace: Pace | None = None,
) -> Iterator[Hit]:
    """Yield the items held by every restriction, in list order, lazily.

    Parameters
    ----------
    restrictions:
        The conjunction: each a non-empty union of lists (an empty sequence yields nothing).
    read:
        The posting store's read (:data:`Read`).
    descending:
        The lists' read order (largest sort first).
    after:
        Exclusive start (a cursor's position): only entries strictly beyond it.
    low, high:
        Inclusive bounds on every list's sort (e.g. the profiles' level bound).
    parallel:
        Read the lists of one step on threads (False: one after the other, for tests).
    accept:
        The domain's check of an entry's projection: items whose entry fails it are passed
        over without being yielded (``None``: every item held by every restriction is a hit).
    pace:
        Sizes every Query from the hits accepted so far (``None``: each member's ``limit``).

    Yields
    ------
    Hit
        Each item once, with ``exact`` True when every restriction held it in an exact list.
    """
    if not restrictions or any(not r for r in restrictions):
        return
    runs = [[_Run(m, read, descending, low, high, pace) for m in r] for r in restrictions]
    if len(runs) == 1 and len(runs[0]) == 1:  # one list: its entries in order, no heads to compare
        yield from _walk(runs[0][0], after, accept, pace)
        return
    key, strict = after, after is not None
    while True:
        pending = [run for union in runs for run in union if not run.head(key, strict)[0]]
        while pending:  # a Query can return only the entry equal to a strict target: read on
            _fetch_all(pending, key, parallel)
            pending = [run for run in pending if not run.head(key, strict)[0]]
            for run in pending:
                run.limit = min(MAX_LIMIT, 2 * run.limit)
        heads: list[tuple[Posting, bool]] = []
        for union in runs:
            found = [(entry, run.member.exact) for run in union if (entry := run.head(key, strict)[1]) is not None]
            if not found:
                return
            nearest = min(found, key=lambda f: f[0].sort) if not descending else max(found, key=lambda f: f[0].sort)
            exact = any(ok for entry, ok in found if entry.sort == nearest[0].sort)
            heads.append((nearest[0], exact))
        sorts = [entry.sort for entry, _ in heads]
        furthest = min(sorts) if descending else max(sorts)
        if all(sort == furthest for sort in sorts):
            entry = heads[0][0]
            if accept is None or accept(entry):
                if pace is not None:
                    pace.hit()
                yield Hit(furthest, entry.item_id, all(exact for _, exact in heads), entry.data)
            key, strict = furthest, True
        else:
            key, strict = furthest, False


def _walk(run: _Run, after: str | None, accept: Callable[[Posting], bool] | None, pace: Pace | None) -> Iterator[Hit]:
    """:func:`intersect` of one list: each buffered entry in turn, a Query whenever the buffer runs out."""
    key, strict = after, after is not None
    exact = run.member.exact
    while True:
        if not run.head(key, strict)[0]:
            run.fetch(key)
            while not run.head(key, strict)[0]:  # a Query can return only the entry equal to a strict target: read on
                run.limit = min(MAX_LIMIT, 2 * run.limit)
                run.fetch(key)
        buffer, start = run.buffer or [], run.position
        if start >= len(buffer):
            return
        for entry in buffer[start:]:
            run.position += 1
            if accept is None or accept(entry):
                if pace is not None:
                    pace.hit()
                yield Hit(entry.sort, entry.item_id, exact, entry.data)
        key, strict = buffer[-1].sort, True


def limits(sizes: Sequence[int], universe: int, want: int) -> list[int]:
    """Entries per Query for each restriction of a join, from the restrictions' measured sizes.

    Assuming independent restrictions, the answer's density is the product of their fractions
    ``f_i = size_i / universe``, so ``want`` hits lie among about ``want / prod(f)`` items, of
    which restriction ``i`` holds ``want / prod_{j != i} f_j``: reading that many in the first
    Query usually completes the page in one step. Clamped to [:data:`MIN_LIMIT`, 100] per
    restriction (a wrong guess costs another step, never a large read).

    Parameters
    ----------
    sizes:
        Entries per restriction (the sum of its lists' sizes).
    universe:
        Items the restrictions select from (e.g. the ACTIVE listings of the scope).
    want:
        Hits the caller expects to take (page size + 1, or the score window).
    """
    base = max(universe, max(sizes, default=1), 1)
    fractions = [max(size, 1) / base for size in sizes]
    result = []
    for index in range(len(sizes)):
        others = math.prod(f for j, f in enumerate(fractions) if j != index)
        result.append(max(MIN_LIMIT, min(100, math.ceil(want / others) + 1)))
    return result


#: What reading one posting entry costs relative to reading one item to verify it: DynamoDB
#: charges reads by size (one read unit per 4 KB, AWS docs "Read/write capacity mode"); an entry
#: (list id, sort key, item id) is about 100 bytes, a listing or a user about 1 KB.
ENTRY_WEIGHT = 0.1


def worth_joining(fractions: Sequence[float], most: int) -> int:
    """How many of the restrictions (``fractions`` of the universe each holds, smallest first) to join.

    Finding a page among ``R`` items of the universe costs, per joined restriction ``i``, its
    ``R * f_i`` entries (weighted :data:`ENTRY_WEIGHT`), plus one item read per candidate the
    join leaves, ``R * prod(f_i)``, verified with the domain's matcher. Restrictions are added
    smallest first while the cost falls (at most ``most``); at least the smallest is read.
    """
    best, chosen = math.inf, 1
    for count in range(1, min(most, len(fractions)) + 1):
        taken = fractions[:count]
        cost = ENTRY_WEIGHT * sum(taken) + math.prod(taken)
        if cost < best:
            best, chosen = cost, count
    return chosen


def members(lists: Sequence[tuple[str, bool]], sizes: Mapping[str, int], limit: int) -> list[Member]:
    """A restriction's non-empty lists ``(name, exact)`` as members sharing its ``limit`` by their sizes."""
    total = sum(sizes.get(name, 0) for name, _ in lists) or 1
    return [
        Member(name, math.ceil(limit * sizes.get(name, 0) / total) + 1, exact, sizes.get(name, 0) / total)
        for name, exact in lists if sizes.get(name, 0)
    ]
