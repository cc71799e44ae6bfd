"""One delivery attempt and the failure policy (spec §3 "Webhook", §6 "Delivery policy", §8).

Attempts to one webhook never overlap: they run one at a time in the webhook's lane
(:mod:`chalicelib.webhooks.delivery.lanes`), so every attempt sees the outcome of the one before
and the policy is exact. An attempt:

1. reads the webhook (strongly consistent); when it is deleted, inactive or no longer
   subscribed to the event (test events aside) the attempt is ``DRAINED``: nothing is sent or
   logged, and the lane moves on;
2. claims the attempt (:mod:`chalicelib.webhooks.delivery.attempt_log`): a replayed or
   duplicated message finds it claimed and sends nothing (``DUPLICATE``);
3. signs and sends (:mod:`chalicelib.webhooks.delivery.sender`), then

   * 2xx: ``failCount`` back to 0;
   * anything else (non-2xx including 3xx, timeout, connection, TLS or DNS error, blocked
     address): ``failCount`` + 1 (atomic ``ADD``); at :data:`FAILURE_LIMIT` the webhook becomes
     inactive (conditional ``SET``) and its lane drains; otherwise the next attempt is held on
     the retry queue for its backoff (:mod:`chalicelib.webhooks.delivery.retries`);
4. logs the attempt, whatever its outcome: in the attempt log (with the ``requestId`` of the API
   request that wrote the event) and as one JSON log line ``"webhook attempt"`` carrying the same
   id as its ``correlation_id`` (:mod:`chalicelib.correlation`), plus one ``Deliveries`` metric
   by outcome (and ``WebhooksDisabled`` when the policy switched the webhook off).

So a receiver failing every time gets exactly :data:`FAILURE_LIMIT` requests and ``failCount``
equals the consecutive failures recorded.
"""

from __future__ import annotations

from enum import StrEnum

from aws_lambda_powertools import Logger

from chalicelib import clock, metrics
from chalicelib.config import settings
from chalicelib.webhooks import repository, signing
from chalicelib.webhooks.delivery import attempt_log, recipients, retries, sender
from chalicelib.webhooks.delivery.envelope import Delivery, envelope_body
from chalicelib.webhooks.delivery.records import AttemptEntry

#: Consecutive failures after which a webhook is switched off (spec §8).
FAILURE_LIMIT = 5

logger = Logger(service="matching-service", child=True)


class Result(StrEnum):
    """What :func:`attempt` did."""

    SENT = "sent"
    FAILED = "failed"
    DUPLICATE = "duplicate"
    DRAINED = "drained"


def attempt(delivery: Delivery) -> Result:
    """Make attempt ``delivery.attempt`` of ``delivery`` and apply the failure policy.

    Must run in the webhook's lane (never beside another attempt to the same webhook).

    Returns
    -------
    Result
        ``DRAINED`` (webhook deleted or inactive: nothing sent), ``DUPLICATE`` (claimed
        before), ``SENT`` (2xx) or ``FAILED``.

    Raises
    ------
    botocore.exceptions.ClientError, chalicelib.errors.DependencyUnavailableError
        DynamoDB or SQS failures (the caller reports the message as failed; it comes back
        after its visibility timeout and finds its claim if it got that far).
    """
    config = settings()
    webhook = repository.get(delivery.webhook_id, consistent=True)
    if webhook is None or not webhook.get("active"):
        return Result.DRAINED
    if not delivery.event.test and not recipients.subscribed(webhook, delivery.event.type):
        return Result.DRAINED  # unsubscribed since the event was routed
    if not attempt_log.claim(delivery):
        return Result.DUPLICATE
    body = envelope_body(delivery.event)
    attempted_at = clock.now()
    previous = signing.previous_if_valid(webhook.get("previousSecret"), webhook.get("previousSecretExpiresAt"), attempted_at)
    headers = signing.delivery_headers(
        str(webhook["secret"]), delivery.event, delivery.webhook_id, body, clock.epoch_seconds(attempted_at),
        previous_secret=previous,
    )
    outcome = sender.post(
        str(webhook["url"]), body, headers, timeout=config.WEBHOOK_TIMEOUT_SECONDS, allow_insecure=config.ALLOW_INSECURE_WEBHOOKS
    )
    try:
        if outcome.ok:
            repository.reset_failures(delivery.webhook_id)
        else:
            _record_failure(delivery)
    finally:
        entry = _log_entry(delivery, outcome, clock.iso(attempted_at))
        entry["requestBody"] = body.decode("utf-8")  # shown on demand in the Dashboard's delivery log
        attempt_log.log_attempt(delivery.webhook_id, entry)
        logger.info("webhook attempt", extra={
            "correlation_id": delivery.event.request_id, "requestId": delivery.event.request_id,
            "webhookId": delivery.webhook_id, "eventId": delivery.event.event_id, "event": delivery.event.type,
            "attempt": delivery.attempt, "deliveryId": entry["deliveryId"], "success": outcome.ok,
            "statusCode": outcome.status_code, "error": outcome.error, "durationMs": outcome.duration_ms,
        })
    return Result.SENT if outcome.ok else Result.FAILED


def _record_failure(delivery: Delivery) -> None:
    updated = repository.add_failure(delivery.webhook_id)
    if updated is None:  # deleted or switched off meanwhile: no more attempts
        return
    if int(updated.get("failCount") or 0) >= FAILURE_LIMIT:
        if repository.deactivate(delivery.webhook_id, FAILURE_LIMIT, clock.iso()):
            metrics.record_webhook_disabled()
        return
    delay = retries.next_delay(delivery.attempt)
    if delay is not None:
        retries.schedule(Delivery(delivery.event, delivery.webhook_id, delivery.attempt + 1), delay)


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
