"""The stored shapes of saved searches: what the saved-searches repository returns and takes.

* :class:`SavedSearchRecord`: one saved search (``SavedSearchesTable``);
* :class:`PostingShard`: one shard of a percolator posting list (``PercolatorTable``), its
  entries decoded from the ``e_<savedSearchId>`` attributes they are stored in;
* :class:`MatchRecord`: one listing matched by one saved search (``SavedSearchMatchesTable``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class SavedSearchRecord(TypedDict):
    """A saved search as stored."""

    ownerId: str
    #: ``ss_`` + a ULID (time-ordered: the owner's list is newest first by key).
    savedSearchId: str
    name: str
    #: The listing-search parameters, every value as text (:func:`chalicelib.saved_searches.query.normalize`).
    query: dict[str, str]
    #: ``listing.matched`` events are sent for its matches.
    alerts: bool
    #: ISO 8601 UTC; the search matches listings activated after it.
    createdAt: str
    #: The ``postingKey`` of every posting shard holding its entries (removed with it on delete).
    postings: list[str]


class PostingShard(TypedDict):
    """One shard of a posting list as read."""

    #: ``<key>#<shard>`` (:func:`chalicelib.saved_searches.repository.shard_key`).
    postingKey: str
    #: How many entries the shard holds.
    n: int
    #: ``{savedSearchId: encoded entry}`` (:class:`chalicelib.saved_searches.postings.Entry`).
    entries: dict[str, str]


class MatchRecord(TypedDict):
    """A match of a saved search and a listing as stored (one per pair: the key enforces it)."""

    savedSearchId: str
    listingId: str
    #: The saved search's owner.
    ownerId: str
    #: ISO 8601 UTC.
    matchedAt: str
    #: ``<matchedAt>#<listingId>``: the sort key of the ``matchedNewest`` index (newest first, ties by
    #: listing id); absent on matches written before it existed until ``scripts/lists_backfill.py`` runs.
    matchedNewest: NotRequired[str]
    #: km from the search's geo center, 2 decimals; absent (or ``None`` before writing) without a geo filter.
    distanceKm: NotRequired[float | None]
    #: The listing's version when it matched.
    listingVersion: NotRequired[int | None]


def saved_search(item: Mapping[str, Any]) -> SavedSearchRecord:
    """The typed record of a SavedSearchesTable item as read (checked: MalformedRecord naming the field;
    absent ``postings``/``query`` read as empty)."""
    return checked(
        SavedSearchRecord,
        {**item, "query": dict(item.get("query") or {}), "alerts": bool(item.get("alerts")), "postings": list(item.get("postings") or [])},
        "savedSearchId",
    )


def match(item: Mapping[str, Any]) -> MatchRecord:
    """The typed record of a SavedSearchMatchesTable item as read (checked: MalformedRecord naming the field)."""
    return checked(MatchRecord, item, "listingId")
