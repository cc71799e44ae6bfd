"""In-memory webhook ports (:mod:`chalicelib.webhooks.ports`): the Webhooks table, the delivery log, redelivery."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import cast

from chalicelib.persistence import storage
from chalicelib.persistence.transactions import Transaction, TransactItem
from chalicelib.webhooks.delivery.attempt_log import AttemptPage, FailedDeliveries
from chalicelib.webhooks.delivery.envelope import Delivery, Event
from chalicelib.webhooks.delivery.records import AttemptRecord
from chalicelib.webhooks.delivery.redelivery import UnknownDelivery
from chalicelib.webhooks.records import WebhookEdit, WebhookRecord

NOW = "2026-03-01T12:00:00.000Z"


def webhook_record(webhook_id: str, owner_id: str, **fields: object) -> WebhookRecord:
    """A stored active webhook of ``owner_id`` subscribed to every event, ``fields`` on top."""
    item: WebhookRecord = {"webhookId": webhook_id, "ownerId": owner_id, "name": webhook_id, "url": "https://93.184.216.34/hook",
                           "secret": "whsec_old", "active": True, "failCount": 0, "createdAt": NOW, "updatedAt": NOW, "lane": 0}
    return cast(WebhookRecord, {**item, **fields})


class FakeWebhookStore:
    """Webhooks by id with the real repository's ownership and state conditions; the events its
    conditional writes carried are kept in :attr:`committed_ops`."""

    def __init__(self, *webhooks: WebhookRecord) -> None:
        self.items: dict[str, WebhookRecord] = {w["webhookId"]: w for w in webhooks}
        self.lanes: dict[str, int] = {}
        self.committed_ops: list[TransactItem] = []

    def get(self, webhook_id: str, consistent: bool = False) -> WebhookRecord | None:
        """The webhook, or ``None``."""
        return self.items.get(webhook_id)

    def create(self, item: WebhookRecord) -> None:
        """Store a new webhook (its id must be new)."""
        if item["webhookId"] in self.items:
            raise storage.ConditionFailed("The conditional request failed")
        self.items[item["webhookId"]] = item

    def next_lane_number(self, owner_id: str) -> int:
        """0, 1, 2, ... per owner."""
        self.lanes[owner_id] = self.lanes.get(owner_id, -1) + 1
        return self.lanes[owner_id]

    def forget_lane_counter_op(self, owner_id: str) -> TransactItem:
        """A ``Delete`` of the owner's lane counter."""
        return storage.tx_delete("fake-webhooks", {"webhookId": f"lanes#{owner_id}"})

    def list_by_owner(self, owner_id: str) -> list[WebhookRecord]:
        """The owner's webhooks, newest first."""
        return sorted((w for w in self.items.values() if w["ownerId"] == owner_id), key=lambda w: w["createdAt"], reverse=True)

    def _owned(self, webhook_id: str, owner_id: str) -> WebhookRecord | None:
        item = self.items.get(webhook_id)
        return item if item is not None and item["ownerId"] == owner_id else None

    def _set(self, webhook_id: str, owner_id: str, **changes: object) -> WebhookRecord | None:
        item = self._owned(webhook_id, owner_id)
        if item is None:
            return None
        self.items[webhook_id] = cast(WebhookRecord, {**item, **changes})
        return self.items[webhook_id]

    def delete_owned(self, webhook_id: str, owner_id: str) -> bool:
        """Delete the owner's webhook; ``False`` when missing or someone else's."""
        return self._owned(webhook_id, owner_id) is not None and self.items.pop(webhook_id) is not None

    def update_owned(self, webhook_id: str, owner_id: str, changes: WebhookEdit) -> WebhookRecord | None:
        """Set ``changes`` on the owner's webhook."""
        return self._set(webhook_id, owner_id, **changes)

    def enable_owned(self, webhook_id: str, owner_id: str, now: str) -> WebhookRecord | None:
        """Switch the owner's webhook on with ``failCount`` 0."""
        return self._set(webhook_id, owner_id, active=True, failCount=0, updatedAt=now)

    def enable_inactive_owned(self, webhook_id: str, owner_id: str, now: str, event: TransactItem) -> bool:
        """Switch the owner's inactive webhook on and keep ``event``; ``False`` when it is active."""
        item = self._owned(webhook_id, owner_id)
        if item is None or item["active"]:
            return False
        self._set(webhook_id, owner_id, active=True, failCount=0, updatedAt=now)
        self.committed_ops.append(event)
        return True

    def disable_owned(self, webhook_id: str, owner_id: str, now: str) -> WebhookRecord | None:
        """Switch the owner's webhook off."""
        return self._set(webhook_id, owner_id, active=False, disabledAt=now, updatedAt=now)

    def rotate_owned(self, webhook_id: str, owner_id: str, current: str, new: str, previous_expires_at: str,
                     now: str) -> WebhookRecord | None:
        """Replace the secret if it is still ``current``."""
        item = self._owned(webhook_id, owner_id)
        if item is None or item["secret"] != current:
            return None
        return self._set(webhook_id, owner_id, secret=new, previousSecret=current, previousSecretExpiresAt=previous_expires_at,
                         updatedAt=now)

    def start_recovery(self, webhook_id: str, recovery_id: str, at: str, queued: int) -> None:
        """Record a new recovery, none of its attempts counted yet."""
        webhook = self.items[webhook_id]
        self.items[webhook_id] = cast(WebhookRecord, {**webhook, "recoveryId": recovery_id, "recoveryAt": at, "recoveryQueued": queued,
                                                      "recoverySent": 0, "recoveryNotSent": 0})

    def count_recovery(self, webhook_id: str, recovery_id: str, sent: bool, amount: int = 1) -> bool:
        """Add ``amount`` to the recovery's sent or not-sent count if it is the webhook's latest."""
        stored = cast(dict[str, object], self.items.get(webhook_id) or {})
        if stored.get("recoveryId") != recovery_id:
            return False
        attribute = "recoverySent" if sent else "recoveryNotSent"
        stored[attribute] = cast(int, stored[attribute]) + amount
        return True


