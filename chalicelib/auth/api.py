"""What other packages may call on :mod:`chalicelib.auth`: its public face.

Other packages import this module, never the package's repository: the transaction item
builders and reads of the package's table are published here by name (the owner of a table
builds every item of it, so another package's transaction can hold them), beside the few
rules that go with them. Changes of the package's own records go through
:mod:`chalicelib.auth.service`.
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
