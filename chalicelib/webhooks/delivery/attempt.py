"""One delivery attempt and the failure policy (spec §3 "Webhook", §6 "Delivery policy", §8).

Attempts to one webhook never overlap: they run one at a time in the webhook's lane
(:mod:`chalicelib.webhooks.delivery.lanes`), so every attempt sees the outcome of the one before
and the policy is exact. An attempt:

1. reads the webhook (strongly consistent); when it is deleted, inactive or no longer
   subscribed to the event (test events aside) the attempt is ``DRAINED``: nothing is sent or
   logged in the attempt log, and the lane moves on (an attempt queued by "Recover failed
   deliveries" is counted on its recovery as not sent, with a ``"webhook recovery attempt not
   sent"`` log line);
   when its circuit breaker does not match the lane (an owner lane while it is open, a slow lane
   while it is closed: :mod:`chalicelib.webhooks.delivery.lanes`) the attempt is ``MOVED`` to
   the lane that matches, unsent;
2. claims the attempt (:mod:`chalicelib.webhooks.delivery.attempt_log`) with a short lease that
   the worker's heartbeat (:mod:`chalicelib.webhooks.delivery.heartbeat`) extends: a replayed or
   duplicated message finds it claimed and sends nothing (``DUPLICATE``); a message whose
   worker died (lease lapsed, attempt not logged) logs that attempt as ``interrupted`` and makes
   the next attempt at once; a message whose attempt another live worker holds raises
   :class:`Held` (its worker gives the message back until the lease ends);
3. signs and sends (:mod:`chalicelib.webhooks.delivery.sender`), then

   * 2xx: ``failCount`` back to 0;
   * anything else (non-2xx including 3xx, timeout, connection, TLS or DNS error, blocked
     address): ``failCount`` + 1 (atomic ``ADD``; a timeout also opens the circuit breaker in
     the same update, and a 2xx closes it; a timeout in an owner lane opens, without a failure,
     the breakers of the owner's webhooks in that lane on the same host as well:
     :func:`chalicelib.webhooks.delivery.lanes.lane_siblings`); at :data:`FAILURE_LIMIT` the webhook becomes
     inactive (conditional ``SET``, in one transaction with the ``webhook.disabled`` event that
     announces it: :mod:`chalicelib.webhooks.operational`) and its lane drains; otherwise the next
     attempt is held on the retry queue for its backoff
     (:mod:`chalicelib.webhooks.delivery.retries`), except after an attempt of a recovery, which
     re-sends each delivery once (it never sends more than it said it queued);
4. logs the attempt, whatever its outcome: in the attempt log (with the ``requestId`` of the API
   request that wrote the event) and as one JSON log line ``"webhook attempt"`` carrying the same
   id as its ``correlation_id`` (:mod:`chalicelib.telemetry.correlation`), plus one ``Deliveries`` metric
   by outcome (and ``WebhooksDisabled`` when the policy switched the webhook off).

So a receiver failing every time gets exactly :data:`FAILURE_LIMIT` requests and ``failCount``
equals the consecutive failures recorded.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from enum import StrEnum

from aws_lambda_powertools import Logger

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.telemetry import metrics
from chalicelib.webhooks import operational, repository, signing
from chalicelib.webhooks.delivery import attempt_log, lanes, recipients, retries, sender
from chalicelib.webhooks.delivery.envelope import Delivery, envelope_body
from chalicelib.webhooks.delivery.heartbeat import Heartbeat
from chalicelib.webhooks.delivery.records import AttemptEntry
from chalicelib.webhooks.records import WebhookRecord

#: Consecutive failures after which a webhook is switched off (spec §8).
FAILURE_LIMIT = 5

logger = Logger(service="matching-service", child=True)


class Held(Exception):
    """Another live worker holds this attempt (its lease runs ``seconds`` more): send nothing now.

    Only a message received again while its first worker still runs gets here (that worker's
    heartbeat failed to keep the message invisible): the lease, not SQS visibility alone, keeps
    one webhook to one worker at a time.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"attempt held by another worker for {seconds:.1f} s more")
        self.seconds = seconds


class Result(StrEnum):
    """What :func:`attempt` did."""

    SENT = "sent"
    FAILED = "failed"
    DUPLICATE = "duplicate"
    DRAINED = "drained"
    MOVED = "moved"


