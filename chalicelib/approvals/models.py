"""Approval models (DESIGN §2 "Approvals")."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, RootModel, StringConstraints

from chalicelib.kernel.json_types import SINGLE_LINE, Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import CursorQuery
from chalicelib.listings.models import Listing


class ApprovalClaimRequest(Model):
    """Body of ``POST /v1/admin/approvals/claims``: claim up to ``max`` tasks (1..10, SQS's batch limit)."""

    model_config = ConfigDict(extra="forbid")
    max: int = Field(default=10, ge=1, le=10)


class PendingListingQuery(CursorQuery):
    """Query of ``GET /v1/admin/approvals``: ``pageSize`` 1..100 (default 20) and the opaque
    ``cursor`` of the previous page's ``nextCursor`` (signed and bound to this list, the
    administrator and ``pageSize``: :mod:`chalicelib.kernel.cursors`), as :class:`chalicelib.kernel.pagination.PageQuery`
    without ``page`` (the queue has no offset pages)."""


class PendingListingPage(Model):
    """Response of ``GET /v1/admin/approvals``: PENDING listings, oldest submission first, nothing claimed.

    ``nextCursor`` is ``null`` on the last page; pass it as ``cursor`` for the next one.
    """

    listings: list[Listing]
    pageSize: int
    nextCursor: str | None


class Approval(Model):
    """A claimed task: decide it with ``POST /v1/admin/approvals/{approvalId}`` before the claim expires."""

    approvalId: str
    listingId: str
    listing: Listing
    enqueuedAt: Timestamp


class ApprovalList(Model):
    """Response of ``POST /v1/admin/approvals/claims``: the tasks claimed for ``APPROVAL_CLAIM_SECONDS``."""

    approvals: list[Approval]


class ApproveListing(Model):
    """``{"decision": "approve"}``: the listing becomes ACTIVE (no ``reason``)."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve"]


class RejectListing(Model):
    """``{"decision": "reject", "reason"?}``: the listing becomes REJECTED; ``reason`` (default
    :data:`~chalicelib.approvals.service.DEFAULT_REJECTION_REASON`) becomes its ``statusReason``."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["reject"]
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), SINGLE_LINE] | None = None


class ApprovalDecision(RootModel[Annotated[ApproveListing | RejectListing, Field(discriminator="decision")]]):
    """Body of ``POST /v1/admin/approvals/{approvalId}``: one of :class:`ApproveListing` or :class:`RejectListing`.

    A union discriminated by ``decision``, so that the schema itself says that ``reason`` goes
    only with ``reject`` (``additionalProperties: false`` on ``approve``), as a match request's
    decision does.
    """

    model_config = ConfigDict(json_schema_extra={"examples": [{"decision": "approve"}]})

    @property
    def decision(self) -> Literal["approve", "reject"]:
        """``"approve"`` or ``"reject"``."""
        return self.root.decision

    @property
    def reason(self) -> str | None:
        """The rejection reason (``None`` when approving or when none was given)."""
        return self.root.reason if isinstance(self.root, RejectListing) else None


class ApprovalResult(Model):
    """Response of a decision: the listing after it."""

    approvalId: str
    decision: Literal["approve", "reject"]
    listing: Listing


class PendingReview(Model):
    """A PENDING listing as the Dashboard's review page shows it: the listing and the ``version``
    the administrator reads, which the decision is then bound to (no claim involved)."""

    listing: Listing
    version: int
    #: The meta as last approved (``None``: never approved), the diff base of the review page.
    approvedMeta: dict[str, str] | None = None


class ReviewQueue(Model):
    """The Dashboard's review page: PENDING listings oldest first, and where the next page starts."""

    reviews: list[PendingReview]
    nextCursor: str | None
