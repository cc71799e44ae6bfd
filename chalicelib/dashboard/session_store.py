"""DashboardSessions table: one :class:`~chalicelib.dashboard.records.SessionRecord` per signed-in browser.

Keyed by the SHA-256 of the session id; ``expiresAt`` (epoch seconds) is the table's TTL
attribute. The session id itself is never stored, so a read of the table cannot be replayed as
a cookie.
"""

from __future__ import annotations

import contextlib

from chalicelib.dashboard.records import SessionRecord, record
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage


def _table() -> str:
    return settings().DASHBOARD_SESSIONS_TABLE


def create(session: SessionRecord) -> None:
    """Put a new session item.

    Raises
    ------
    chalicelib.persistence.storage.ConditionFailed
        An item with that ``sessionHash`` exists already (a 256-bit id collided: never in practice).
    """
    storage.put(_table(), session, condition="attribute_not_exists(sessionHash)")


def get(session_hash: str) -> SessionRecord | None:
    """The session stored under ``session_hash`` (expired or not), or ``None``."""
    item = storage.get(_table(), {"sessionHash": session_hash})
    return None if item is None else record(item)


def delete(session_hash: str) -> None:
    """Delete the session (no error when it is already gone)."""
    storage.delete(_table(), {"sessionHash": session_hash})


def set_flash(session_hash: str, sealed: str) -> None:
    """Store ``sealed`` as the session's one-time flash (replacing any), if the session exists."""
    with contextlib.suppress(storage.ConditionFailed):  # signed out meanwhile: nothing to show it to
        storage.update(_table(), {"sessionHash": session_hash}, "SET flash = :f", condition="attribute_exists(sessionHash)",
                       ExpressionAttributeValues=storage.values(f=sealed))


def clear_flash(session_hash: str, sealed: str) -> bool:
    """Remove the flash if it is still ``sealed``; ``True`` when this call removed it (so of two
    requests reading the same flash at once, one shows it)."""
    try:
        storage.update(_table(), {"sessionHash": session_hash}, "REMOVE flash", condition="flash = :f",
                       ExpressionAttributeValues=storage.values(f=sealed))
    except storage.ConditionFailed:
        return False
    return True


def set_key_hash(session_hash: str, old_hash: str, new_hash: str) -> None:
    """Replace the session's ``keyHash`` ``old_hash`` by ``new_hash`` (nothing when it is another or gone)."""
    try:
        storage.update(_table(), {"sessionHash": session_hash}, "SET keyHash = :n", condition="keyHash = :o",
                       ExpressionAttributeValues=storage.values(n=new_hash, o=old_hash))
    except storage.ConditionFailed:
        return
