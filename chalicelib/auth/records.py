"""The stored shape of an API key: what the auth repository returns and takes (ApiKeys table items).

Only the key's SHA-256 is stored (:func:`chalicelib.auth.keys.hash_key`), never the key itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class ApiKeyRecord(TypedDict):
    """An API key as stored (DESIGN §2 "ApiKeys")."""

    #: Lower-case hex SHA-256 of the key (the table's hash key).
    keyHash: str
    #: The key's public id (:func:`chalicelib.auth.keys.new_key_id`: random, independent of the key and
    #: its hash), set when the record is made. Keys made before keys had ids lack it until their
    #: owner's keys are first listed (:func:`chalicelib.auth.repository.assign_key_id`).
    keyId: NotRequired[str]
    #: The user the key authenticates as.
    userId: str
    #: The key's scopes (``"admin"`` grants the admin routes; :data:`chalicelib.auth.service.ADMIN_SCOPE`).
    scopes: list[str]
    #: ISO 8601 UTC.
    createdAt: str
    #: The owner's label ("CI deploy"); keys made before self-service have none.
    name: NotRequired[str]
    #: The key's first characters (``msk_`` + 4), shown to tell keys apart; never enough to use it.
    prefix: NotRequired[str]
    #: Unix seconds after which the key no longer authenticates (an old key after a roll); also
    #: the table's TTL attribute, so DynamoDB deletes it eventually.
    expiresAt: NotRequired[int]
    #: The hash of the key this one replaced by a roll while that key runs out, and when it ends
    #: (Unix seconds): a roll or revocation of this key ends that one too, so no more than one
    #: uncounted key stands beside a counted one.
    replaces: NotRequired[str]
    replacesUntil: NotRequired[int]
    #: ISO 8601 UTC of the last authentication, to :data:`chalicelib.auth.service.LAST_USED_SECONDS`.
    lastUsedAt: NotRequired[str]
    #: True while the key's user is suspended: the key does not authenticate (a reinstatement removes it).
    suspended: NotRequired[bool]
    #: ISO 8601 UTC of the user's last suspension: a Dashboard session opened with the key before it
    #: stays ended after a reinstatement (:func:`chalicelib.auth.service.key_alive`).
    sessionsFrom: NotRequired[str]


def record(item: Mapping[str, Any]) -> ApiKeyRecord:
    """The typed record of an ApiKeys item as read (checked; a missing ``scopes`` read as no scope).

    Raises
    ------
    chalicelib.persistence.record_check.MalformedRecord
        The item lacks a field of the record or holds a value of another type (the field is named).
    """
    return checked(ApiKeyRecord, {**item, "scopes": list(item.get("scopes") or [])}, "keyHash")
