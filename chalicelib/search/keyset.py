"""Keyset pages of a list index: read one page of a GSI partition, never the whole list.

A *list index* is a GSI whose partition key names one list (for example "the requests user U
sent with status PENDING") and whose sort key gives the list's order (for example
``<createdAt>#<requestId>``, newest first). A page is one Query of that partition with
``Limit = pageSize + 1`` (the extra item says whether more follow) that starts after the
previous page's last sort key (``ExclusiveStartKey``), so the items read follow the page,
not the length of the list ("keyset pagination"; AWS, "Paginating table query results").

Offset pages (``page=N`` without a cursor) read the ``(N - 1) x pageSize`` items before the
page too: their cost grows with the page number, never with the items after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalicelib.kernel import errors
from chalicelib.persistence import storage


@dataclass(frozen=True)
class ListIndex:
    """A GSI holding lists: ``name`` on ``partition`` (the list) and ``sort`` (its order), string keys.

    ``table_key(partition value, sort value)`` gives back the table's primary key of the item
    at that position, so that a cursor only has to carry the sort key (the partition comes
    from the query itself).
    """

    name: str
    partition: str
    sort: str
    table_key: Callable[[str, str], dict[str, str]]

    def start_key(self, partition_value: str, sort_value: str) -> dict[str, str]:
        """The ``ExclusiveStartKey`` (plain values) positioned at ``sort_value`` in ``partition_value``'s list.

        Raises
        ------
        RuleViolation
            ``sort_value`` (a cursor's position key) is not a sort key of this list: no table
            key can be derived from it, or a key value would be empty (field ``cursor``).
        """
        try:
            table_key = self.table_key(partition_value, sort_value)
        except (IndexError, KeyError, ValueError, TypeError) as exc:
            raise _not_a_position() from exc
        start = {**table_key, self.partition: partition_value, self.sort: sort_value}
        if not all(isinstance(value, str) and value for value in start.values()):  # DynamoDB keys are never empty
            raise _not_a_position()
        return start


def _not_a_position() -> errors.RuleViolation:
    return errors.RuleViolation.for_field("cursor", "is not a cursor issued by this API", "Invalid cursor")


@dataclass(frozen=True)
class Page:
    """One page of a list: its ``items`` (at most the page size), whether ``more`` follow, and how
    many items were passed over before it (``skipped``: fewer than asked when the list ended first)."""

    items: list[dict[str, Any]]
    more: bool
    skipped: int = 0


def read_page(
    table: str,
    index: ListIndex,
    partition_value: str,
    size: int,
    after: str | None = None,
    skip: int = 0,
    descending: bool = True,
    prefix: str | None = None,
) -> Page:
    """A page of ``size`` items of the list ``partition_value`` in ``index`` (of ``table``).

    Parameters
    ----------
    table, index:
        The table and its list index.
    partition_value:
        The list (the index's partition key value).
    size:
        Items per page (1..100).
    after:
        Sort key of the previous page's last item (from a cursor): the page starts right after it.
    skip:
        Items to pass over first (offset pages without a cursor; 0 with ``after``).
    descending:
        Largest sort key first (newest first); ``False`` for ascending.
    prefix:
        Only the items whose sort key begins with it (a key condition: the items read are still
        the page's, e.g. the names starting with a typed prefix).

    Returns
    -------
    Page
        Reads at most ``skip + size + 1`` items, in as few Queries as the 1 MB response limit allows.
    """
    wanted = skip + size + 1
    params: dict[str, Any] = {
        "IndexName": index.name,
        "KeyConditionExpression": "#p = :p",
        "ExpressionAttributeNames": {"#p": index.partition},
        "ExpressionAttributeValues": storage.values(p=partition_value),
        "ScanIndexForward": not descending,
    }
    if prefix:
        params["KeyConditionExpression"] += " AND begins_with(#s, :prefix)"
        params["ExpressionAttributeNames"]["#s"] = index.sort
        params["ExpressionAttributeValues"].update(storage.values(prefix=prefix))
    if after is not None:
        params["ExclusiveStartKey"] = storage.to_item(index.start_key(partition_value, after))
    items: list[dict[str, Any]] = []
    while len(items) < wanted:
        found, last = storage.query_page(table, Limit=wanted - len(items), **params)
        items += found
        if last is None:
            break
        params["ExclusiveStartKey"] = storage.to_item(last)
    return Page(items=items[skip : skip + size], more=len(items) > skip + size, skipped=min(skip, len(items)))


def read_all(table: str, index: ListIndex, partition_value: str, descending: bool = True) -> list[dict[str, Any]]:
    """Every item of one list (for workflows that must see all of it, never for a list route's page)."""
    return storage.query_index(table, index.name, index.partition, partition_value, newest_first=descending)

