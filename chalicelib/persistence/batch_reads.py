"""Named batch reads: items of several tables in one BatchGetItem, each table read by its owner.

A read path that needs items of several tables (a listing with its owner and the caller's
request) keeps to one DynamoDB call. The owning repository of each table builds a
:class:`Part` (its table name, the keys and how an item becomes a record); the caller only
combines the parts, the same way :mod:`chalicelib.persistence.transactions` combines the transaction items
of several owners::

    owner = users.read_part([owner_id])             # built by the users repository
    mine = requests_part([request_id])              # built by this package's repository
    found = batch_reads.read(owner, mine)
    found.of(owner).get(owner_id)                   # a UserRecord, or None

so no package names another package's table or decodes its items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chalicelib.persistence import storage


@dataclass(frozen=True, slots=True)
class Part[R]:
    """The keys one owner reads from its table in a shared BatchGetItem.

    Attributes
    ----------
    table:
        The table's name (only the owning repository knows it).
    keys:
        The primary keys to read (plain values; duplicates are dropped by the owner).
    identify:
        The id a found item is filed under in :meth:`Found.of` (usually its key attribute).
    decode:
        The owner's conversion of a stored item into its record (checked where it enters).
    """

    table: str
    keys: Sequence[Mapping[str, Any]]
    identify: Callable[[Mapping[str, Any]], str]
    decode: Callable[[dict[str, Any]], R]


class Found:
    """The result of :func:`read`: each part's records by id (a missing id is absent)."""

    def __init__(self, items_by_table: Mapping[str, list[dict[str, Any]]]) -> None:
        self._items = items_by_table

    def of[R](self, part: Part[R]) -> dict[str, R]:
        """The records ``part`` found, by id; a part shares no table with another part of the read."""
        return {part.identify(item): part.decode(item) for item in self._items.get(part.table, [])}


def read(*parts: Part[Any]) -> Found:
    """Read every part in one BatchGetItem (at most 100 keys in all).

    Raises
    ------
    ValueError
        Two parts name the same table (their items could not be told apart).
    chalicelib.kernel.errors.DependencyUnavailable
        As :func:`chalicelib.persistence.storage.batch_get_tables`.
    """
    tables = [part.table for part in parts]
    if len(set(tables)) != len(tables):
        raise ValueError("two parts of one batch read name the same table")
    return Found(storage.batch_get_tables({part.table: part.keys for part in parts}))


def item_part(table: str, key: Mapping[str, Any], name: str) -> Part[dict[str, Any]]:
    """One item of ``table`` (primary key ``key``) as a part, filed under ``name`` as a plain dict.

    For an item with no record type of its own, such as a list's counter item
    (``item_part(counters.table(), counters.key(name), name)`` with :mod:`chalicelib.search.counters`,
    whose ``count_in`` reads a count from the found item, a missing item counting 0), so a list's
    page and its exact total stay one BatchGetItem with other reads.
    """
    return Part(table, [key], lambda _item: name, dict)
