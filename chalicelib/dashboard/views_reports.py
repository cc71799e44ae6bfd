"""Administrator page: the moderation queue (open reports first) with the decisions of the API."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.dashboard.web import Page, page
from chalicelib.edge.http import parse_model
from chalicelib.kernel.lazy_imports import lazy_imports

# The reports modules load with the first request of these pages, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.reports import models as report_models
    from chalicelib.reports import service as reports
    from chalicelib.reports import suspension

#: Reports per page; "Next page" carries the service's signed cursor.
REPORTS_PAGE_SIZE = 50

NOTICES = {
    "dismiss": "Report dismissed.",
    "hide_listing": "Listing hidden: it is out of search, and its owner sees your reason.",
    "suspend_user": "User suspended: their keys are refused, their listings paused, their webhooks disabled.",
}


@page("/dashboard/admin/reports", access="admin")
def reports_page(current: Page) -> Response:
    """The queue with the API's filters (``status``, ``subjectType``) as a GET form."""
    given = {name: current.query(name).strip() for name in ("status", "subjectType", "cursor")}
    query = parse_model(report_models.ReportQuery, {"pageSize": REPORTS_PAGE_SIZE, **{k: v for k, v in given.items() if v}})
    queue = reports.list_reports(current.caller.user_id, query)
    return current.render("reports.html", nav="reports", reports=queue.reports, next_cursor=queue.nextCursor,
                          filters={k: v for k, v in given.items() if k != "cursor" and v},
                          notice=NOTICES.get(current.query("done")))


@page("/dashboard/admin/reports/{reportId}/decision", "POST", access="admin")
def decide(current: Page, reportId: str) -> Response:
    """Decide a report (the API's rules: once; ``hide_listing`` for listing reports only; a reason
    with ``hide_listing`` only, so one posted with another decision is a 400 naming ``reason``)."""
    reason = current.field("reason").strip()
    given = {"decision": current.field("decision"), **({"reason": reason} if reason else {})}
    body = parse_model(report_models.ReportDecisionBody, given)
    reports.decide(current.caller.user_id, reportId, body)
    return current.redirect(f"/admin/reports?done={body.decision.value}")


@page("/dashboard/admin/users/{userId}/reinstate", "POST", access="admin")
def reinstate(current: Page, userId: str) -> Response:
    """Lift a user's suspension (the API's ``POST /v1/admin/users/{userId}/reinstate``)."""
    suspension.reinstate(current.caller.user_id, userId)
    return current.redirect("/admin/users?done=reinstated")
