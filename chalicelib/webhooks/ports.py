"""What the webhook rules (:mod:`chalicelib.webhooks.service`) need from storage and from delivery.

Each port is a :class:`typing.Protocol` holding only the functions the service calls, with their
signatures; the real modules satisfy them (mypy checks :data:`chalicelib.webhooks.service.DEFAULT_PORTS`),
and the unit tests give the service in-memory fakes instead (``tests/unit/fakes/webhooks.py``,
through :func:`chalicelib.webhooks.service.use_ports`). The pattern: docs/testing.md, "Ports and fakes".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from chalicelib.persistence.transactions import Transaction, TransactItem
from chalicelib.webhooks.delivery.attempt_log import AttemptPage, FailedDeliveries
from chalicelib.webhooks.delivery.envelope import Delivery
from chalicelib.webhooks.delivery.records import AttemptRecord
from chalicelib.webhooks.records import WebhookEdit, WebhookRecord


class WebhooksRepository(Protocol):
    """The Webhooks table as the webhook rules use it (:mod:`chalicelib.webhooks.repository`).

    The ``*_owned`` writes are conditional on ``owner_id`` owning the webhook and return ``None``
    (or ``False``) when it is missing or someone else's.
    """

    def get(self, webhook_id: str, consistent: bool = False) -> WebhookRecord | None:
        """The webhook, or ``None``."""
        ...

    def create(self, item: WebhookRecord) -> None:
        """Put a new webhook."""
        ...

    def next_lane_number(self, owner_id: str) -> int:
        """How many webhooks the owner created before this one (0, 1, 2, ...)."""
        ...

    def forget_lane_counter_op(self, owner_id: str) -> TransactItem:
        """The transaction item deleting the owner's lane counter."""
        ...

    def list_by_owner(self, owner_id: str) -> list[WebhookRecord]:
        """Every webhook of the owner, newest first."""
        ...

    def delete_owned(self, webhook_id: str, owner_id: str) -> bool:
        """Delete the owner's webhook; ``False`` when missing or someone else's."""
        ...

    def update_owned(self, webhook_id: str, owner_id: str, changes: WebhookEdit) -> WebhookRecord | None:
        """Set ``changes`` on the owner's webhook; the new item."""
        ...

    def enable_owned(self, webhook_id: str, owner_id: str, now: str) -> WebhookRecord | None:
        """Switch the owner's webhook on with ``failCount`` 0; the new item."""
        ...

    def enable_inactive_owned(self, webhook_id: str, owner_id: str, now: str, event: TransactItem) -> bool:
        """Switch the owner's inactive webhook on, with ``event`` in the same transaction; ``False``
        (nothing written) when it is active already."""
        ...

    def disable_owned(self, webhook_id: str, owner_id: str, now: str) -> WebhookRecord | None:
        """Switch the owner's webhook off; the new item."""
        ...

    def rotate_owned(self, webhook_id: str, owner_id: str, current: str, new: str, previous_expires_at: str,
                     now: str) -> WebhookRecord | None:
        """Replace the secret ``current`` by ``new``; ``None`` also when the secret is not ``current`` any more."""
        ...

    def start_recovery(self, webhook_id: str, recovery_id: str, at: str, queued: int) -> None:
        """Record a new recovery of ``queued`` attempts on the webhook."""
        ...

    def count_recovery(self, webhook_id: str, recovery_id: str, sent: bool, amount: int = 1) -> bool:
        """Count ``amount`` attempts of the recovery as sent or not sent."""
        ...


class AttemptLog(Protocol):
    """A webhook's delivery log as the webhook rules read it (:mod:`chalicelib.webhooks.delivery.attempt_log`)."""

    def attempts_page(self, webhook_id: str, moment: datetime, size: int, after: str | None = None, skip: int = 0) -> AttemptPage:
        """A page of the log as listed at ``moment``, newest first."""
        ...

    def count_attempts(self, webhook_id: str, moment: datetime) -> int:
        """The number of attempts the log lists at ``moment``."""
        ...

    def newest_attempts(self, webhook_id: str, limit: int) -> list[AttemptRecord]:
        """The ``limit`` newest attempts, newest first."""
        ...

    def get_logged(self, webhook_id: str, delivery_key: str) -> AttemptRecord | None:
        """One attempt by its log key, or ``None``."""
        ...

    def filtered_attempts(self, webhook_id: str, moment: datetime, limit: int, success: bool | None = None,
                          event: str | None = None, event_id: str | None = None, since: str | None = None) -> AttemptPage:
        """The ``limit`` newest attempts matching the filters, newest first."""
        ...

    def failed_since(self, webhook_id: str, since: str, limit: int) -> FailedDeliveries:
        """The events whose newest attempt since ``since`` (ISO 8601 UTC) failed, oldest first."""
        ...

    def hourly_outcomes(self, webhook_id: str, first_hour: datetime, last_hour: datetime) -> dict[str, tuple[int, int]]:
        """``(succeeded, failed)`` by hour (``YYYY-MM-DDTHH``) from ``first_hour`` to ``last_hour``."""
        ...


class Redelivery(Protocol):
    """Queuing more attempts of past deliveries (:mod:`chalicelib.webhooks.delivery.redelivery`)."""

    def redeliver(self, webhook_id: str, event_id: str, owner_id: str, lane: int | None = None, slow: bool = False) -> Delivery:
        """Queue the next attempt of one delivery (in a slow lane when ``slow``). Raises ``UnknownDelivery`` when none was made."""
        ...

    def redeliver_many(self, webhook_id: str, event_ids: list[str], owner_id: str, lane: int | None = None,
                       recovery_id: str | None = None,
                       before_enqueue: Callable[[list[Delivery]], None] | None = None, slow: bool = False) -> list[Delivery]:
        """Queue the next attempt of each event's delivery (in a slow lane when ``slow``); ``before_enqueue`` sees them first."""
        ...


@dataclass(frozen=True)
class Ports:
    """Everything outside its own rules that :mod:`chalicelib.webhooks.service` calls."""

    repository: WebhooksRepository
    attempt_log: AttemptLog
    redelivery: Redelivery
    #: Writes a transaction's items at once (``Transaction.commit``: the outbox event of a test event).
    commit: Callable[[Transaction], None]
