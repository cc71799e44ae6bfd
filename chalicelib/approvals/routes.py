"""Admin approval routes: the review queue (read only), claims and decisions."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.approvals import models, service

bp = Blueprint(__name__)
route = routes(bp, tags=("admin",), auth="admin")


@route("/v1/admin/approvals", "GET", query=lambda: models.PendingListingQuery, response=lambda: models.PendingListingPage)
def pending(caller: Caller, query: models.PendingListingQuery) -> models.PendingListingPage:
    """List PENDING listings awaiting review, oldest first, without claiming anything."""
    return service.list_pending(caller, query)


@route("/v1/admin/approvals/claims", "POST", body=lambda: models.ApprovalClaimRequest, response=lambda: models.ApprovalList)
def claim(caller: Caller, body: models.ApprovalClaimRequest) -> models.ApprovalList:
    """Claim up to ``max`` approval tasks for ``APPROVAL_CLAIM_SECONDS`` (300 s); decide each before it expires."""
    return service.claim(body.max)


@route("/v1/admin/approvals/{approvalId}", "POST", body=lambda: models.ApprovalDecision, response=lambda: models.ApprovalResult)
def decide(caller: Caller, approvalId: str, body: models.ApprovalDecision) -> models.ApprovalResult:
    """Approve or reject a claimed listing."""
    return service.decide(approvalId, body, caller.user_id)
