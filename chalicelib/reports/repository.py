"""Reports table: one item per reporter and subject (the key makes "once per subject" atomic).

The moderation queue is the ``queueAll`` index (partition ``all``) and, filtered by subject type,
``queueByType`` (partition the type), both sorted by ``queueKey`` =
``<0 open | 1 decided>#<createdAt>#<reportId>``: open reports first, oldest first; a status
filter is a ``begins_with`` key condition, so a page is one Query of ``pageSize + 1`` items.
"""

from __future__ import annotations

import base64
import hashlib

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.reports.records import ReportDecision, ReportRecord, ReportStatus, ReportSubject, record
from chalicelib.search import keyset

#: The one partition of the unfiltered queue.
ALL = "all"
#: The ``queueKey`` prefix of each status.
STATUS_PREFIX = {ReportStatus.OPEN: "0#", ReportStatus.DECIDED: "1#"}


def _table() -> str:
    return settings().REPORTS_TABLE


def _report_of(_partition: str, queue_key: str) -> dict[str, str]:
    return {"reportId": queue_key.rsplit("#", 1)[1]}


QUEUE_ALL = keyset.ListIndex("queueAll", "queueAll", "queueKey", _report_of)
QUEUE_BY_TYPE = keyset.ListIndex("queueByType", "subjectType", "queueKey", _report_of)
#: The reports a user made, oldest first (read whole: the account export).
BY_REPORTER = keyset.ListIndex("byReporter", "reporterId", "createdAt", _report_of)


def report_id(reporter_id: str, subject_type: ReportSubject, subject_id: str) -> str:
    """The id of ``reporter_id``'s report about the subject: ``rpt_`` + 26 base32 characters of
    SHA-256 over the three (so a second report of the same subject has the same key)."""
    digest = hashlib.sha256("\x1f".join((reporter_id, subject_type.value, subject_id)).encode()).digest()
    return "rpt_" + base64.b32encode(digest).decode().lower()[:26]


def queue_key(status: ReportStatus, created_at: str, report_id_: str) -> str:
    """The moderation queue's sort key of a report."""
    return f"{STATUS_PREFIX[status]}{created_at}#{report_id_}"


def put_new_op(report: ReportRecord) -> TransactItem:
    """A transaction ``Put`` of a new report; fails when the reporter reported the subject already."""
    item = {**report, "queueAll": ALL}
    return storage.tx_put(_table(), item, condition="attribute_not_exists(reportId)")


def get(report_id_: str, consistent: bool = False) -> ReportRecord | None:
    """The report, or ``None``."""
    item = storage.get(_table(), {"reportId": report_id_}, consistent=consistent)
    return record(item) if item is not None else None


def decide_op(report: ReportRecord, decision: ReportDecision, admin_id: str, decided_at: str) -> TransactItem:
    """A transaction ``Update`` deciding an OPEN report (it moves to the decided part of the queue)."""
    return storage.tx_update(
        _table(), {"reportId": report["reportId"]},
        "SET #st = :decided, decision = :d, decidedBy = :by, decidedAt = :at, queueKey = :q",
        condition="#st = :open",
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(
            decided=ReportStatus.DECIDED.value, open=ReportStatus.OPEN.value, d=decision.value, by=admin_id, at=decided_at,
            q=queue_key(ReportStatus.DECIDED, report["createdAt"], report["reportId"]),
        ),
    )


def queue_page(
    subject_type: ReportSubject | None, status: ReportStatus | None, size: int, after: str | None = None
) -> tuple[list[ReportRecord], bool]:
    """One page of the moderation queue (one Query of ``size + 1`` index items).

    Raises
    ------
    RuleViolation
        ``after`` is not a position of this list (field ``cursor``).
    """
    index, partition = (QUEUE_ALL, ALL) if subject_type is None else (QUEUE_BY_TYPE, subject_type.value)
    found = keyset.read_page(_table(), index, partition, size, after=after, descending=False,
                             prefix=STATUS_PREFIX[status] if status is not None else None)
    return [record(i) for i in found.items], found.more




def made_by(reporter_id: str) -> list[ReportRecord]:
    """Every report ``reporter_id`` made, oldest first (the ``byReporter`` index, read whole: the
    account export reads the user's own data)."""
    return [record(i) for i in keyset.read_all(_table(), BY_REPORTER, reporter_id, descending=False)]
