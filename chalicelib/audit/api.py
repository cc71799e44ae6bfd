"""The audit entry an administrator action adds to its own transaction, so the entry exists if and
only if the action committed.

Other packages import this module, never the repository (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

from chalicelib.audit.repository import entry_op

__all__ = [
    "entry_op",
]
