"""A saved search's ``query``: the listing-search parameters, validated by search's own parser."""

from __future__ import annotations

import json
from decimal import Decimal
from functools import lru_cache
from urllib.parse import urlencode

from chalicelib.kernel import errors, query_text
from chalicelib.listings.search.parameters import ListingSearchQuery
from chalicelib.listings.search.query import PAGING_PARAMETERS, SearchQuery, parse_search


def _text(value: str | int | float) -> str:
    """A parameter's value as a query string would write it: a number in positional notation
    (``0.00001``, never ``1e-05``; ``1000`` for ``1E3``), as the search's parser reads numbers."""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return format(Decimal(repr(value)).normalize(), "f")  # repr: the shortest text that reads back as the float


def normalize(query: dict[str, str | int | float]) -> dict[str, str]:
    """The query as search parameters: every value as text (numbers in positional notation,
    without trailing zeros), keys sorted."""
    return {key: _text(query[key]) for key in sorted(query)}  # as sent: the search's parser judges white space too


def validate(query: dict[str, str], alerts: bool) -> SearchQuery:
    """Parse ``query`` exactly as ``GET /v1/listings/search`` parses its query string.

    Raises
    ------
    RuleViolation
        ``details`` naming ``query.<param>``: any error search reports for that parameter (a
        number written otherwise than as JSON writes it, :mod:`chalicelib.kernel.query_text`, among
        them), ``page``/``pageSize``/``cursor`` (not part of a saved search), and, with ``alerts``,
        a geo filter without ``radiusKm``.
    """
    for name in PAGING_PARAMETERS:  # paging belongs to a run of a search, not to the search
        if name in query:
            raise errors.RuleViolation.for_field(f"query.{name}", "paging is not part of a saved search")
    try:
        query_text.check(ListingSearchQuery, query)
        parsed = parse_search(query)
    except errors.RuleViolation as exc:
        for issue in exc.details or []:
            issue.field = f"query.{issue.field}"
        raise errors.RuleViolation(f"Invalid query: {exc.message}", exc.details) from exc
    if alerts and parsed.geo is not None and parsed.geo.radius_km is None:
        raise errors.RuleViolation.for_field(
            "query.radiusKm", "required with a geo filter when alerts are on (the area to watch, in km)"
        )
    return parsed


@lru_cache(maxsize=4096)
def _parsed(encoded: str) -> SearchQuery:
    return parse_search(dict(json.loads(encoded)))


def parsed(query: dict[str, str]) -> SearchQuery:
    """The parsed form of a stored (already validated) query, cached per process.

    The parse is deterministic and the result is only read, so the percolator can evaluate
    a saved search many times without parsing it again.
    """
    return _parsed(json.dumps(sorted(query.items())))


def default_name(query: dict[str, str]) -> str:
    """The name of a saved search saved without one: its query in query-string form (at most 100 characters)."""
    text = urlencode(sorted(query.items()), safe=",:") or "All listings"
    return text if len(text) <= 100 else text[:99] + "…"
