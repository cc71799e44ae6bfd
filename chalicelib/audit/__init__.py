"""The administrators' audit log: one immutable entry per administrator action.

A shared package (it imports no domain package): every domain whose service performs an
administrator action adds :func:`chalicelib.audit.repository.entry_op` to the transaction of that
action, so an entry exists if and only if its action committed (as the outbox does for events).
The package owns the AuditLog table; its route (``GET /v1/admin/audit-log``) is in
:mod:`chalicelib.admin`, outside the layers. Nothing in the service updates or deletes an
entry (docs/trust-and-safety.md, "Audit log").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chalicelib.audit.records import AuditAction
    from chalicelib.persistence.transact_items import TransactItem


def entry_op(actor_id: str, action: AuditAction, target_id: str, details: Mapping[str, Any] | None = None) -> TransactItem:
    """A transaction ``Put`` of a new audit entry for the transaction of the action it records
    (:func:`chalicelib.audit.repository.entry_op`, which documents the arguments)."""
    from chalicelib.audit import repository

    return repository.entry_op(actor_id, action, target_id, details)
