"""What other packages may call on :mod:`chalicelib.listings`: its public face.

Other packages import this module, never the package's repository: the transaction item
builders and reads of the package's table are published here by name (the owner of a table
builds every item of it, so another package's transaction can hold them), beside the few
rules that go with them. Changes of the package's own records go through
:mod:`chalicelib.listings.service`.
"""

from __future__ import annotations

from chalicelib.listings.repository import (
    count_request_op,
    delete_counted_op,
    exists_op,
    forget_owner_counter_op,
    get,
    get_many,
    leave_active_ops,
    owner_count_op,
    pending_page,
    read_part,
    transition,
)

__all__ = [
    "count_request_op",
    "delete_counted_op",
    "exists_op",
    "forget_owner_counter_op",
    "get",
    "get_many",
    "leave_active_ops",
    "owner_count_op",
    "pending_page",
    "read_part",
    "transition",
]
