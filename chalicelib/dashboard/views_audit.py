"""Administrator page: the audit log (read only), newest first, filtered by actor, action and target."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.dashboard.web import Page, page
from chalicelib.edge.http import parse_model
from chalicelib.kernel.lazy_imports import lazy_imports

# The audit modules load with the first request of this page, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.audit import models as audit_models
    from chalicelib.audit import records as audit_records
    from chalicelib.audit import service as audit_service

#: Entries per page; "Next page" carries the service's signed cursor (bound to the filters and size).
AUDIT_PAGE_SIZE = 50


@page("/dashboard/admin/audit-log", access="admin")
def audit_log(current: Page) -> Response:
    """The audit log with the API's filters (``actor``, ``action``, ``target``) as a GET form.

    An unknown action or an edited cursor is a 400 page naming the field (the API's rule).
    """
    given = {name: current.query(name).strip() for name in ("actor", "action", "target", "cursor")}
    query = parse_model(audit_models.AuditLogQuery, {"pageSize": AUDIT_PAGE_SIZE, **{k: v for k, v in given.items() if v}})
    log = audit_service.list_entries(current.caller.user_id, query)
    filters = {k: v for k, v in given.items() if k != "cursor" and v}
    return current.render("audit_log.html", nav="audit-log", entries=log.entries, next_cursor=log.nextCursor,
                          filters=filters, actions=[a.value for a in audit_records.AuditAction])
