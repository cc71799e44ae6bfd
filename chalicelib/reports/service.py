"""Report rules: a user reports what they can see, once per subject; administrators decide.

* ``POST /v1/reports``: the subject must be one the reporter can see as a user (an ACTIVE
  listing, a profile, a message of a conversation they take part in) and not their own;
  otherwise 404 as for a missing subject. A block does not stand in the way: whoever blocked or
  was blocked may still report what the other showed publicly. The report's id is derived from the
  reporter and the subject, so a second report is a 409 by key.
* Decisions: ``dismiss``, ``hide_listing`` (ACTIVE -> REJECTED with the administrator's
  reason, out of search at once) or ``suspend_user`` (the subject's owner,
  :mod:`chalicelib.reports.suspension`), each with its audit entry in the decision's transaction.
"""

from __future__ import annotations

from chalicelib.audit import api as audit
from chalicelib.audit.records import AuditAction
from chalicelib.conversations import service as conversations
from chalicelib.kernel import clock, errors
from chalicelib.listings import api as listings
from chalicelib.listings import status
from chalicelib.listings.status import Transition
from chalicelib.persistence.transactions import ConditionFailed, Transaction, TransactionConflict, TransactItem
from chalicelib.reports import repository, suspension
from chalicelib.reports.models import AdminReport, Report, ReportCreate, ReportDecisionBody, ReportPage, ReportQuery
from chalicelib.reports.records import ReportDecision, ReportRecord, ReportStatus, ReportSubject
from chalicelib.users import api as users

#: The listing's ``statusReason`` of a hide without a reason.
DEFAULT_HIDE_REASON = "Hidden by a moderator"
#: The cursor scope's route of the moderation queue.
QUEUE_ROUTE = "reports.queue"


def _owner_of(reporter_id: str, subject_type: ReportSubject, subject_id: str) -> str:
    """The user the subject belongs to, if the reporter can see it.

    Raises
    ------
    NotFound
        No such subject, or not visible to the reporter.
    RuleViolation
        The subject is the reporter's own (``details`` names ``subjectId``).
    """
    missing = errors.NotFound(f"No {subject_type.value} '{subject_id}' to report")
    owner: str | None = None
    if subject_type == ReportSubject.LISTING:
        listing = listings.get(subject_id)
        if listing is not None and (status.is_public(listing["status"]) or listing["ownerId"] == reporter_id):
            owner = listing["ownerId"]
    elif subject_type == ReportSubject.PROFILE:
        user = users.get_user(subject_id)
        owner = subject_id if user is not None and not users.is_suspended(user) else None  # the profile others see
    else:
        message = conversations.visible_message(reporter_id, subject_id)
        owner = message.senderId if message is not None else None
    if owner is None:
        raise missing
    if owner == reporter_id:
        raise errors.RuleViolation.for_field("subjectId", f"this {subject_type.value} is yours", "You cannot report yourself")
    return owner


def create_report(reporter_id: str, body: ReportCreate) -> Report:
    """File a report (status ``open``).

    Raises
    ------
    NotFound, RuleViolation
        As :func:`_owner_of`: no such subject visible to the reporter, or the reporter's own.
    Conflict
        The reporter reported this subject already.
    """
    owner = _owner_of(reporter_id, body.subjectType, body.subjectId)
    now = clock.iso()
    report_id = repository.report_id(reporter_id, body.subjectType, body.subjectId)
    report: ReportRecord = {
        "reportId": report_id, "reporterId": reporter_id, "subjectType": body.subjectType, "subjectId": body.subjectId,
        "subjectOwnerId": owner, "reason": body.reason, "status": ReportStatus.OPEN, "createdAt": now,
        "queueKey": repository.queue_key(ReportStatus.OPEN, now, report_id),
    }
    if body.note is not None:
        report["note"] = body.note
    try:
        Transaction().add("report", repository.put_new_op(report)).commit()
    except TransactionConflict as exc:
        raise errors.Conflict(f"You reported this {body.subjectType.value} already (reportId '{report_id}')") from exc
    return _public(report)


