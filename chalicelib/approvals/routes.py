"""Admin approval routes: the review queue (read only), claims and decisions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.http import route
from chalicelib.lazy import lazy_import

# The domain's modules load with the first request of one of these routes, not at cold start.
if TYPE_CHECKING:
    from chalicelib.approvals import models, service
    from chalicelib.approvals.models import (
        ApprovalClaimRequest,
        ApprovalDecision,
        ApprovalList,
        ApprovalResult,
        PendingListingPage,
        PendingListingQuery,
    )
else:
    models = lazy_import("chalicelib.approvals.models")
    service = lazy_import("chalicelib.approvals.service")

bp = Blueprint(__name__)


@route(
    bp, "/v1/admin/approvals", "GET", auth="admin", query=lambda: models.PendingListingQuery,
    response=lambda: models.PendingListingPage, tags=("admin",),
)
def pending(caller: Caller, query: PendingListingQuery) -> PendingListingPage:
    """List PENDING listings awaiting review, oldest first, without claiming anything."""
    return service.list_pending(caller, query)


@route(
    bp, "/v1/admin/approvals/claims", "POST", auth="admin", body=lambda: models.ApprovalClaimRequest,
    response=lambda: models.ApprovalList, tags=("admin",),
)
def claim(caller: Caller, body: ApprovalClaimRequest) -> ApprovalList:
    """Claim up to ``max`` approval tasks for ``APPROVAL_CLAIM_SECONDS`` (300 s); decide each before it expires."""
    return service.claim(body.max)


@route(
    bp, "/v1/admin/approvals/{approvalId}", "POST", auth="admin", body=lambda: models.ApprovalDecision,
    response=lambda: models.ApprovalResult, tags=("admin",),
)
def decide(caller: Caller, approvalId: str, body: ApprovalDecision) -> ApprovalResult:
    """Approve or reject a claimed listing."""
    return service.decide(approvalId, body)
