"""Number buckets: each value of a number field in one power-of-two bucket (pure).

A range filter (``_min`` / ``_max``) cannot be answered from equality lists, and a value-sorted
list must be read whole before its newest entry is known. A value is therefore also filed in
the newest-first list of its **bucket** (:mod:`chalicelib.search.index`, ``n|<name>|<bucket>``),
so that a range is the union of the buckets it overlaps (:data:`ALL` from the bucket of its low
end to that of its high end), read newest first; the values of the (at most two) buckets at
its ends are checked exactly on the entries' projection.

Buckets: ``p<e>`` holds the positive values in ``[2**e, 2**(e+1))`` for ``e`` in 1..:data:`TOP`
(``p00``: ``(0, 2)``; ``p<TOP>``: ``[2**TOP, inf)``), ``zero`` holds 0 and ``neg`` every negative
value. Power-of-two buckets follow the geometric spread of prices, salaries and areas (each
bucket at most doubles its lower end), as the logarithmic bins of HdrHistogram and of
Prometheus' exponential buckets.
"""

from __future__ import annotations

import math
from decimal import Decimal

#: Highest bucket exponent: ``p40`` holds every value from 2**40 (about 1.1 x 10**12) up, which no salary,
#: rent, price or area of the catalogue reaches; such values are still found (checked exactly).
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


#: Every bucket label, in ascending value order.
ALL = ("neg", "zero", *(f"p{e:02d}" for e in range(TOP + 1)))
