"""The engine's planner of conjunctions over covering posting entries (pure).

A domain describes a query as **restrictions**, one per filter or ``q`` term, each with the
measured size of the posting lists that hold it (one BatchGetItem of the lists' sizes) and
whether its entries' projection can check it (``covered``: a select or number value, a role, a
country, a skill; a ``q`` term is not, its words are on the item). :func:`drive` picks the one
restriction whose lists are read (the *driver*): the others are checked on each entry as it is
read (covered ones, no item read) or on the item (uncovered ones, on the page's items only).

Cost of driving with restriction ``d`` to find ``want`` matches, with ``f_i`` the share of the
``universe`` holding restriction ``i`` (restrictions assumed independent, as System R's
selectivity estimates do: P. G. Selinger et al., "Access path selection in a relational
database management system", SIGMOD 1979):

* the entries read: ``want / (p_entry * p_item)`` (at most the driver's size), where
  ``p_entry`` is the product of the covered ``f_i`` (``i != d``; for the driver, the share of its
  entries that satisfy it: a number bucket at a range's end holds values outside it) and
  ``p_item`` that of the uncovered ones;
* the items read: the entries that pass the entry checks, ``entries * p_entry``.

Both are counted alike (the issue's budgets count items of any kind; an entry is smaller, which
the byte counts show). The smallest total wins; ties go to the smaller driver. :class:`Drive`
also carries ``p_entry``, the prior of the read's :class:`chalicelib.search.join.Pace`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Restriction:
    """One filter or term of a conjunction, as the planner sees it."""

    #: What it stands for (logs, tests).
    label: str
    #: Entries of its lists (0 with no lists: it cannot drive).
    size: int
    #: Entries expected to satisfy it (``size`` when every list is exact for it).
    hits: float
    #: Checkable on an entry's projection.
    covered: bool
    #: Has lists to read (a term without a list, a filter without an index: checked only).
    readable: bool = True


@dataclass(frozen=True)
class Drive:
    """The planner's choice: which restriction to read, and what that is expected to cost."""

    #: Index of the driver in the restrictions.
    index: int
    #: Expected entries read and items read.
    entries: float
    items: float
    #: Expected share of the driver's entries that pass the entry checks (the pace's prior).
    entry_rate: float
    #: Expected share of the entries passing those checks whose items then match.
    item_rate: float


#: Share assumed for a restriction that has no measured size (a term without lists).
UNKNOWN_SHARE = 0.5


def _share(restriction: Restriction, universe: int) -> float:
    if not restriction.readable:
        return UNKNOWN_SHARE
    return min(1.0, max(restriction.hits, 0.5) / max(universe, 1))


def drive(restrictions: Sequence[Restriction], universe: int, want: int) -> Drive | None:
    """The cheapest driver of ``restrictions`` (see the module docstring), or ``None`` when none can drive.

    Parameters
    ----------
    restrictions:
        The conjunction.
    universe:
        Items the restrictions select from (e.g. the ACTIVE listings of the scope).
    want:
        Matches the caller needs (page size + 1).
    """
    best: Drive | None = None
    best_cost = math.inf
    shares = [_share(r, universe) for r in restrictions]
    for index, driver in enumerate(restrictions):
        if not driver.readable or driver.size <= 0:
            continue
        own = min(1.0, max(driver.hits, 0.5) / driver.size)
        p_entry = math.prod(s for i, (r, s) in enumerate(zip(restrictions, shares, strict=True)) if i != index and r.covered)
        p_item = math.prod(s for i, (r, s) in enumerate(zip(restrictions, shares, strict=True)) if i != index and not r.covered)
        if driver.covered:
            p_entry *= own
        else:
            p_item *= own
        entries = min(float(driver.size), want / max(p_entry * p_item, 1e-9))
        items = entries * p_entry
        cost = entries + items
        if cost < best_cost or (cost == best_cost and best is not None and driver.size < restrictions[best.index].size):
            best, best_cost = Drive(index, entries, items, p_entry, p_item), cost
    return best
