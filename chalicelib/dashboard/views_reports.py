"""Administrator page: the moderation queue (open reports first) with the decisions of the API."""

from __future__ import annotations

from typing import Any

from chalice.app import Response

from chalicelib.dashboard.web import Page, field_errors, page, page_status
from chalicelib.edge.http import parse_model
from chalicelib.kernel import errors
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
    return _reports_page(current)


def _reports_page(current: Page, status: int = 200, refused: dict[str, Any] | None = None) -> Response:
    """The queue answered with ``status``; ``refused`` is a refused "Hide listing": the
    ``report_id``, the ``reason`` typed, its ``error`` and the ``error_message`` (:func:`decide`)."""
    given = {name: current.query(name).strip() for name in ("status", "subjectType", "cursor")}
    query = parse_model(report_models.ReportQuery, {"pageSize": REPORTS_PAGE_SIZE, **{k: v for k, v in given.items() if v}})
    queue = reports.list_reports(current.caller.user_id, query)
    return current.render("reports.html", status, nav="reports", reports=queue.reports, next_cursor=queue.nextCursor,
                          filters={k: v for k, v in given.items() if k != "cursor" and v},
                          notice=NOTICES.get(current.query("done")), refused=refused)


@page("/dashboard/admin/reports/{reportId}/decision", "POST", access="admin")
def decide(current: Page, reportId: str) -> Response:
    """Decide a report (the API's rules: once; ``hide_listing`` for listing reports only; a reason
    with ``hide_listing`` only, so one posted with another decision is a 400 naming ``reason``).

    A "Hide listing" reason the API refuses (over 500 characters, an invisible or bidirectional
    control character) shows the queue again (400) with the reason kept and its error under it;
    nothing is decided.
    """
    reason = current.field("reason").strip()
    given = {"decision": current.field("decision"), **({"reason": reason} if reason else {})}
    try:
        body = parse_model(report_models.ReportDecisionBody, given)
    except errors.RuleViolation as exc:
        found, _ = field_errors(exc, ["reason"])
        if given["decision"] != "hide_listing" or set(found) != {"reason"}:
            raise
        return _reports_page(current, page_status(exc), {
            "report_id": reportId, "reason": current.field("reason"), "error": found["reason"], "error_message": exc.message})
    reports.decide(current.caller.user_id, reportId, body)
    return current.redirect(f"/admin/reports?done={body.decision.value}")


@page("/dashboard/admin/users/{userId}/reinstate", "POST", access="admin")
def reinstate(current: Page, userId: str) -> Response:
    """Lift a user's suspension (the API's ``POST /v1/admin/users/{userId}/reinstate``)."""
    suspension.reinstate(current.caller.user_id, userId)
    return current.redirect("/admin/users?done=reinstated")
