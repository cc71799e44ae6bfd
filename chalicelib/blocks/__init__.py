"""Blocks between users: who blocked whom, the check that refuses a write across a block, and
the set of users hidden from a caller.

The package owns the Blocks table. Other packages reach it only through the functions below
(each imports the repository on its first call, so importing the package loads no storage
code) or :mod:`chalicelib.blocks.service` (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chalicelib.blocks.records import BlockRecord
    from chalicelib.persistence.batch_reads import Part
    from chalicelib.persistence.transact_items import TransactItem


def not_blocked_op(user_id: str, other_id: str) -> TransactItem:
    """Transaction ``ConditionCheck``: no block stands between the two users, in either direction
    (:func:`chalicelib.blocks.repository.not_blocked_op`)."""
    from chalicelib.blocks import repository

    return repository.not_blocked_op(user_id, other_id)


#: Seconds a process keeps a user's block set for their searches. A block or unblock evicts both
#: users' sets in the process that wrote it; another warm process shows the change within this
#: time (the search indexes themselves follow changes about a second late).
HIDDEN_CACHE_SECONDS = 10

_hidden: dict[str, tuple[float, frozenset[str]]] = {}


def hidden_from(user_id: str) -> frozenset[str]:
    """The users ``user_id`` blocked or was blocked by: one Query of the user's own block items,
    kept :data:`HIDDEN_CACHE_SECONDS` by this process (searches read it once per request at most)."""
    import time

    from chalicelib.blocks import repository

    now = time.monotonic()
    cached = _hidden.get(user_id)
    if cached is not None and cached[0] > now:
        return cached[1]
    found = repository.related(user_id)
    if len(_hidden) >= 10_000:  # bounded: the oldest half goes
        for key in sorted(_hidden, key=lambda k: _hidden[k][0])[:5_000]:
            _hidden.pop(key, None)
    _hidden[user_id] = (now + HIDDEN_CACHE_SECONDS, found)
    return found


def forget_hidden(*user_ids: str) -> None:
    """Drop the cached block sets of ``user_ids`` (a block or unblock between them was written);
    without ids, every cached set (the tests' fresh start)."""
    if not user_ids:
        _hidden.clear()
    for user_id in user_ids:
        _hidden.pop(user_id, None)


def read_part(pairs: list[tuple[str, str]]) -> Part[BlockRecord]:
    """Block items of ``(user, other)`` pairs as one part of a shared BatchGetItem, by
    ``"<user>|<other>"`` (found: a block stands between the two)."""
    from chalicelib.blocks import repository

    return repository.read_part(pairs)
