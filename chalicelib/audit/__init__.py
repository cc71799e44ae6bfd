"""The administrators' audit log: one immutable entry per administrator action.

A shared package (it imports no domain package): every domain whose service performs an
administrator action adds :func:`chalicelib.audit.api.entry_op` to the transaction of that
action, so an entry exists if and only if its action committed (as the outbox does for events).
The package owns the AuditLog table; its route (``GET /v1/admin/audit-log``) is in
:mod:`chalicelib.admin`, outside the layers. Nothing in the service updates or deletes an
entry (docs/trust-and-safety.md, "Audit log").
"""
