"""Blocks table: two items per block, one in each user's partition (:mod:`chalicelib.blocks.records`).

Key: ``userId`` (partition), ``otherId`` (sort). The ``blockingNewest`` index (partition
``blockerId``, sort ``newest``) holds only the ``blocking`` sides: a user's list of the users
they block, newest first.
"""

from __future__ import annotations

from typing import Any

from chalicelib.blocks.records import BlockRecord, record
from chalicelib.kernel.config import settings
from chalicelib.persistence import batch_reads, storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.search import keyset


def _table() -> str:
    return settings().BLOCKS_TABLE


def _list_key(blocker_id: str, newest: str) -> dict[str, str]:
    return {"userId": blocker_id, "otherId": newest.rsplit("#", 1)[1]}


#: A user's blocks, newest first.
BLOCKING = keyset.ListIndex("blockingNewest", "blockerId", "newest", _list_key)


def _key(user_id: str, other_id: str) -> dict[str, str]:
    return {"userId": user_id, "otherId": other_id}


def not_blocked_op(user_id: str, other_id: str) -> TransactItem:
    """Transaction ``ConditionCheck`` that holds while no block stands between ``user_id`` and
    ``other_id`` in either direction (the item ``(user_id, other_id)`` exists exactly while one does).
    A block written concurrently either commits first (the check fails) or after (the write it
    guards committed before the block)."""
    return storage.tx_check(_table(), _key(user_id, other_id), "attribute_not_exists(userId)")


def block_ops(blocker_id: str, blocked_id: str, blocked_at: str) -> list[TransactItem]:
    """The two updates writing "``blocker_id`` blocks ``blocked_id``".

    The blocker's side is conditional on not blocking yet (a repeated block fails it: the block
    stands already); the other side only gains ``blockedBy``.
    """
    mine = storage.tx_update(
        _table(), _key(blocker_id, blocked_id),
        "SET blocking = :yes, blockedAt = :at, blockerId = :me, newest = :newest",
        condition="attribute_not_exists(blocking)",
        ExpressionAttributeValues=storage.values(yes=True, at=blocked_at, me=blocker_id, newest=f"{blocked_at}#{blocked_id}"),
    )
    theirs = storage.tx_update(
        _table(), _key(blocked_id, blocker_id), "SET blockedBy = :yes", ExpressionAttributeValues=storage.values(yes=True)
    )
    return [mine, theirs]


def unblock_ops(mine: BlockRecord, theirs: BlockRecord | None) -> list[TransactItem]:
    """The writes lifting ``mine`` (the blocker's side, as read) and its counterpart ``theirs``:
    each item is deleted unless the other user blocks too (then only this block's flags go),
    conditional on the flags read, so a concurrent change makes the transaction fail."""
    ops: list[TransactItem] = []
    user_id, other_id = mine["userId"], mine["otherId"]
    if mine.get("blockedBy"):
        ops.append(storage.tx_update(_table(), _key(user_id, other_id), "REMOVE blocking, blockedAt, blockerId, newest",
                                     condition="blocking = :yes AND blockedBy = :yes",
                                     ExpressionAttributeValues=storage.values(yes=True)))
    else:
        ops.append(storage.tx_delete(_table(), _key(user_id, other_id),
                                     condition="blocking = :yes AND attribute_not_exists(blockedBy)",
                                     ExpressionAttributeValues=storage.values(yes=True)))
    if theirs is not None and theirs.get("blocking"):
        ops.append(storage.tx_update(_table(), _key(other_id, user_id), "REMOVE blockedBy",
                                     condition="blocking = :yes", ExpressionAttributeValues=storage.values(yes=True)))
    else:
        ops.append(storage.tx_delete(_table(), _key(other_id, user_id), condition="attribute_not_exists(blocking)"))
    return ops


def get(user_id: str, other_id: str) -> BlockRecord | None:
    """The item ``(user_id, other_id)`` (strongly consistent), or ``None``."""
    item = storage.get(_table(), _key(user_id, other_id), consistent=True)
    return record(item) if item is not None else None


def page(blocker_id: str, size: int, after: str | None = None) -> tuple[list[BlockRecord], bool]:
    """One page of ``blocker_id``'s blocks, newest first (one Query of ``size + 1`` index items).

    Raises
    ------
    RuleViolation
        ``after`` is not a position of this list (field ``cursor``).
    """
    found = keyset.read_page(_table(), BLOCKING, blocker_id, size, after=after)
    return [record(i) for i in found.items], found.more


def related(user_id: str) -> frozenset[str]:
    """Every user ``user_id`` blocks or is blocked by: one Query of their partition (its pages
    followed), reading only ``otherId``."""
    params: dict[str, Any] = {
        "KeyConditionExpression": "userId = :u", "ExpressionAttributeValues": storage.values(u=user_id),
        "ProjectionExpression": "otherId",
    }
    return frozenset(str(i["otherId"]) for i in storage.query_pages(_table(), **params))


def read_part(pairs: list[tuple[str, str]]) -> batch_reads.Part[BlockRecord]:
    """The items ``(user, other)`` of ``pairs`` as one part of a shared BatchGetItem, by
    ``"<user>|<other>"``: an item found means a block stands between the two."""
    keys = [_key(a, b) for a, b in dict.fromkeys(pairs)]
    return batch_reads.Part(_table(), keys, _pair_id, record)


def _pair_id(item: Any) -> str:
    return f"{item['userId']}|{item['otherId']}"