def attempt(event_id: str, attempted_at: str, success: bool, attempt_number: int = 1, webhook_id: str = "whk_a",
            next_attempt_at: str | None = None) -> AttemptRecord:
    """A logged attempt of ``event_id`` (type ``message.new``) to ``webhook_id``."""
    return {"deliveryId": f"{event_id}.{attempt_number}", "eventId": event_id, "event": "message.new", "attempt": attempt_number,
            "attemptedAt": attempted_at, "messageId": f"msg_{event_id}", "success": success, "durationMs": 12, "test": False,
            "nextAttemptAt": next_attempt_at, "webhookId": webhook_id,
            "deliveryKey": f"LOG#{attempted_at}#{event_id}#{attempt_number}", "expiresAt": 0}


class FakeAttemptLog:
    """Logged attempts in a list; every read is the log's order (newest first) over what is logged."""

    def __init__(self, *attempts: AttemptRecord) -> None:
        self.attempts = list(attempts)

    def _of(self, webhook_id: str) -> list[AttemptRecord]:
        return sorted((a for a in self.attempts if a["webhookId"] == webhook_id), key=lambda a: a["deliveryKey"], reverse=True)

    def attempts_page(self, webhook_id: str, moment: datetime, size: int, after: str | None = None, skip: int = 0) -> AttemptPage:
        """The page after the log key ``after``, ``skip`` passed over."""
        rest = [a for a in self._of(webhook_id) if after is None or a["deliveryKey"] < after][skip:]
        return AttemptPage(attempts=rest[:size], more=len(rest) > size)

    def count_attempts(self, webhook_id: str, moment: datetime) -> int:
        """Every logged attempt of the webhook."""
        return len(self._of(webhook_id))

    def newest_attempts(self, webhook_id: str, limit: int) -> list[AttemptRecord]:
        """The ``limit`` newest."""
        return self._of(webhook_id)[:limit]

    def get_logged(self, webhook_id: str, delivery_key: str) -> AttemptRecord | None:
        """The attempt at ``delivery_key``, or ``None``."""
        return next((a for a in self._of(webhook_id) if a["deliveryKey"] == delivery_key), None)

    def filtered_attempts(self, webhook_id: str, moment: datetime, limit: int, success: bool | None = None,
                          event: str | None = None, event_id: str | None = None, since: str | None = None) -> AttemptPage:
        """The ``limit`` newest with that outcome, type, event and at or after ``since``."""
        found = [a for a in self._of(webhook_id) if success in (None, a["success"]) and event in (None, a["event"])
                 and event_id in (None, a["eventId"]) and (since is None or a["attemptedAt"] >= since)]
        return AttemptPage(attempts=found[:limit], more=len(found) > limit)

    def failed_since(self, webhook_id: str, since: str, limit: int) -> FailedDeliveries:
        """The events whose newest attempt at or after ``since`` failed, oldest first."""
        newest: dict[str, AttemptRecord] = {}
        for entry in self._of(webhook_id):
            if entry["attemptedAt"] >= since:
                newest.setdefault(entry["eventId"], entry)
        failed = [e for e, a in reversed(newest.items()) if not a["success"]]
        return FailedDeliveries(event_ids=failed[:limit], complete=len(failed) <= limit)

    def hourly_outcomes(self, webhook_id: str, first_hour: datetime, last_hour: datetime) -> dict[str, tuple[int, int]]:
        """``(succeeded, failed)`` by hour ``YYYY-MM-DDTHH`` between the two hours."""
        counts: dict[str, tuple[int, int]] = {}
        for entry in self._of(webhook_id):
            hour = entry["attemptedAt"][:13]
            if f"{first_hour:%Y-%m-%dT%H}" <= hour <= f"{last_hour:%Y-%m-%dT%H}":
                ok, failed = counts.get(hour, (0, 0))
                counts[hour] = (ok + 1, failed) if entry["success"] else (ok, failed + 1)
        return counts


