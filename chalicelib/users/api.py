"""The Users table's published builders and reads: user records for other packages' views, the
profile-request guard, and the suspension and erasure items other packages' transactions hold.

Other packages import this module, never the repository (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

from chalicelib.users.records import is_suspended
from chalicelib.users.repository import (
    admits_profile_request_op,
    delete_user_op,
    erasure_op,
    get_user,
    get_users,
    not_suspended_op,
    read_part,
    reinstate_op,
    suspend_op,
    version_of,
)

__all__ = [
    "admits_profile_request_op",
    "delete_user_op",
    "erasure_op",
    "get_user",
    "get_users",
    "is_suspended",
    "not_suspended_op",
    "read_part",
    "reinstate_op",
    "suspend_op",
    "version_of",
]
