"""API models of the audit log (``GET /v1/admin/audit-log``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints

from chalicelib.audit.records import AuditAction
from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import CursorQuery

#: An id filter (a user or listing id): 1..100 characters without control characters or ``|``
#: (the separator of the index partitions).
FilterId = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f|]+$")]

_ENTRY_EXAMPLE: dict[str, Any] = {
    "entryId": "aud_01JD6Q6W2N8X7Y5Z4A3B2C1D0E",
    "createdAt": "2026-11-21T23:55:55.123Z",
    "actorId": "usr_01JD6Q0000ADMIN000000000",
    "action": "user.verification_level",
    "targetType": "user",
    "targetId": "usr_01JD6Q1111USER0000000000",
    "requestId": "req_3f2a9c1e7b4d",
    "details": {"verifiedLevel": 2},
}


class AuditLogQuery(CursorQuery):
    """Query of ``GET /v1/admin/audit-log``: optional ``actor`` (an administrator's user id),
    ``action`` and ``target`` (a listing or user id) filters, any combination; ``pageSize``
    1..100 (default 20) and the opaque ``cursor`` of the previous page (signed, bound to these
    filters, the administrator and ``pageSize``)."""

    actor: FilterId | None = None
    action: AuditAction | None = None
    target: FilterId | None = None

    def filters_text(self) -> str:
        """The filters as the cursor's scope names them (``actor|action|target``, empty when unset)."""
        return "|".join(v or "" for v in (self.actor, self.action.value if self.action else None, self.target))


class AuditEntry(Model):
    """One administrator action, as recorded in the transaction that performed it."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ENTRY_EXAMPLE]})
    entryId: str
    createdAt: Timestamp
    actorId: str = Field(description="The acting administrator's user id.")
    action: AuditAction
    targetType: str = Field(description="`listing`, `user` or `report`.")
    targetId: str
    requestId: str | None = Field(default=None, description="`X-Request-Id` of the request that performed the action.")
    details: dict[str, Any] = Field(description="What the action set, e.g. `{\"verifiedLevel\": 2}` or `{\"reason\": \"...\"}`.")


class AuditLogPage(Model):
    """Response of ``GET /v1/admin/audit-log``: entries newest first; ``nextCursor`` is ``null`` on the last page."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"entries": [_ENTRY_EXAMPLE], "pageSize": 20, "nextCursor": None}]})
    entries: list[AuditEntry]
    pageSize: int
    nextCursor: str | None


