"""The stored shape of an API key: what the auth repository returns and takes (ApiKeys table items).

Only the key's SHA-256 is stored (:func:`chalicelib.auth.keys.hash_key`), never the key itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast


class ApiKeyRecord(TypedDict):
    """An API key as stored (DESIGN §2 "ApiKeys")."""

    #: Lower-case hex SHA-256 of the key (the table's hash key).
    keyHash: str
    #: The user the key authenticates as.
    userId: str
    #: The key's scopes (``"admin"`` grants the admin routes; :data:`chalicelib.auth.service.ADMIN_SCOPE`).
    scopes: list[str]
    #: ISO 8601 UTC.
    createdAt: str


def record(item: Mapping[str, Any]) -> ApiKeyRecord:
    """The typed record of an ApiKeys item as read (a missing ``scopes`` read as no scope)."""
    return cast(ApiKeyRecord, {**item, "scopes": list(item.get("scopes") or [])})
