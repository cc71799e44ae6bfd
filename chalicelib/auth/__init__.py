"""API keys and the authenticated caller.

The package owns the ApiKeys table. Other packages reach it only through
:mod:`chalicelib.auth.service` or the functions below, never through its repository or the
table's name (``docs/architecture.md``, "Table ownership"). Each function imports the
repository when first called, so importing this package loads no storage code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chalicelib.auth.records import ApiKeyRecord
    from chalicelib.persistence.transact_items import TransactItem


def put_key_op(key: ApiKeyRecord) -> TransactItem:
    """Transaction ``Put`` of a new API key (fails when its hash exists): the user creation adds it."""
    from chalicelib.auth import repository

    return repository.put_key_op(key)


def count_key_op(user_id: str) -> TransactItem:
    """Transaction ``Update`` counting a new key of ``user_id`` (fails at the cap,
    :data:`chalicelib.auth.own_keys.MAX_KEYS`): the user creation adds it with the user's first key."""
    from chalicelib.auth import own_keys, repository

    return repository.count_key_op(user_id, own_keys.MAX_KEYS)
