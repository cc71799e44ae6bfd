"""DashboardSessions table: one item per signed-in browser, keyed by the SHA-256 of the session id.

Item shape: ``{sessionHash, userId, scopes, createdAt, expiresAt}``; ``expiresAt`` (epoch
seconds) is the table's TTL attribute. The session id itself is never stored, so a read of the
table cannot be replayed as a cookie.
"""

from __future__ import annotations

from typing import Any

from chalicelib import storage
from chalicelib.config import settings


def _table() -> str:
    return settings().DASHBOARD_SESSIONS_TABLE


def create(item: dict[str, Any]) -> None:
    """Put a new session item (the hash must be new)."""
    storage.put(_table(), item, condition="attribute_not_exists(sessionHash)")


def get(session_hash: str) -> dict[str, Any] | None:
    """The session item of ``session_hash``, or ``None``."""
    return storage.get(_table(), {"sessionHash": session_hash})


def delete(session_hash: str) -> None:
    """Delete the session (no error when it is already gone)."""
    storage.delete(_table(), {"sessionHash": session_hash})
