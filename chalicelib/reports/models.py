"""API models of reports (``POST /v1/reports``) and the moderation queue (``/v1/admin/reports``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel, StringConstraints

from chalicelib.kernel.json_types import SINGLE_LINE, Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import CursorQuery
from chalicelib.reports.records import ReportDecision, ReportReason, ReportStatus, ReportSubject

#: Longest ``note``, in characters.
MAX_NOTE = 1000

_REPORT_EXAMPLE: dict[str, Any] = {
    "reportId": "rpt_mfrggzdfmztwq2lknnwg23tpob", "subjectType": "listing", "subjectId": "lst_01JD6Q2222LISTING000000000",
    "reason": "scam", "note": "Asks for a deposit before any viewing", "status": "open",
    "createdAt": "2026-11-21T23:55:55.123Z", "decision": None, "decidedAt": None,
}


class ReportCreate(Model):
    """Body of ``POST /v1/reports``: what is reported and why (once per reporter and subject)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"subjectType": "listing", "subjectId": "lst_01JD6Q2222LISTING000000000", "reason": "scam",
         "note": "Asks for a deposit before any viewing"},
    ]})
    subjectType: ReportSubject
    subjectId: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f]+$")]
    reason: ReportReason
    note: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NOTE), SINGLE_LINE] | None = None


class Report(Model):
    """A report as its reporter sees it."""

    model_config = ConfigDict(json_schema_extra={"examples": [_REPORT_EXAMPLE]})
    reportId: str
    subjectType: ReportSubject
    subjectId: str
    reason: ReportReason
    note: str | None = None
    status: ReportStatus
    createdAt: Timestamp
    decision: ReportDecision | None = None
    decidedAt: Timestamp | None = None


class AdminReport(Report):
    """A report in the moderation queue: also who reported, whose subject it is, and who decided."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {**_REPORT_EXAMPLE, "reporterId": "usr_01JD6Q3333REPORTER00000000", "subjectOwnerId": "usr_01JD6Q4444OWNER000000000",
         "decidedBy": None},
    ]})
    reporterId: str
    subjectOwnerId: str
    decidedBy: str | None = None


class ReportQuery(CursorQuery):
    """Query of ``GET /v1/admin/reports``: optional ``status`` and ``subjectType`` filters,
    ``pageSize`` 1..100 (default 20) and the previous page's ``cursor``."""

    status: ReportStatus | None = None
    subjectType: ReportSubject | None = None

    def filters_text(self) -> str:
        """The filters as the cursor's scope names them."""
        return f"{self.status or ''}|{self.subjectType or ''}"


class ReportPage(Model):
    """Response of ``GET /v1/admin/reports``: open reports first (oldest first), then decided ones."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"reports": [
        {**_REPORT_EXAMPLE, "reporterId": "usr_01JD6Q3333REPORTER00000000", "subjectOwnerId": "usr_01JD6Q4444OWNER000000000",
         "decidedBy": None},
    ], "pageSize": 20, "nextCursor": None}]})
    reports: list[AdminReport]
    pageSize: int
    nextCursor: str | None


_REASON = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), SINGLE_LINE]


class DismissReport(Model):
    """``{"decision": "dismiss"}``: the report is closed, nothing else changes."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["dismiss"]


class HideListing(Model):
    """``{"decision": "hide_listing", "reason"?}`` (a listing report only): the listing becomes
    REJECTED; ``reason`` (default "Hidden by a moderator") becomes its ``statusReason``."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["hide_listing"]
    reason: _REASON | None = None


class SuspendUser(Model):
    """``{"decision": "suspend_user"}``: the subject's owner is suspended (keys refused, listings
    paused, webhooks disabled, until reinstated)."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["suspend_user"]


class ReportDecisionBody(RootModel[Annotated[DismissReport | HideListing | SuspendUser, Field(discriminator="decision")]]):
    """Body of ``POST /v1/admin/reports/{reportId}/decision``: one of :class:`DismissReport`,
    :class:`HideListing` or :class:`SuspendUser`.

    A union discriminated by ``decision``, so that the schema itself says that ``reason`` goes
    only with ``hide_listing`` (as an approval's ``reason`` goes only with ``reject``).
    """

    model_config = ConfigDict(json_schema_extra={"examples": [{"decision": "hide_listing", "reason": "Scam"}]})

    @property
    def decision(self) -> ReportDecision:
        """The decision."""
        return ReportDecision(self.root.decision)

    @property
    def reason(self) -> str | None:
        """The reason given to hide a listing (``None`` for the other decisions or when none was given)."""
        return self.root.reason if isinstance(self.root, HideListing) else None


class Reinstated(Model):
    """Response of ``POST /v1/admin/users/{userId}/reinstate``."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"userId": "usr_01JD6Q4444OWNER000000000", "reinstated": True}]})
    userId: str
    reinstated: bool = True
