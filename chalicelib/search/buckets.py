"""Bucketed postings of number ranges: each value in its power-of-two bucket and in that bucket's group (pure).

A ``_min`` / ``_max`` filter cannot be answered from equality lists, and a value-sorted list
must be read whole before its newest entry is known. A value is therefore also filed in the
lists of its **buckets**, sorted like every other list of its domain (newest first for listings),
so that a range is the union of the buckets it covers, read newest first and joined with the
query's other restrictions (:mod:`chalicelib.search.join`). Buckets wholly inside the range are
exact; the (at most two) buckets at its ends hold values outside it too, and their candidates
are verified exactly on the item.

Buckets: ``p<e>`` holds the positive values in ``[2**e, 2**(e+1))`` for ``e`` in 1..:data:`TOP`
(``p00``: ``(0, 2)``; ``p<TOP>``: ``[2**TOP, inf)``), ``zero`` holds 0 and ``neg`` every negative
value (rare in the catalogue's fields; verified exactly). Power-of-two buckets follow the
geometric spread of prices, salaries and areas (each bucket at most doubles its lower end, so
an end bucket holds at most as many non-matching values as a range of the same ratio). The same
scheme as the logarithmic histogram bins of HdrHistogram and of Prometheus' exponential buckets.

**Groups**: ``g<k>`` holds the values of the :data:`GROUP` buckets ``p<GROUP*k>`` to
``p<GROUP*k+GROUP-1>`` (below ``p<TOP>``), so a value is filed twice (:func:`labels_of`) and a
range is covered by the groups wholly inside it and single buckets only at its ends
(:func:`overlapping`): a wide range reads a few lists instead of one per bucket (``rent <= 5000``:
``g02`` and ``p12`` for the five buckets ``p08``..``p12`` that hold rents), and sizes fewer. The
cover is disjoint, so a value is in exactly one of its lists. This is the trie of Lucene's numeric
range queries, each value indexed at several precisions and a range rewritten into the fewest
terms (U. Schindler, ``NumericRangeQuery``, Lucene 2.9, ``precisionStep``), on power-of-two buckets.
"""

from __future__ import annotations

import math
from decimal import Decimal

#: Highest bucket exponent: ``p40`` holds every value from 2**40 (about 1.1 x 10**12) up, which no salary,
#: rent, price or area of the catalogue reaches; such values are still found (the top bucket is verified
#: exactly when a range ends inside it), only not told apart by bucket. With the groups, a range's
#: cover (and its sizes' BatchGetItem) has at most ``2 x (GROUP - 1) + 40 / GROUP + 3`` lists: 19
#: (``listings.v5`` filed the buckets anew; before, ``TOP = 60`` without groups: up to 63).
TOP = 40


def bucket_of(value: Decimal) -> str:
    """The bucket label of ``value`` (a finite decimal)."""
    if value < 0:
        return "neg"
    if value == 0:
        return "zero"
    return f"p{_exponent(value):02d}"


def _exponent(value: Decimal) -> int:
    """``floor(log2(value))`` clamped to ``[0, TOP]`` (exact at powers of two)."""
    if value < 2:
        return 0
    exponent = math.floor(math.log2(value))  # float: exact enough, corrected below
    while Decimal(2) ** exponent > value:
        exponent -= 1
    while Decimal(2) ** (exponent + 1) <= value:
        exponent += 1
    return min(TOP, exponent)


def _interval(label: str) -> tuple[Decimal | None, Decimal | None, bool]:
    """``(low, high, high_open)`` of a bucket (``None``: unbounded)."""
    if label == "neg":
        return None, Decimal(0), True
    if label == "zero":
        return Decimal(0), Decimal(0), False
    exponent = int(label[1:])
    low = Decimal(0) if exponent == 0 else Decimal(2) ** exponent
    high = None if exponent == TOP else Decimal(2) ** (exponent + 1)
    return low, high, True


#: Buckets per group (Lucene's ``precisionStep``, on exponents): groups of four cover 2**0 to 2**40 in ten lists.
GROUP = 4


def group_of(label: str) -> str | None:
    """The group of bucket ``label`` (``None`` for ``neg``, ``zero`` and ``p<TOP>``, which have none)."""
    if not label.startswith("p") or int(label[1:]) >= TOP:
        return None
    return f"g{int(label[1:]) // GROUP:02d}"


def labels_of(value: Decimal) -> tuple[str, ...]:
    """Every list label ``value`` is filed under: its bucket (:func:`bucket_of`) and the bucket's group, if any."""
    label = bucket_of(value)
    group = group_of(label)
    return (label,) if group is None else (label, group)


ALL = ("neg", "zero", *(f"p{e:02d}" for e in range(TOP + 1)))
#: :func:`_interval` of every bucket, computed once (a range's planning asks for all of them).
_INTERVALS = {label: _interval(label) for label in ALL}
#: The buckets of each group, in ascending order.
_MEMBERS: dict[str, list[str]] = {
    group: [label for label in ALL if group_of(label) == group] for group in dict.fromkeys(filter(None, map(group_of, ALL)))
}


def overlapping(low: Decimal | None, high: Decimal | None) -> list[tuple[str, bool]]:
    """The disjoint cover of ``[low, high]`` (``None``: open end): the groups whose every bucket lies
    wholly inside, and the other buckets holding values within it, each with whether it lies wholly
    inside (exact) or must be verified, in ascending value order. Every value of the range is in
    exactly one of the lists (:func:`labels_of`)."""
    found = _buckets(low, high)
    exact = {label for label, inside in found if inside}
    cover: list[tuple[str, bool]] = []
    for label, inside in found:
        group = group_of(label)
        if group is not None and all(member in exact for member in _MEMBERS[group]):
            if label == _MEMBERS[group][0]:
                cover.append((group, True))
            continue
        cover.append((label, inside))
    return cover


def _buckets(low: Decimal | None, high: Decimal | None) -> list[tuple[str, bool]]:
    """The buckets holding values within ``[low, high]``, each with whether it lies wholly inside."""
    found: list[tuple[str, bool]] = []
    for label, (lo, hi, open_high) in _INTERVALS.items():
        # Empty intersection: the bucket ends before ``low`` or starts after ``high``.
        if low is not None and hi is not None and (hi < low or (open_high and hi == low)):
            continue
        if high is not None and lo is not None and lo > high:
            continue
        # A bucket lies inside when its lowest value is >= low (``neg`` has none) and its
        # highest is <= high (an open end ``hi`` bounds values below it: hi <= high suffices).
        lower_inside = low is None or (label != "neg" and lo is not None and lo >= low)
        upper_inside = high is None or (hi is not None and hi <= high)
        found.append((label, lower_inside and upper_inside))
    return found