class FakeRedelivery:
    """Queues nothing: keeps the deliveries it was asked to queue in :attr:`queued`; :attr:`refuse`
    makes the next ``redeliver_many`` fail with that exception after ``before_enqueue``."""

    def __init__(self, log: FakeAttemptLog) -> None:
        self.queued: list[Delivery] = []
        self.refuse: Exception | None = None
        self._log = log

    def _next(self, webhook_id: str, event_id: str, owner_id: str, lane: int | None, recovery_id: str | None = None,
              slow: bool = False) -> Delivery:
        made = [a for a in self._log.attempts if a["webhookId"] == webhook_id and a["eventId"] == event_id]
        if not made:
            raise UnknownDelivery(event_id)
        event = Event(event_id=event_id, type=made[0]["event"], created_at=made[0]["attemptedAt"], data={}, routing={})
        return Delivery(event=event, webhook_id=webhook_id, attempt=max(a["attempt"] for a in made) + 1, owner_id=owner_id, lane=lane,
                        slow=slow, recovery_id=recovery_id)

    def redeliver(self, webhook_id: str, event_id: str, owner_id: str, lane: int | None = None, slow: bool = False) -> Delivery:
        """The next attempt of the delivery, queued. Raises ``UnknownDelivery`` when none was logged."""
        delivery = self._next(webhook_id, event_id, owner_id, lane, slow=slow)
        self.queued.append(delivery)
        return delivery

    def redeliver_many(self, webhook_id: str, event_ids: list[str], owner_id: str, lane: int | None = None,
                       recovery_id: str | None = None,
                       before_enqueue: Callable[[list[Delivery]], None] | None = None, slow: bool = False) -> list[Delivery]:
        """The next attempt of each event's delivery, shown to ``before_enqueue``, then queued."""
        planned = [self._next(webhook_id, e, owner_id, lane, recovery_id, slow) for e in event_ids]
        if before_enqueue is not None:
            before_enqueue(planned)
        if self.refuse is not None:
            raise self.refuse
        self.queued.extend(planned)
        return planned


class FakeCommits:
    """A commit port that keeps each transaction's items (no conditions: the items are other tables')."""

    def __init__(self) -> None:
        self.ops: list[TransactItem] = []

    def __call__(self, tx: Transaction) -> None:
        self.ops.extend(op for _, op in tx.items())
