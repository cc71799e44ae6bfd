"""Route of the audit log: ``GET /v1/admin/audit-log`` (read only: no route changes an entry)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The audit modules load with the first request of this route, not at cold start.
with lazy_imports(__name__):
    from chalicelib.audit import models, service

bp = Blueprint(__name__)
route = routes(bp, tags=("admin",), auth="admin")


@route("/v1/admin/audit-log", "GET", query=lambda: models.AuditLogQuery, response=lambda: models.AuditLogPage)
def audit_log(caller: Caller, query: models.AuditLogQuery) -> models.AuditLogPage:
    """Administrator actions newest first, filtered by ``actor``, ``action`` and ``target``."""
    return service.list_entries(caller.user_id, query)
