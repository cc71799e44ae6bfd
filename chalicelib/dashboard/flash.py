"""One-time messages carried from a POST to the page it redirects to (Post/Redirect/Get).

A secret shown once (a new API key) must survive the 303 but never a reload of the page that
shows it, and never travel in a URL. It is kept on the session's own item (``flash``, a map
``{kind, data}``) and removed by the GET that shows it, with a conditional REMOVE on the value
read, so two concurrent reloads cannot both show it. The session item's TTL (``expiresAt``)
bounds how long an unshown flash is stored.
"""

from __future__ import annotations

from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.dashboard.sessions import Session, session_hash


def _key(session: Session) -> dict[str, str]:
    return {"sessionHash": session_hash(session.session_id)}


def put(session: Session, kind: str, data: dict[str, str]) -> None:
    """Keep ``data`` for the next page of ``session`` that takes ``kind`` (replacing any unshown flash).

    Raises
    ------
    chalicelib.storage.ConditionFailed
        The session item is gone (signed out meanwhile).
    """
    storage.update(settings().DASHBOARD_SESSIONS_TABLE, _key(session), "SET flash = :f",
                   condition="attribute_exists(sessionHash)",
                   ExpressionAttributeValues=storage.values(f={"kind": kind, "data": data}))


def take(session: Session, kind: str) -> dict[str, Any] | None:
    """The flash ``data`` of ``kind`` kept for ``session``, removed as it is read; ``None`` when there is
    none (already shown, or another kind, which is left in place)."""
    table = settings().DASHBOARD_SESSIONS_TABLE
    item = storage.get(table, _key(session)) or {}
    kept = item.get("flash")
    if not isinstance(kept, dict) or kept.get("kind") != kind:
        return None
    try:
        storage.update(table, _key(session), "REMOVE flash", condition="flash = :f",
                       ExpressionAttributeValues=storage.values(f=kept))
    except storage.ConditionFailed:
        return None  # another request took it first
    data = kept.get("data")
    return dict(data) if isinstance(data, dict) else None
