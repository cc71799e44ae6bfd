"""The Listings table's published builders and reads: what other packages' transactions and read
paths take from the listings package (request guards, approvals, owner counters, batch-read parts).

Other packages import this module, never the repository (docs/architecture.md, "Table ownership").
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
    uncount_request_op,
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
    "uncount_request_op",
]
