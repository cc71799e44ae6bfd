"""Routes of reports: ``POST /v1/reports`` (users) and the moderation queue (administrators)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The package's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.reports import models, service, suspension

bp = Blueprint(__name__)
route = routes(bp)


@route(
    "/v1/reports", "POST", body=lambda: models.ReportCreate, response=lambda: models.Report, status=201, tags=("reports",),
    rules=("`subjectId` must not name the caller's own listing, profile or message.",),
)
def report(caller: Caller, body: models.ReportCreate) -> models.Report:
    """Report a listing, profile or message you can see (once per subject)."""
    return service.create_report(caller.user_id, body)


@route("/v1/admin/reports", "GET", auth="admin", query=lambda: models.ReportQuery, response=lambda: models.ReportPage, tags=("admin",))
def reports(caller: Caller, query: models.ReportQuery) -> models.ReportPage:
    """The moderation queue: open reports first (oldest first), filtered by ``status`` and ``subjectType``."""
    return service.list_reports(caller.user_id, query)


@route(
    "/v1/admin/reports/{reportId}/decision", "POST", auth="admin", body=lambda: models.ReportDecisionBody,
    response=lambda: models.AdminReport, tags=("admin",),
    rules=("`hide_listing` applies to a report about a listing only (`details` names `decision`).",),
)
def decide(caller: Caller, reportId: str, body: models.ReportDecisionBody) -> models.AdminReport:
    """Decide a report: ``dismiss``, or ``hide_listing`` (out of search at once); recorded in the audit log."""
    return service.decide(caller.user_id, reportId, body)


@route("/v1/admin/users/{userId}/reinstate", "POST", auth="admin", response=lambda: models.Reinstated, tags=("admin",))
def reinstate(caller: Caller, userId: str) -> models.Reinstated:
    """Lift a suspension: keys authenticate again, paused listings resume, disabled webhooks are enabled."""
    suspension.reinstate(caller.user_id, userId)
    return models.Reinstated(userId=userId)