def attempt(delivery: Delivery, heartbeat: Heartbeat | None = None) -> Result:
    """Make attempt ``delivery.attempt`` of ``delivery`` and apply the failure policy.

    Must run in the webhook's lane (never beside another attempt to the same webhook).

    Parameters
    ----------
    delivery:
        The delivery and the attempt number its lane message carries.
    heartbeat:
        The running heartbeat of the lane message (:func:`chalicelib.webhooks.delivery.heartbeat.for_lease`):
        once the attempt is claimed, it extends the claim's lease too. ``None`` (tests, scripts):
        the lease is not extended (``DELIVERY_LEASE_SECONDS`` must then outlast the attempt).

    Returns
    -------
    Result
        ``DRAINED`` (webhook deleted or inactive: nothing sent), ``MOVED`` (queued again in the
        lane its circuit breaker calls for: nothing sent), ``DUPLICATE`` (claimed before),
        ``SENT`` (2xx) or ``FAILED`` (of this attempt, or of the next one when this one was
        interrupted).

    Raises
    ------
    Held
        Another live worker holds the attempt.
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        DynamoDB or SQS failures (the caller reports the message as failed; it comes back
        after its visibility timeout and finds its claim if it got that far).
    """
    config = settings()
    webhook = repository.get(delivery.webhook_id, consistent=True)
    if webhook is None or not webhook.get("active"):
        return _drained(delivery, "inactive" if webhook is not None else "deleted")
    if not delivery.event.test and not recipients.subscribed(webhook, delivery.event.type):
        return _drained(delivery, "unsubscribed")  # unsubscribed since the event was routed
    breaker_open = bool(webhook.get("breakerOpenedAt"))
    if breaker_open != delivery.slow:  # queued before the breaker opened (or closed): send from the matching lane only
        moved = replace(delivery, owner_id=str(webhook["ownerId"]), lane=webhook.get("lane"), slow=breaker_open, hops=delivery.hops + 1)
        lanes.enqueue([moved])
        return Result.MOVED
    lease = config.DELIVERY_LEASE_SECONDS
    if not attempt_log.claim(delivery, lease):
        recovery = attempt_log.recover(delivery, lease)
        if recovery.held_seconds > 0:
            raise Held(recovery.held_seconds)
        if recovery.resumed is None:
            if delivery.recovery_id:  # that attempt number was made by another message: not by this recovery
                _drained(delivery, "duplicate")
            return Result.DUPLICATE
        delivery = recovery.resumed  # the interrupted attempt is logged; this is the next one, claimed
    if heartbeat is not None:
        claimed = delivery
        heartbeat.add(lambda: attempt_log.extend_lease(claimed, lease), first=True)
    body = envelope_body(delivery.event)
    attempted_at = clock.now()
    previous = signing.previous_if_valid(webhook.get("previousSecret"), webhook.get("previousSecretExpiresAt"), attempted_at)
    headers = signing.delivery_headers(
        str(webhook["secret"]), delivery.event.event_id, delivery.event.type, delivery.webhook_id, body, clock.epoch_seconds(attempted_at),
        previous_secret=previous,
    )
    outcome = sender.post(
        str(webhook["url"]), body, headers, timeout=config.WEBHOOK_TIMEOUT_SECONDS, allow_insecure=config.ALLOW_INSECURE_WEBHOOKS
    )
    next_attempt_at: str | None = None
    if delivery.recovery_id:  # sent, whatever the outcome: the recovery's report counts it
        repository.count_recovery(delivery.webhook_id, delivery.recovery_id, sent=True)
    try:
        if outcome.ok:
            repository.reset_failures(delivery.webhook_id)
        else:
            next_attempt_at = _record_failure(delivery, outcome)
    finally:
        entry = _log_entry(delivery, outcome, clock.iso(attempted_at))
        entry["nextAttemptAt"] = next_attempt_at
        entry["requestBody"] = body.decode("utf-8")  # shown on demand in the Dashboard's delivery log
        entry["requestHeaders"] = dict(headers)
        attempt_log.log_attempt(delivery.webhook_id, entry)
        logger.info("webhook attempt", extra={
            "correlation_id": delivery.event.request_id, "requestId": delivery.event.request_id,
            "webhookId": delivery.webhook_id, "eventId": delivery.event.event_id, "event": delivery.event.type,
            "attempt": delivery.attempt, "deliveryId": entry["deliveryId"], "success": outcome.ok,
            "statusCode": outcome.status_code, "error": outcome.error, "durationMs": outcome.duration_ms,
        })
    return Result.SENT if outcome.ok else Result.FAILED


def _drained(delivery: Delivery, why: str) -> Result:
    """Nothing sent: an attempt of a recovery is counted on it as not sent and logged as such."""
    if delivery.recovery_id:
        repository.count_recovery(delivery.webhook_id, delivery.recovery_id, sent=False)
        logger.info("webhook recovery attempt not sent", extra={
            "webhookId": delivery.webhook_id, "eventId": delivery.event.event_id, "attempt": delivery.attempt,
            "recoveryId": delivery.recovery_id, "reason": why,
        })
    return Result.DRAINED


