"""Audit log rules: reading the log. Entries are written by the services of the actions
(:func:`chalicelib.audit.repository.entry_op` in each action's transaction) and never changed."""

from __future__ import annotations

from chalicelib.audit import repository
from chalicelib.audit.models import AuditEntry, AuditLogPage, AuditLogQuery

#: The cursor scope's route of the log (shared by the API route and the Dashboard's page).
LOG_ROUTE = "audit.log"


def list_entries(caller_id: str, query: AuditLogQuery) -> AuditLogPage:
    """One page of the audit log, newest first, filtered by ``actor``, ``action`` and ``target``.

    Parameters
    ----------
    caller_id:
        The administrator reading (the cursor is bound to them).
    query:
        Filters (any combination, each served by its own index) and paging.

    Returns
    -------
    AuditLogPage
        At most ``pageSize`` entries; reads ``pageSize + 1`` index items (one Query), whatever
        the log's length.

    Raises
    ------
    RuleViolation
        ``cursor`` is malformed, edited, or from another query (``details`` names ``cursor``).
    """
    position = query.page_query().position(f"{LOG_ROUTE}|{caller_id}|{query.filters_text()}")
    filters = repository.Filters(actor_id=query.actor, action=query.action, target_id=query.target)
    records, more = repository.page(filters, position.page_size, after=position.key)
    entries = [
        AuditEntry(entryId=r["entryId"], createdAt=r["createdAt"], actorId=r["actorId"], action=r["action"],
                   targetType=r["targetType"], targetId=r["targetId"], requestId=r.get("requestId"), details=r["details"])
        for r in records
    ]
    return AuditLogPage(
        entries=entries, pageSize=position.page_size,
        nextCursor=position.next_cursor(more, records[-1]["newest"] if records else None),
    )
