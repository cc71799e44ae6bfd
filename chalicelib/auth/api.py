"""API key items other packages' transactions hold: a new key and its count against the cap
(user creation writes both with the user).

Other packages import this module, never the repository (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

from chalicelib.auth import own_keys, repository
from chalicelib.auth.repository import put_key_op
from chalicelib.persistence.transact_items import TransactItem


def count_key_op(user_id: str) -> TransactItem:
    """Transaction ``Update`` counting a new key of ``user_id`` (fails at the cap,
    :data:`chalicelib.auth.own_keys.MAX_KEYS`): the user creation adds it with the user's first key."""
    return repository.count_key_op(user_id, own_keys.MAX_KEYS)


__all__ = [
    "count_key_op",
    "put_key_op",
]
