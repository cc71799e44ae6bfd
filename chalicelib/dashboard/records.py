"""The stored shape of a Dashboard session: what :mod:`chalicelib.dashboard.session_store` returns and takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class SessionRecord(TypedDict):
    """A signed-in browser's session as stored (DashboardSessions table).

    The session id itself is never stored, only its hash, so a read of the table cannot be
    replayed as a cookie.
    """

    #: Lower-case hex SHA-256 of the session id (:func:`chalicelib.dashboard.sessions.session_hash`).
    sessionHash: str
    #: Who signed in and the scopes of the key they signed in with.
    userId: str
    scopes: list[str]
    #: ISO 8601 UTC.
    createdAt: str
    #: Unix seconds when the session ends; the table's TTL attribute.
    expiresAt: int
    #: A one-time message for the next page (a secret shown once), sealed with a key derived from
    #: the session id (:func:`chalicelib.dashboard.sessions.put_flash`); removed when shown.
    flash: NotRequired[str]
    #: SHA-256 of the API key signed in with: the session ends when that key is revoked or expires
    #: (absent on sessions started before keys could be revoked).
    keyHash: NotRequired[str]


def record(item: Mapping[str, Any]) -> SessionRecord:
    """The typed record of a DashboardSessions item as read (checked: MalformedRecord naming the field;
    ``expiresAt`` as int; no scopes when absent)."""
    return checked(
        SessionRecord,
        {**item, "scopes": list(item.get("scopes") or []), "expiresAt": int(item.get("expiresAt") or 0)},
        "sessionHash",
    )
