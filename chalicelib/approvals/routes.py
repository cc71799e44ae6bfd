"""Admin approval routes."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.approvals import service
from chalicelib.approvals.models import ApprovalClaimQuery, ApprovalDecision, ApprovalList, ApprovalResult
from chalicelib.auth.service import Caller
from chalicelib.http import route

bp = Blueprint(__name__)


@route(bp, "/v1/admin/approvals", "GET", auth="admin", query=ApprovalClaimQuery, response=ApprovalList, tags=("admin",))
def claim(caller: Caller, query: ApprovalClaimQuery) -> ApprovalList:
    """Claim up to ``max`` listings awaiting review."""
    return service.claim(query.max)


@route(bp, "/v1/admin/approvals/{approvalId}", "POST", auth="admin", body=ApprovalDecision, response=ApprovalResult, tags=("admin",))
def decide(caller: Caller, approvalId: str, body: ApprovalDecision) -> ApprovalResult:
    """Approve or reject a claimed listing."""
    return service.decide(approvalId, body)
