"""The stored shape of a user: what the users repository returns and takes (Users table items).

``channels`` maps a channel key to ``{handle, connectedAt}``; ``socialLinks``, ``recruiting`` and
``requestPolicy`` are the plain maps of their models (:mod:`chalicelib.users.models`), merged
key by key by :func:`chalicelib.users.repository.patch_user`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class ConnectedChannel(TypedDict):
    """One connected channel: the user's handle on it and when it was connected (ISO 8601 UTC)."""

    handle: str
    connectedAt: str


class UserRecord(TypedDict):
    """A user as stored (DESIGN §2 "Users")."""

    userId: str
    displayName: str
    #: ISO 3166-1 alpha-2; absent when unset (``None`` before it is written: storage leaves it out),
    #: so the ``adminByCountry`` index stays sparse.
    country: NotRequired[str | None]
    #: 0..3 (:data:`chalicelib.users.models.MAX_VERIFIED_LEVEL`).
    verifiedLevel: int
    socialLinks: dict[str, str]
    recruiting: dict[str, Any]
    requestPolicy: dict[str, Any]
    channels: dict[str, ConnectedChannel]
    #: ``S0``..``S7`` (:func:`chalicelib.users.repository.search_shard`).
    searchShard: str
    #: The profile's ETag; absent on records written before versions existed (version 0).
    version: NotRequired[int]
    #: ISO 8601 UTC.
    createdAt: str
    updatedAt: str
    #: While suspended by an administrator: when, by whom, and the webhooks the suspension
    #: disabled (re-enabled by the reinstatement).
    suspendedAt: NotRequired[str]
    suspendedBy: NotRequired[str]
    suspendedWebhooks: NotRequired[list[str]]
    #: While the account is being erased: the step running and when the erasure was asked for.
    erasure: NotRequired[dict[str, str]]


def record(item: Mapping[str, Any]) -> UserRecord:
    """The typed record of a Users item as read (checked; no field needs converting).

    Raises
    ------
    chalicelib.persistence.record_check.MalformedRecord
        The item lacks a field of the record or holds a value of another type (the field is named).
    """
    return checked(UserRecord, item, "userId")


def is_suspended(user: Mapping[str, Any]) -> bool:
    """Whether an administrator's suspension of ``user`` (a Users item or record) stands: its keys
    answer 401, its listings are paused and its profile is out of search and takes no request."""
    return user.get("suspendedAt") is not None
