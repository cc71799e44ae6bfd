"""What other packages may call on :mod:`chalicelib.users`: its public face.

Other packages import this module, never the package's repository: the transaction item
builders and reads of the package's table are published here by name (the owner of a table
builds every item of it, so another package's transaction can hold them), beside the few
rules that go with them. Changes of the package's own records go through
:mod:`chalicelib.users.service`.
"""

from __future__ import annotations

from chalicelib.users.repository import (
    admits_profile_request_op,
    delete_user_op,
    erasure_op,
    get_user,
    get_users,
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
    "read_part",
    "reinstate_op",
    "suspend_op",
    "version_of",
]