def list_reports(admin_id: str, query: ReportQuery) -> ReportPage:
    """The moderation queue: open reports first, oldest first, then decided ones (one Query of
    ``pageSize + 1`` items of the index of the ``subjectType`` filter; ``status`` is a key prefix).

    Raises
    ------
    RuleViolation
        ``cursor`` is malformed, edited or from another query (``details`` names ``cursor``).
    """
    position = query.page_query().position(f"{QUEUE_ROUTE}|{admin_id}|{query.filters_text()}")
    records, more = repository.queue_page(query.subjectType, query.status, position.page_size, after=position.key)
    return ReportPage(reports=[_admin_view(r) for r in records], pageSize=position.page_size,
                      nextCursor=position.next_cursor(more and bool(records), records[-1]["queueKey"] if records else None))


def decide(admin_id: str, report_id: str, body: ReportDecisionBody) -> AdminReport:
    """Decide an open report; the decision, its effect (for ``suspend_user``, the suspension's first
    step: :func:`chalicelib.reports.suspension.suspend`) and its audit entry are one transaction.

    Raises
    ------
    NotFound
        No such report, or (``suspend_user``) the subject's owner is gone: nothing is written.
    RuleViolation
        ``hide_listing`` of a report that is not about a listing (``details`` names ``decision``).
    Conflict
        The report was decided already (or meanwhile), or its listing changed meanwhile.
    """
    report = repository.get(report_id, consistent=True)
    if report is None:
        raise errors.NotFound(f"Report '{report_id}' not found")
    if report["status"] != ReportStatus.OPEN:
        raise errors.Conflict("The report was decided already")
    if body.decision == ReportDecision.HIDE_LISTING and report["subjectType"] != ReportSubject.LISTING:
        raise errors.RuleViolation.for_field("decision", "hide_listing applies to listing reports only")
    now = clock.iso()
    decided = repository.decide_op(report, body.decision, admin_id, now)
    try:
        if body.decision == ReportDecision.DISMISS:
            entry = audit.entry_op(admin_id, AuditAction.REPORT_DISMISS, report_id,
                                   {"subjectType": report["subjectType"].value, "subjectId": report["subjectId"]})
            Transaction().add("report", decided).add("audit", entry).commit()
        elif body.decision == ReportDecision.SUSPEND_USER:
            entry = audit.entry_op(admin_id, AuditAction.REPORT_SUSPEND_USER, report_id, {"userId": report["subjectOwnerId"]})
            suspension.suspend(admin_id, report["subjectOwnerId"], report_id, decision=[decided, entry])
        else:
            _take_listing_out_of_search(admin_id, report, decided, body.reason or DEFAULT_HIDE_REASON, now)
    except (TransactionConflict, ConditionFailed) as exc:
        raise errors.Conflict("The report or its listing changed meanwhile; read it again") from exc
    written: ReportRecord = {**report, "status": ReportStatus.DECIDED, "decision": body.decision, "decidedBy": admin_id,
                             "decidedAt": now}
    return _admin_view(written)


def _take_listing_out_of_search(admin_id: str, report: ReportRecord, decided: TransactItem, reason: str, now: str) -> None:
    """Take the reported listing down (ACTIVE, PAUSED or PENDING -> REJECTED, so neither its owner's
    resume, a reinstatement nor an approval brings it back) with the decision and its audit entry
    in the same transaction; a listing REJECTED already (or gone) is recorded alone."""
    listing = listings.get(report["subjectId"])
    entry = audit.entry_op(admin_id, AuditAction.REPORT_HIDE_LISTING, report["reportId"],
                           {"listingId": report["subjectId"], "reason": reason})
    if listing is not None and status.may_start(Transition.HIDE, listing["status"]):
        listings.transition(listing, Transition.HIDE, now, reason=reason, extra=[decided, entry])
    else:
        Transaction().add("report", decided).add("audit", entry).commit()


def _public(report: ReportRecord) -> Report:
    return Report(reportId=report["reportId"], subjectType=report["subjectType"], subjectId=report["subjectId"],
                  reason=report["reason"], note=report.get("note"), status=report["status"], createdAt=report["createdAt"],
                  decision=report.get("decision"), decidedAt=report.get("decidedAt"))


def _admin_view(report: ReportRecord) -> AdminReport:
    return AdminReport(**_public(report).model_dump(), reporterId=report["reporterId"],
                       subjectOwnerId=report["subjectOwnerId"], decidedBy=report.get("decidedBy"))


def reports_made(reporter_id: str) -> list[Report]:
    """Every report ``reporter_id`` made, oldest first, as the reporter sees them."""
    return [_public(r) for r in repository.made_by(reporter_id)]
