"""Users: profiles, connected channels and the admin routes that create users and keys.

The package owns the Users table. Other packages reach its data only through the functions
below (or :mod:`chalicelib.users.service`), never through its repository or the table's
name (``docs/architecture.md``, "Table ownership"; the import contract ``users-own-their-tables``).
Each function imports the repository when first called, so importing this package (as every
import of ``chalicelib.users.records`` does) loads no storage code: the cold start stays as it
was (``bench/cold_start.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chalicelib.persistence.batch_reads import Part
    from chalicelib.persistence.transact_items import TransactItem
    from chalicelib.users.records import UserRecord


def get_user(user_id: str) -> UserRecord | None:
    """The user record, or ``None`` (one GetItem)."""
    from chalicelib.users import repository

    return repository.get_user(user_id)


def get_users(user_ids: Sequence[str]) -> dict[str, UserRecord]:
    """User records by id (one BatchGetItem); unknown ids are absent."""
    from chalicelib.users import repository

    return repository.get_users(user_ids)


def version_of(user: UserRecord) -> int:
    """A user record's ``version``, the profile's ETag (0 for records from before versions)."""
    from chalicelib.users import repository

    return repository.version_of(user)


def read_part(user_ids: Sequence[str]) -> Part[UserRecord]:
    """Users by id as one part of a shared BatchGetItem (:mod:`chalicelib.persistence.batch_reads`)."""
    from chalicelib.users import repository

    return repository.read_part(user_ids)


def admits_profile_request_op(user_id: str, requester_level: int, channel: str) -> TransactItem:
    """Transaction ``ConditionCheck``: the user still admits a profile request at ``requester_level``
    over ``channel`` (see :func:`chalicelib.users.repository.admits_profile_request_op`)."""
    from chalicelib.users import repository

    return repository.admits_profile_request_op(user_id, requester_level, channel)


def suspend_op(user_id: str, suspended_at: str, admin_id: str, webhook_ids: Sequence[str]) -> TransactItem:
    """Transaction ``Update`` marking the user suspended (:func:`chalicelib.users.repository.suspend_op`)."""
    from chalicelib.users import repository

    return repository.suspend_op(user_id, suspended_at, admin_id, webhook_ids)


def reinstate_op(user_id: str) -> TransactItem:
    """Transaction ``Update`` lifting a suspension (:func:`chalicelib.users.repository.reinstate_op`)."""
    from chalicelib.users import repository

    return repository.reinstate_op(user_id)


def erasure_op(user_id: str, step: str, requested_at: str, first: bool = False) -> TransactItem:
    """Transaction ``Update`` recording the account erasure's step on the user item
    (:func:`chalicelib.users.repository.erasure_op`)."""
    from chalicelib.users import repository

    return repository.erasure_op(user_id, step, requested_at, first)


def delete_user_op(user_id: str) -> TransactItem:
    """Transaction ``Delete`` of the user item of an account being erased
    (:func:`chalicelib.users.repository.delete_user_op`)."""
    from chalicelib.users import repository

    return repository.delete_user_op(user_id)
