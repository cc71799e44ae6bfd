"""The stored shape of a block (Blocks table items).

A block between A and B is kept as two items, one in each user's partition, so that one Query
of a user's partition yields every user hidden from them and one ``ConditionCheck`` on the
item ``(sender, recipient)`` refuses a write across a block in either direction:

* ``(userId=A, otherId=B)`` with ``blocking: true``: A blocks B (also ``blockerId`` and
  ``newest``, the keys of A's list of blocks);
* ``(userId=B, otherId=A)`` with ``blockedBy: true``: B is blocked by A.

If both block each other, each item carries both flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class BlockRecord(TypedDict):
    """One side of a block as stored."""

    userId: str
    otherId: str
    #: ``userId`` blocks ``otherId``.
    blocking: NotRequired[bool]
    #: ``userId`` is blocked by ``otherId``.
    blockedBy: NotRequired[bool]
    #: ISO 8601 UTC when ``userId`` blocked ``otherId`` (the item of the ``blocking`` side).
    blockedAt: NotRequired[str]
    #: ``userId`` while ``blocking``: the partition of the ``blockingNewest`` list index.
    blockerId: NotRequired[str]
    #: ``<blockedAt>#<otherId>`` while ``blocking``: the list's sort key, newest first.
    newest: NotRequired[str]


def record(item: Mapping[str, Any]) -> BlockRecord:
    """The typed record of a Blocks item as read (checked; MalformedRecord naming the field)."""
    return checked(BlockRecord, item, "userId")
