"""One delivery attempt and the failure policy (spec §3 "Webhook", §6 "Delivery policy", §8).

An attempt: skip when the webhook is inactive; postpone when the webhook already failed in
this batch; claim the attempt (no duplicates); sign and send
(:mod:`chalicelib.webhooks.sender`); then

* 2xx: ``failCount`` back to 0;
* anything else (non-2xx including 3xx, timeout, connection, TLS or DNS error, blocked address):
  ``failCount`` + 1 (atomic ``ADD``); at :data:`FAILURE_LIMIT` the webhook becomes inactive
  (conditional ``SET``) and nothing more is sent to it; otherwise the next attempt is queued
  with the configured backoff (:mod:`chalicelib.webhooks.retries`);
* the attempt is logged (:mod:`chalicelib.webhooks.deliveries`).
"""

from __future__ import annotations

import threading
from enum import StrEnum
from typing import Any

from chalicelib import clock
from chalicelib.config import settings
from chalicelib.webhooks import deliveries, repository, retries, sender, signing
from chalicelib.webhooks.events import Delivery, envelope_body

#: Consecutive failures after which a webhook is switched off (spec §8).
FAILURE_LIMIT = 5


class Result(StrEnum):
    """What :func:`attempt` did."""

    SENT = "sent"
    FAILED = "failed"
    DUPLICATE = "duplicate"
    SKIPPED = "skipped"
    POSTPONED = "postponed"


class Target:
    """A webhook as the deliveries of one batch see it; every write's result updates it.

    Parameters
    ----------
    item:
        The webhook item (``webhookId``, ``url``, ``secret``, ``active``).
    """

    def __init__(self, item: dict[str, Any]) -> None:
        self.webhook_id = str(item["webhookId"])
        self.url = str(item["url"])
        self.secret = str(item["secret"])
        self.previous_secret: str | None = item.get("previousSecret")
        self.previous_secret_expires_at: str | None = item.get("previousSecretExpiresAt")
        self._active = bool(item.get("active"))
        self._failed_in_batch = False
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """False once the webhook was seen inactive or deleted."""
        with self._lock:
            return self._active

    def observe(self, item: dict[str, Any] | None) -> None:
        """Take ``active`` from an UpdateItem result; ``None`` means deleted or inactive."""
        with self._lock:
            if item is None:
                self._active = False
                return
            self._active = self._active and bool(item.get("active"))

    def switch_off(self) -> None:
        """Remember that the webhook is inactive now."""
        with self._lock:
            self._active = False

    @property
    def failed_in_batch(self) -> bool:
        """True once an attempt to this webhook failed in the current batch."""
        with self._lock:
            return self._failed_in_batch

    def mark_failed(self) -> None:
        """Remember a failed attempt in this batch (the breaker: later ones are postponed)."""
        with self._lock:
            self._failed_in_batch = True


def attempt(delivery: Delivery, target: Target) -> Result:
    """Make attempt ``delivery.attempt`` of ``delivery`` to ``target`` and apply the policy.

    Once an attempt to a webhook failed in a batch, its later deliveries in the batch are not
    tried one after another (each could cost a whole deadline): they are ``POSTPONED``, queued
    unclaimed and unattempted with the first retry delay, and do not count as failures.

    Returns
    -------
    Result
        ``SKIPPED`` (inactive), ``POSTPONED``, ``DUPLICATE`` (claimed before: replayed batch or
        message), ``SENT`` (2xx) or ``FAILED``.

    Raises
    ------
    botocore.exceptions.ClientError
        DynamoDB or SQS failures (the caller reports the record as failed).
    """
    config = settings()
    if not target.active:
        return Result.SKIPPED
    postpone_for = retries.next_delay(1)
    if target.failed_in_batch and postpone_for is not None:
        retries.schedule(delivery, postpone_for)
        return Result.POSTPONED
    if not deliveries.claim(target.webhook_id, delivery.event.event_id, delivery.attempt):
        return Result.DUPLICATE
    body = envelope_body(delivery.event)
    attempted_at = clock.now()
    previous = signing.previous_if_valid(target.previous_secret, target.previous_secret_expires_at, attempted_at)
    headers = signing.delivery_headers(
        target.secret, delivery.event, target.webhook_id, body, clock.epoch_seconds(attempted_at), previous_secret=previous
    )
    outcome = sender.post(
        target.url, body, headers, timeout=config.WEBHOOK_TIMEOUT_SECONDS, allow_insecure=config.ALLOW_INSECURE_WEBHOOKS
    )
    try:
        if outcome.ok:
            _record_success(target)
        else:
            target.mark_failed()
            _record_failure(delivery, target)
    finally:
        entry = _log_entry(delivery, target, outcome, clock.iso(attempted_at))
        entry["requestBody"] = body.decode("utf-8")  # shown on demand in the Dashboard's delivery log
        deliveries.log_attempt(target.webhook_id, entry)
    return Result.SENT if outcome.ok else Result.FAILED


def _record_success(target: Target) -> None:
    # Always asked of DynamoDB: the batch's copy of failCount may predate a concurrent failure
    # (the fan-out reads an eventually consistent index).
    repository.reset_failures(target.webhook_id)


def _record_failure(delivery: Delivery, target: Target) -> None:
    updated = repository.add_failure(target.webhook_id)
    target.observe(updated)
    if updated is None:  # deleted or already inactive: no more attempts
        return
    if int(updated.get("failCount") or 0) >= FAILURE_LIMIT:
        repository.deactivate(target.webhook_id, FAILURE_LIMIT, clock.iso())
        target.switch_off()
        return
    delay = retries.next_delay(delivery.attempt)
    if delay is not None:
        retries.schedule(Delivery(delivery.event, target.webhook_id, delivery.attempt + 1), delay)


def _log_entry(delivery: Delivery, target: Target, outcome: sender.Outcome, attempted_at: str) -> dict[str, Any]:
    return {
        "deliveryId": clock.new_id("dlv"),
        "eventId": delivery.event.event_id,
        "event": delivery.event.type,
        "attempt": delivery.attempt,
        "attemptedAt": attempted_at,
        "messageId": signing.message_id(delivery.event.event_id, target.webhook_id),
        "success": outcome.ok,
        "statusCode": outcome.status_code,
        "error": outcome.error,
        "errorDetail": outcome.detail,
        "durationMs": outcome.duration_ms,
        "responseBody": outcome.response_body,
    }
