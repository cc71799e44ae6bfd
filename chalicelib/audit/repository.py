"""AuditLog table: one item per administrator action, written in the action's transaction.

Item shape: :class:`~chalicelib.audit.records.AuditRecord`, plus the partition attributes of
the list indexes. Every filter combination of ``GET /v1/admin/audit-log`` has its own sparse-free
GSI whose partition is the filter values joined by ``|`` and whose sort key is ``newest``
(``<createdAt>#<entryId>``), so a page is one Query of ``pageSize + 1`` items whatever the log's
length (:mod:`chalicelib.search.keyset`). The unfiltered list is the ``newest`` index on the one
partition ``logAll = "all"``: every administrator action writes it, 300 a second at the target
approval rate (docs/capacity.md), under half of a partition's write limit (1,000 writes per
second; AWS docs, "Partitions and data distribution").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.audit.records import TARGET_TYPES, AuditAction, AuditRecord, record
from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.search import keyset
from chalicelib.telemetry import correlation

#: The one partition of the unfiltered list.
ALL = "all"


def _table() -> str:
    return settings().AUDIT_LOG_TABLE


def _entry_key(_partition: str, newest: str) -> dict[str, str]:
    return {"entryId": newest.rsplit("#", 1)[1]}


def _index(name: str, partition: str) -> keyset.ListIndex:
    return keyset.ListIndex(name, partition, "newest", _entry_key)


#: The list index of each filter combination, by the filters given (actor, action, target).
INDEXES: dict[tuple[bool, bool, bool], keyset.ListIndex] = {
    (False, False, False): _index("newest", "logAll"),
    (True, False, False): _index("byActor", "actorId"),
    (False, True, False): _index("byAction", "action"),
    (False, False, True): _index("byTarget", "targetId"),
    (True, True, False): _index("byActorAction", "actorAction"),
    (True, False, True): _index("byActorTarget", "actorTarget"),
    (False, True, True): _index("byActionTarget", "actionTarget"),
    (True, True, True): _index("byActorActionTarget", "actorActionTarget"),
}


def entry_op(actor_id: str, action: AuditAction, target_id: str, details: Mapping[str, Any] | None = None) -> TransactItem:
    """A transaction ``Put`` of a new audit entry, to add to the transaction of the action it records.

    Parameters
    ----------
    actor_id:
        The administrator's user id.
    action:
        What was done (:class:`~chalicelib.audit.records.AuditAction`); fixes ``targetType``.
    target_id:
        The listing or user id acted on.
    details:
        Small plain values the action set (``{"verifiedLevel": 2}``); ``None`` values are left out.

    Returns
    -------
    TransactItem
        A ``Put`` conditional on a new ``entryId``; the request id bound to the work in progress
        (:mod:`chalicelib.telemetry.correlation`) is stored as ``requestId``.
    """
    created = clock.iso()
    entry_id = clock.new_id("aud")
    item: dict[str, Any] = {
        "entryId": entry_id,
        "createdAt": created,
        "actorId": actor_id,
        "action": action.value,
        "targetType": TARGET_TYPES[action],
        "targetId": target_id,
        "details": {k: v for k, v in (details or {}).items() if v is not None},
        "newest": f"{created}#{entry_id}",
        "logAll": ALL,
        "actorAction": f"{actor_id}|{action.value}",
        "actorTarget": f"{actor_id}|{target_id}",
        "actionTarget": f"{action.value}|{target_id}",
        "actorActionTarget": f"{actor_id}|{action.value}|{target_id}",
    }
    request_id = correlation.current_request_id()
    if request_id is not None:
        item["requestId"] = request_id
    return storage.tx_put(_table(), item, condition="attribute_not_exists(entryId)")


@dataclass(frozen=True)
class Filters:
    """The filters of a list page; ``None`` leaves one out."""

    actor_id: str | None = None
    action: AuditAction | None = None
    target_id: str | None = None

    def index(self) -> keyset.ListIndex:
        """The list index serving exactly these filters."""
        return INDEXES[(self.actor_id is not None, self.action is not None, self.target_id is not None)]

    def partition(self) -> str:
        """The index partition holding the entries these filters select."""
        given = [v for v in (self.actor_id, self.action.value if self.action else None, self.target_id) if v is not None]
        return "|".join(given) if given else ALL


def page(filters: Filters, size: int, after: str | None = None) -> tuple[list[AuditRecord], bool]:
    """One page of entries newest first (one Query of at most ``size + 1`` index items).

    Parameters
    ----------
    filters:
        Which list to read.
    size:
        Entries per page (1..100).
    after:
        ``newest`` of the previous page's last entry (a cursor's position).

    Returns
    -------
    tuple
        The page's records and whether more follow.

    Raises
    ------
    RuleViolation
        As :func:`chalicelib.search.keyset.read_page`: ``after`` is no position of this list.
    """
    found = keyset.read_page(_table(), filters.index(), filters.partition(), size, after=after)
    return [record(i) for i in found.items], found.more
