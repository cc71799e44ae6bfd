"""Queries that read a wanted number of items, whatever DynamoDB's 1 MB page cuts off."""

from __future__ import annotations

from typing import Any

from chalicelib.persistence import storage


def query_up_to(table: str, wanted: int, **params: Any) -> tuple[list[dict[str, Any]], bool]:
    """Read up to ``wanted`` items of a Query, one request per DynamoDB page.

    Each request asks for the items still wanted (``Limit``), so a page that DynamoDB cuts short
    at 1 MB is followed by another (from its ``LastEvaluatedKey``) and no request reads more
    than the rest of ``wanted``.

    Parameters
    ----------
    table:
        The table's name.
    wanted:
        The most items to read, at least 1.
    **params:
        The Query's parameters besides ``TableName`` and ``Limit`` (``ExclusiveStartKey`` in
        DynamoDB's typed form to start after a position).

    Returns
    -------
    tuple[list[dict[str, Any]], bool]
        The items read (plain values, key order) and ``True`` when DynamoDB said the Query has
        no more (no ``LastEvaluatedKey``); ``False`` means more may follow.
    """
    found: list[dict[str, Any]] = []
    while len(found) < wanted:
        items, last = storage.query_page(table, Limit=wanted - len(found), **params)
        found += items
        if last is None:
            return found, True
        params["ExclusiveStartKey"] = storage.to_item(last)
    return found, False
