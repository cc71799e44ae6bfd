"""Bucketed postings of number ranges: one posting per power-of-two bucket of a value (pure).

A ``_min`` / ``_max`` filter cannot be answered from equality lists, and a value-sorted list
must be read whole before its newest entry is known. A value is therefore also filed in the
list of its **bucket**, sorted like every other list of its domain (newest first for listings),
so that a range is the union of the buckets it overlaps, read newest first and joined with the
query's other restrictions (:mod:`chalicelib.search.join`). Buckets wholly inside the range are
exact; the (at most two) buckets at its ends hold values outside it too, and their candidates
are verified exactly on the item.

Buckets: ``p<e>`` holds the positive values in ``[2**e, 2**(e+1))`` for ``e`` in 1..:data:`TOP`
(``p00``: ``(0, 2)``; ``p<TOP>``: ``[2**TOP, inf)``), ``zero`` holds 0 and ``neg`` every negative
value (rare in the catalogue's fields; verified exactly). Power-of-two buckets follow the
geometric spread of prices, salaries and areas (each bucket at most doubles its lower end, so
an end bucket holds at most as many non-matching values as a range of the same ratio), and a
range touches at most :data:`TOP` + 3 buckets, whose sizes one BatchGetItem reads. The same
scheme as the logarithmic histogram bins of HdrHistogram and of Prometheus' exponential buckets.
"""

from __future__ import annotations

import math
from decimal import Decimal

#: Highest bucket exponent: 2**60 > 10**18, the largest integer filter value (18 digits).
TOP = 60


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


ALL = ("neg", "zero", *(f"p{e:02d}" for e in range(TOP + 1)))
#: :func:`_interval` of every bucket, computed once (a range's planning asks for all of them).
_INTERVALS = {label: _interval(label) for label in ALL}


def overlapping(low: Decimal | None, high: Decimal | None) -> list[tuple[str, bool]]:
    """The buckets holding values within ``[low, high]`` (``None``: open end), each with whether
    it lies wholly inside (exact) or must be verified, in ascending value order."""
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