def failure_text(outcome: sender.Outcome) -> str:
    """One line naming a failed attempt's outcome: ``HTTP 500`` or ``timeout: <detail>``."""
    if outcome.status_code is not None:
        return f"HTTP {outcome.status_code}"
    return f"{outcome.error}: {outcome.detail}" if outcome.detail else str(outcome.error)


def _record_failure(delivery: Delivery, outcome: sender.Outcome) -> str | None:
    """Count the failure; schedule the retry, if any. Returns when it is due (ISO 8601 UTC) or ``None``.

    The failure that reaches :data:`FAILURE_LIMIT` switches the webhook off and stores why, when
    and this attempt's outcome on it (the Dashboard shows them).
    """
    timed_out = outcome.error == sender.TIMEOUT  # it held a worker for the whole deadline: open the breaker
    updated = repository.add_failure(delivery.webhook_id, clock.iso() if timed_out else None)
    if updated is None:  # deleted or switched off meanwhile: no more attempts
        return None
    if timed_out and not delivery.slow and delivery.owner_id:
        _open_lane_siblings(delivery, updated)
    fail_count = int(updated.get("failCount") or 0)
    if fail_count >= FAILURE_LIMIT:
        now, last_failure = clock.iso(), failure_text(outcome)
        event = operational.disabled_event_op(
            updated, repository.disabled_by_failures(FAILURE_LIMIT), fail_count, last_failure, now
        )
        if repository.deactivate(delivery.webhook_id, FAILURE_LIMIT, now, last_failure, event=event):
            metrics.record_webhook_disabled()
        return None
    delay = None if delivery.recovery_id else retries.next_delay(delivery.attempt)  # a recovery re-sends once
    if delay is None:
        return None
    # Read before sending: SQS counts the delay from its receipt of the message, so the retry
    # becomes visible no earlier than this time (the delivery log's promise to the owner).
    due = clock.iso(clock.now() + timedelta(seconds=delay))
    # With the breaker open the retry goes to a slow lane, never back to the owner's; the webhook's
    # owner and lane number name that lane (a message of an earlier version carries neither).
    retry = replace(delivery, attempt=delivery.attempt + 1, slow=bool(updated.get("breakerOpenedAt")),
                    owner_id=str(updated.get("ownerId") or delivery.owner_id), lane=updated.get("lane", delivery.lane))
    retries.schedule(retry, delay)
    return due


def _open_lane_siblings(delivery: Delivery, updated: WebhookRecord) -> None:
    """Open the breakers of the webhooks that share this attempt's owner lane and host
    (:func:`chalicelib.webhooks.delivery.lanes.lane_siblings`; one Query of the owner's webhooks and
    one conditional update each): their deliveries queued behind it in the lane move to the slow
    lanes unsent instead of each waiting out its own first timeout, and their next events are
    routed there. No failure is counted for them; their first success closes each breaker again.
    A fault here is logged and skipped (the attempt's own outcome, log and retry stand)."""
    held = lanes.group_id(delivery)
    try:
        siblings = lanes.lane_siblings(updated, held, repository.list_by_owner(delivery.owner_id))
        opened_at = clock.iso()
        opened = [w for w in siblings if repository.open_breaker(w, opened_at)]
    except Exception:  # best effort: each sibling's own first timeout opens its breaker all the same
        logger.exception("opening the lane siblings' breakers failed", extra={"webhookId": delivery.webhook_id})
        return
    if opened:
        logger.info("webhook breakers opened with a timed-out lane sibling", extra={
            "webhookId": delivery.webhook_id, "lane": held, "opened": len(opened)})


def _log_entry(delivery: Delivery, outcome: sender.Outcome, attempted_at: str) -> AttemptEntry:
    entry: AttemptEntry = {
        "deliveryId": clock.new_id("dlv"),
        "eventId": delivery.event.event_id,
        "event": delivery.event.type,
        "attempt": delivery.attempt,
        "attemptedAt": attempted_at,
        "messageId": signing.message_id(delivery.event.event_id, delivery.webhook_id),
        "success": outcome.ok,
        "statusCode": outcome.status_code,
        "error": outcome.error,
        "errorDetail": outcome.detail,
        "durationMs": outcome.duration_ms,
        "responseBody": outcome.response_body,
        "test": delivery.event.test,
    }
    if delivery.event.request_id:
        entry["requestId"] = delivery.event.request_id
    return entry
