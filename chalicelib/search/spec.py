"""The interface between the search engine and a domain (listings, profiles, saved searches).

A domain supplies two things:

* an :class:`IndexSpec`: the posting keys one of its items is filed under
  (:class:`~chalicelib.search.postings.PostingKey`: a list id and the item's sort key in that
  list), the namespace of its lists and states, and the order in which its lists are read
  (``descending``: newest first for listings; ascending for profiles). Every list of one spec
  that a conjunction intersects must sort an item under the **same** sort key, so that the
  merge join (:mod:`chalicelib.search.join`) can compare positions across lists;
* a :class:`Matcher`: the one rule that decides whether an item (as re-read from its table)
  satisfies a query. The engine verifies every candidate of an inexact path with it, so the
  posting lists only have to hold a superset of the answer.

The engine returns items (records) or ids in the spec's order; rendering is the domain's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from chalicelib.search.postings import PostingKey

Query_contra = TypeVar("Query_contra", contravariant=True)
Item_contra = TypeVar("Item_contra", contravariant=True)


class IndexSpec(Protocol[Item_contra]):
    """What a domain files in the posting store.

    Attributes
    ----------
    namespace:
        Prefix of the domain's list ids and posting states (``listings.v3``, ``profiles.v2``);
        a new kind of posting gets a new version, so that a backfill files every item afresh.
    descending:
        True when the domain's lists are read largest sort first (newest first).
    """

    namespace: str
    descending: bool

    def posting_keys(self, item: Item_contra | None) -> set[PostingKey]:
        """Every posting key of ``item`` (empty when it must not be found; ``None``: deleted)."""
        ...


class Matcher(Protocol[Query_contra]):
    """Does an item, as stored, satisfy a query? The domain's single matching rule."""

    def __call__(self, query: Query_contra, item: Mapping[str, Any]) -> bool:
        """True when ``item`` satisfies every restriction of ``query``."""
        ...
