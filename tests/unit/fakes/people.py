"""User records for fakes: a user with connected channels, a user directory and a caller."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from chalicelib.auth.service import Caller
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.users.records import UserRecord

CONNECTED_AT = "2026-01-01T00:00:00.000Z"


def user_record(user_id: str, channels: Iterable[str] = ("telegram",), **fields: Any) -> UserRecord:
    """A stored user ``user_id`` with ``channels`` connected (handle ``@<user_id>``) and ``fields`` on top."""
    item: UserRecord = {
        "userId": user_id, "displayName": user_id.title(), "verifiedLevel": 0, "socialLinks": {}, "recruiting": {},
        "requestPolicy": {}, "channels": {c: {"handle": f"@{user_id}", "connectedAt": CONNECTED_AT} for c in channels},
        "searchShard": "0", "createdAt": CONNECTED_AT, "updatedAt": CONNECTED_AT,
    }
    return {**item, **fields}  # type: ignore[typeddict-item]


class FakeUsers:
    """The users directory port (``get_user``, ``get_users``) over a dict of records."""

    def __init__(self, *users: UserRecord) -> None:
        self.users: dict[str, UserRecord] = {u["userId"]: u for u in users}

    def get_user(self, user_id: str) -> UserRecord | None:
        """The record, or ``None``."""
        return self.users.get(user_id)

    def not_suspended_op(self, user_id: str) -> TransactItem:
        """The check's transaction item, as the fake listings repository keeps it (not evaluated)."""
        check = {"ConditionCheck": {"Key": {"userId": user_id}, "ConditionExpression": "attribute_not_exists(suspendedAt)"}}
        return cast(TransactItem, check)

    def get_users(self, user_ids: Sequence[str]) -> dict[str, UserRecord]:
        """The records of the known ids among ``user_ids``."""
        return {i: self.users[i] for i in user_ids if i in self.users}


class FakeBlocks:
    """The block directory port (``hidden_from``) over a set of ``(blocker, blocked)`` pairs."""

    def __init__(self, *pairs: tuple[str, str]) -> None:
        self.pairs = set(pairs)

    def hidden_from(self, user_id: str) -> frozenset[str]:
        """The users ``user_id`` blocked or was blocked by."""
        return frozenset(b if a == user_id else a for a, b in self.pairs if user_id in (a, b))


def caller(user_id: str) -> Caller:
    """An authenticated caller without scopes."""
    return Caller(user_id=user_id)
