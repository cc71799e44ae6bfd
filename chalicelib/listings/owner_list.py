"""The owner's listings list (``GET /v1/listings/mine``): its index and its counter.

Every listing is in its owner's list, in every status. The list is the ``ownerNewest`` GSI of
the Listings table: partition ``ownerId``, sort :data:`SORT` = ``<createdAt>#<listingId>``
(newest first, ties in ``createdAt`` by listing id descending), projection ALL, so a page is
one Query of ``pageSize + 1`` items (:mod:`chalicelib.search.keyset`).

The list's size is attribute :data:`COUNT_ATTRIBUTE` of counter item ``ownerListings#<ownerId>``
(:mod:`chalicelib.search.counters`), moved by :func:`delta` in the same TransactWriteItems as the
conditional Put that creates a listing (+1) and the conditional Delete that removes it (-1),
so the ``total`` is exact at every commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.search.counters import Delta
from chalicelib.search.keyset import ListIndex

#: The GSI holding every owner's list.
INDEX_NAME = "ownerNewest"
#: Its partition key attribute (the owner).
PARTITION = "ownerId"
#: Its sort key attribute: ``<createdAt>#<listingId>``.
SORT = "ownerNewest"
#: The counter attribute holding the size of an owner's list.
COUNT_ATTRIBUTE = "n"


def sort_key(item: Mapping[str, Any]) -> str:
    """The sort key of a listing item: ``<createdAt>#<listingId>`` (ISO 8601 UTC, fixed width)."""
    return f"{item['createdAt']}#{item['listingId']}"


def _table_key(_partition: str, sort_value: str) -> dict[str, str]:
    return {"listingId": sort_value.partition("#")[2]}


#: The owner's list index (the template declares it on the Listings table).
INDEX = ListIndex(INDEX_NAME, PARTITION, SORT, _table_key)


def counter_name(owner_id: str) -> str:
    """The counter item of ``owner_id``'s list: ``ownerListings#<ownerId>``."""
    return f"ownerListings#{owner_id}"


def delta(owner_id: str, change: int) -> Delta:
    """The counter change of adding (``+1``) or removing (``-1``) one listing of ``owner_id``."""
    return counter_name(owner_id), {COUNT_ATTRIBUTE: change}
