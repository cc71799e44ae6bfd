"""Approval models (DESIGN §2 "Approvals")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from chalicelib.json_types import NON_BLANK, Timestamp
from chalicelib.listings.models import Listing


class ApprovalClaimQuery(BaseModel):
    """Query of ``GET /v1/admin/approvals``: claim up to ``max`` tasks (1..10, SQS's batch limit)."""

    model_config = ConfigDict(extra="forbid")
    max: int = Field(default=10, ge=1, le=10)


class Approval(BaseModel):
    """A claimed task: decide it with ``POST /v1/admin/approvals/{approvalId}`` before the claim expires."""

    approvalId: str
    listingId: str
    listing: Listing
    enqueuedAt: Timestamp


class ApprovalList(BaseModel):
    """Response of ``GET /v1/admin/approvals``."""

    approvals: list[Approval]


class ApprovalDecision(BaseModel):
    """Body of ``POST /v1/admin/approvals/{approvalId}``; ``reason`` becomes the listing's ``statusReason``."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "reject"]
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500, pattern=NON_BLANK)] | None = None


class ApprovalResult(BaseModel):
    """Response of a decision: the listing after it."""

    approvalId: str
    decision: Literal["approve", "reject"]
    listing: Listing
