"""Blocks between users: who blocked whom, the check that refuses a write across a block, and
the set of users hidden from a caller.

The package owns the Blocks table. Other packages reach it only through the functions below
(each imports the repository on its first call, so importing the package loads no storage
code) or :mod:`chalicelib.blocks.service` (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chalicelib.batch_reads import Part
    from chalicelib.blocks.records import BlockRecord
    from chalicelib.transact_items import TransactItem


def not_blocked_op(user_id: str, other_id: str) -> TransactItem:
    """Transaction ``ConditionCheck``: no block stands between the two users, in either direction
    (:func:`chalicelib.blocks.repository.not_blocked_op`)."""
    from chalicelib.blocks import repository

    return repository.not_blocked_op(user_id, other_id)


def hidden_from(user_id: str) -> frozenset[str]:
    """The users ``user_id`` blocked or was blocked by (one Query of the user's own block items)."""
    from chalicelib.blocks import repository

    return repository.related(user_id)


def read_part(pairs: list[tuple[str, str]]) -> Part[BlockRecord]:
    """Block items of ``(user, other)`` pairs as one part of a shared BatchGetItem, by
    ``"<user>|<other>"`` (found: a block stands between the two)."""
    from chalicelib.blocks import repository

    return repository.read_part(pairs)
