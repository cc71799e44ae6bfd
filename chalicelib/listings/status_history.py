"""A listing's status history: the newest :data:`LIMIT` status changes, oldest first, kept on the listing item.

Each entry is ``{status, at, reason?}``: the status the listing entered, when (ISO 8601 UTC, the
change's ``updatedAt``) and, where one was given, why (an administrator's rejection or hiding
reason, the suspension marker of a listing paused with its owner). The repository writes the
entry in the same conditional update that changes ``status`` (:mod:`chalicelib.listings.repository`),
so the history never disagrees with the status.

The bound: at most :data:`LIMIT` entries. Below it an entry is appended in place
(``list_append(if_not_exists(statusHistory, :empty), :entry)``, conditional on the list still
being shorter than the limit); at the limit DynamoDB cannot append and drop the oldest in one
update expression (``SET statusHistory`` and ``REMOVE statusHistory[0]`` overlap), so the update
writes the newest ``LIMIT`` entries as read plus the new one, conditional on the listing's
``version`` being the one read (every change of the item increments it), so no entry written
meanwhile is lost: a change that raced it fails and is retried by its caller, as any
conditional change of the listing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

#: Entries kept per listing (the newest; an item stays well inside DynamoDB's 400 KB: ~100 bytes each).
LIMIT = 20


class StatusEntry(TypedDict):
    """One status change as stored: ``status`` (a ListingStatus value), ``at`` (ISO 8601 UTC), ``reason``."""

    status: str
    at: str
    reason: NotRequired[str]


def entry(status: str, at: str, reason: str | None = None) -> StatusEntry:
    """The history entry of a change into ``status`` at ``at`` (ISO 8601 UTC), with ``reason`` when given."""
    made: StatusEntry = {"status": str(status), "at": at}
    if reason is not None:
        made["reason"] = reason
    return made


def appended(history: Sequence[StatusEntry], new: StatusEntry) -> list[StatusEntry]:
    """``history`` with ``new`` at its end, keeping the newest :data:`LIMIT` entries (oldest first)."""
    return [*history, new][-LIMIT:]
