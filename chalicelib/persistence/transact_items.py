"""The shape of one TransactWriteItems element, as the repositories' ``*_op`` builders return it.

DynamoDB's ``TransactWriteItems`` takes a list of elements, each holding exactly one of
``Put``, ``Update``, ``Delete`` or ``ConditionCheck`` in the low-level attribute-value format
(AWS DynamoDB API Reference, "TransactWriteItem"). The ``TypedDict`` s here give every builder a
checked return type instead of ``dict[str, Any]``, so mypy sees a transaction combine items,
not arbitrary maps. Only the parameters this service uses are declared. The module imports
nothing of the service: services name :class:`TransactItem` in their signatures without
reaching storage (import contract "Services, workflows and routes reach DynamoDB through
repositories and named transactions only").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast


class Expressions(TypedDict, total=False):
    """The placeholders of an element's expressions (AWS docs, "Expression attribute names/values")."""

    #: ``{"#st": "status"}``: names standing in for attribute names.
    ExpressionAttributeNames: dict[str, str]
    #: ``{":v": {"N": "3"}}``: low-level values (:func:`chalicelib.persistence.storage.values` builds them).
    ExpressionAttributeValues: dict[str, Any]


class _Write(Expressions):
    """What a ``Put``, ``Update`` and ``Delete`` share: the table and an optional condition."""

    TableName: str
    #: The write happens only if this holds; otherwise the whole transaction is cancelled.
    ConditionExpression: NotRequired[str]


class PutItem(_Write):
    """A ``Put``: write ``Item`` whole (low-level attribute values), if ``ConditionExpression`` holds."""

    Item: dict[str, Any]


class UpdateItem(_Write):
    """An ``Update`` of the item at ``Key`` by ``UpdateExpression``, if ``ConditionExpression`` holds."""

    Key: dict[str, Any]
    UpdateExpression: str


class DeleteItem(_Write):
    """A ``Delete`` of the item at ``Key``, if ``ConditionExpression`` holds."""

    Key: dict[str, Any]


class ConditionCheckItem(Expressions):
    """A ``ConditionCheck``: the transaction fails unless ``ConditionExpression`` holds for the item at ``Key``."""

    TableName: str
    Key: dict[str, Any]
    ConditionExpression: str


class TransactItem(TypedDict, total=False):
    """One TransactWriteItems element: exactly one of the four keys (the builders set one)."""

    Put: PutItem
    Update: UpdateItem
    Delete: DeleteItem
    ConditionCheck: ConditionCheckItem


#: The four element kinds of a TransactWriteItems element.
KINDS = ("Put", "Update", "Delete", "ConditionCheck")


def typed(op: Mapping[str, Any]) -> TransactItem:
    """An element built by a builder that still returns ``dict[str, Any]``, checked and typed.

    The counter builders (``chalicelib.search.counters``, ``chalicelib.listings.counters``) still
    return plain dicts;
    their elements enter typed code through this check.

    Raises
    ------
    ValueError
        ``op`` does not hold exactly one of :data:`KINDS`, or that one lacks ``TableName``.
    """
    kinds = [kind for kind in KINDS if kind in op]
    if len(kinds) != 1 or len(op) != 1 or "TableName" not in op[kinds[0]]:
        raise ValueError(f"not a TransactWriteItems element: keys {sorted(op)}")
    return cast(TransactItem, op)
