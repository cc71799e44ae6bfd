"""Administrator page: the audit log (read only), newest first, filtered by actor, action and target."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.dashboard.web import Page, field_errors, page, page_status
from chalicelib.edge.http import parse_model
from chalicelib.kernel import errors
from chalicelib.kernel.lazy_imports import lazy_imports

# The audit modules load with the first request of this page, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.audit import models as audit_models
    from chalicelib.audit import records as audit_records
    from chalicelib.audit import service as audit_service

#: The filter form's fields as its errors name them, in the form's order (``cursor``: the "Next page" link's).
FIELDS = ["actor", "action", "target", "cursor"]
#: Entries per page; "Next page" carries the service's signed cursor (bound to the filters and size).
AUDIT_PAGE_SIZE = 50


@page("/dashboard/admin/audit-log", access="admin")
def audit_log(current: Page) -> Response:
    """The audit log with the API's filters (``actor``, ``action``, ``target``) as a GET form.

    A filter the API refuses (an unknown action, an id with a control character) or an edited
    cursor shows the form again (400) with the values typed, each error under its field (the
    cursor's in the summary), and no entries.
    """
    given = {name: current.query(name).strip() for name in FIELDS}
    filters = {k: v for k, v in given.items() if k != "cursor" and v}
    actions = [a.value for a in audit_records.AuditAction]
    try:
        query = parse_model(audit_models.AuditLogQuery, {"pageSize": AUDIT_PAGE_SIZE, **{k: v for k, v in given.items() if v}})
        log = audit_service.list_entries(current.caller.user_id, query)
    except errors.RuleViolation as exc:
        found, first = field_errors(exc, FIELDS)
        return current.render("audit_log.html", page_status(exc), nav="audit-log", entries=[], next_cursor=None, filters=filters,
                              actions=actions, errors=found, first_invalid=first, error_message=exc.message)
    return current.render("audit_log.html", nav="audit-log", entries=log.entries, next_cursor=log.nextCursor,
                          filters=filters, actions=actions)
