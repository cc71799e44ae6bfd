"""Lambda entries (via ``app.py``) of the delivery pipeline.

* :func:`handle_outbox_batch` (outbox stream): resolves each event's webhooks and puts one
  message per (event, webhook) into the webhook's lane (its owner's, or a slow lane while its
  circuit breaker is open: :mod:`chalicelib.webhooks.delivery.lanes`), the batch's owners
  taking turns (:func:`chalicelib.webhooks.delivery.lanes.owners_in_turn`: an owner fanning an
  event out to many webhooks does not queue ahead of the other owners' deliveries); it sends
  nothing, so it never waits for a receiver.
* :func:`handle_lane_batch` (``DeliveryQueue`` and ``SlowDeliveryQueue``, FIFO, each with its
  own consumer: the slow lanes' bounded by their few message groups): makes the attempts, one at
  a time per lane (a slow-lane message carrying several webhooks' deliveries of one event,
  :func:`chalicelib.webhooks.delivery.lanes.message_plan`, one after another); the mapping's
  batch size is 1, so an invocation never holds one lane's message while
  another lane's receiver hangs. While an attempt runs, a heartbeat keeps its message invisible
  and its claim leased for ``DELIVERY_LEASE_SECONDS`` at a time, so a worker that dies hands the
  delivery on within that time (:mod:`chalicelib.webhooks.delivery.heartbeat`).
* :func:`handle_retry_batch` (``DeliveryRetryQueue``): puts retries whose backoff is over
  back into their lanes (a retry after a timeout into a slow lane on ``SlowDeliveryQueue``, never
  the owner's).

Each returns ``{"batchItemFailures": [...]}`` (event source mappings with
``FunctionResponseTypes: [ReportBatchItemFailures]``): only records whose processing hit an
infrastructure fault of ours are reported, never a receiver's failure (that is the failure
policy's business). Order is kept across faults: a stream batch reports its first failed
record (Lambda resumes there), and a lane batch reports a failed message with every later
message of the same lane (SQS FIFO would otherwise let them overtake it).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from aws_lambda_powertools import Logger

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.telemetry import correlation, metrics, tracing
from chalicelib.webhooks.catalogue import SUPPORTED_EVENTS
from chalicelib.webhooks.delivery import heartbeat, lanes, recipients
from chalicelib.webhooks.delivery.envelope import Delivery, Event

logger = Logger(service="matching-service", child=True)


def _inserted_event(record: dict[str, Any]) -> Event | None:
    """The deliverable outbox event a stream record inserted, or ``None`` (MODIFY/REMOVE, other types)."""
    item = storage.inserted_item(record)
    if item is None or item.get("type") not in SUPPORTED_EVENTS:
        return None
    return Event.from_outbox(item)


def message_age_seconds(record: dict[str, Any], now_ms: int) -> float | None:
    """Seconds an SQS record waited since it was sent (``attributes.SentTimestamp``, epoch ms), or ``None``."""
    sent = (record.get("attributes") or {}).get("SentTimestamp")
    try:
        return max(0.0, (now_ms - int(sent)) / 1000) if sent is not None else None
    except (TypeError, ValueError):
        return None


def _record_lane_age(queue: str, records: list[dict[str, Any]]) -> None:
    """``LaneAge`` of the oldest message of a batch (its wait before this invocation)."""
    now_ms = int(clock.now().timestamp() * 1000)
    ages = [a for r in records if (a := message_age_seconds(r, now_ms)) is not None]
    if ages:
        metrics.record_lane_age(queue, max(ages))


def _failures(identifiers: list[str]) -> dict[str, Any]:
    return {"batchItemFailures": [{"itemIdentifier": i} for i in identifiers]}


def handle_outbox_batch(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Put every webhook event of a stream batch into the lanes of its webhooks.

    The batch's webhooks are read first, all at once (one BatchGetItem for the webhooks events
    name, one Query per recipient, several in flight:
    :meth:`chalicelib.webhooks.delivery.recipients.WebhookDirectory.by_owners`); the deliveries
    are then queued with the batch's owners taking turns
    (:func:`chalicelib.webhooks.delivery.lanes.owners_in_turn`), each owner's in record order, a
    queue's calls sent side by side (:func:`chalicelib.webhooks.delivery.lanes.send_plan`). So a
    batch takes about its longest chain of calls, not their sum, and the next batch, which waits
    for it, is not held up by a large fan-out's calls one after another.

    Parameters
    ----------
    event:
        The Lambda DynamoDB Streams event (``Records`` of the Events table).
    context:
        The Lambda context (unused).

    Returns
    -------
    dict
        ``{"batchItemFailures": [{"itemIdentifier": <sequence number>}]}``: empty, or the first
        record that could not be routed or had a delivery that was not queued (Lambda retries
        from it; what is queued again is deduplicated).
    """
    records = event.get("Records") or []
    found = [(r, e) for r in records if (e := _inserted_event(r)) is not None]
    directory = _prefetched([e for _, e in found])
    queued, sources, first_failed = _fan_out(found, directory)
    first_failed = _enqueue(queued, sources) or first_failed
    if queued:
        logger.info("webhook deliveries queued", extra={"deliveries": len(queued), "events": len(found)})
    return _failures([first_failed] if first_failed is not None else [])


def _prefetched(events: list[Event]) -> recipients.WebhookDirectory:
    """A directory holding the webhooks of every event of a batch, read at once (on a failure each
    event reads its own again and fails on its own)."""
    directory = recipients.WebhookDirectory()
    bound = [i for e in events if e.type.startswith("match_request.") for i in e.routing.get("webhookIds") or []]
    bound += [e.target_webhook_id for e in events if e.target_webhook_id]
    owners = [o for e in events if (o := recipients.owner_read(e)) is not None]
    try:
        directory.by_ids(bound)  # one BatchGetItem for the whole batch
        directory.by_owners(owners)  # the recipients' Queries at once, not one round trip after another
    except Exception:
        logger.exception("prefetching webhooks failed")
    return directory


def _fan_out(found: list[tuple[dict[str, Any], Event]], directory: recipients.WebhookDirectory
             ) -> tuple[list[Delivery], list[str], str | None]:
    """The deliveries of the batch's events in record order, the sequence number of each one's
    record, and that of the first record whose recipients could not be read (the fan-out stops
    there: Lambda retries from it)."""
    queued: list[Delivery] = []
    sources: list[str] = []
    for record, item in found:
        sequence = str(record["dynamodb"]["SequenceNumber"])
        try:
            webhooks = recipients.recipients(item, directory)
        except Exception:  # the record is reported and retried
            logger.exception("webhook fan-out failed", extra={"eventId": item.event_id})
            return queued, sources, sequence
        for webhook in webhooks:
            queued.append(Delivery(item, str(webhook["webhookId"]), owner_id=str(webhook["ownerId"]),
                                   lane=webhook.get("lane"), slow=bool(webhook.get("breakerOpenedAt"))))
            sources.append(sequence)
    return queued, sources, None


def _enqueue(queued: list[Delivery], sources: list[str]) -> str | None:
    """Queue ``queued`` with the batch's owners taking turns; returns the sequence number of the
    earliest record with a delivery not queued (``sources``: each delivery's), or ``None``."""
    order = lanes.owners_in_turn(queued)  # one owner's fan-out does not hold up the others' deliveries
    try:
        lanes.enqueue([queued[i] for i in order])
    except lanes.EnqueueFailed as exc:
        logger.error("queuing deliveries failed", extra={"failed": len(exc.failed)})
        return sources[min(order[i] for i in exc.failed)]
    except Exception:
        logger.exception("queuing deliveries failed")
        return sources[0] if sources else None
    return None


def handle_lane_batch(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Make the attempts of a ``DeliveryQueue`` or ``SlowDeliveryQueue`` batch, in order within each lane.

    Parameters
    ----------
    event:
        The Lambda SQS event (FIFO: records carry ``attributes.MessageGroupId``; their
        ``eventSourceARN`` names the queue whose messages the heartbeat holds).
    context:
        The Lambda context (unused).

    Returns
    -------
    dict
        ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``: messages whose attempt
        hit a fault of ours, and every later message of their lanes.
    """
    # Imported here: the HTTP client (httpcore) is needed by this function only, not at the API's cold start.
    from chalicelib.webhooks.delivery import attempt

    failed: list[str] = []
    stopped: set[str] = set()  # lanes with a failed message: later ones must not overtake it
    lease = settings().DELIVERY_LEASE_SECONDS
    results: Counter[str] = Counter()
    records = event.get("Records") or []
    for queue in {lane_queue(r) for r in records}:
        _record_lane_age("slow-delivery" if queue == settings().DELIVERY_SLOW_QUEUE_URL else "delivery",
                         [r for r in records if lane_queue(r) == queue])
    for record in records:
        message_id = str(record.get("messageId"))
        queue_url = lane_queue(record)
        lane = str((record.get("attributes") or {}).get("MessageGroupId") or "")
        if lane in stopped:
            failed.append(message_id)
            continue
        try:
            deliveries = lanes.from_messages(record["body"])
        except (KeyError, TypeError, ValueError):
            logger.exception("malformed lane message", extra={"messageId": message_id})
            failed.append(message_id)  # after maxReceiveCount it rests in the dead-letter queue
            stopped.add(lane)
            continue
        # A slow-lane message may carry several webhooks' deliveries of one event: their attempts run
        # one after another, as consecutive messages of the lane would. After a fault or a held
        # attempt the whole message comes back; the attempts made find their claims and send nothing.
        for delivery in deliveries:
            request_id = delivery.event.request_id
            try:
                # The first beat (on entry) shortens the message's hold from the queue's timeout to the lease.
                hold = heartbeat.message_visibility(queue_url, str(record.get("receiptHandle")), lease)
                with (
                    heartbeat.for_lease(lease, hold) as beat,
                    correlation.bound(request_id),
                    tracing.segment("delivery attempt", request_id),
                ):
                    outcome = attempt.attempt(delivery, heartbeat=beat).value
            except attempt.Held as held:
                # Another live worker holds this attempt: give the message back until its lease ends.
                logger.warning("delivery attempt held by another worker", extra={"webhookId": delivery.webhook_id})
                _give_back(queue_url, record, held.seconds)
                outcome = "held"
            except Exception:
                logger.exception("webhook delivery failed", extra={
                    "webhookId": delivery.webhook_id, "eventId": delivery.event.event_id, "requestId": request_id})
                _give_back(queue_url, record, fault_backoff_seconds(record))
                outcome = "error"
            results[outcome] += 1
            metrics.record_delivery(outcome)
            if outcome in ("held", "error"):
                failed.append(message_id)
                stopped.add(lane)
                break
    if results:
        logger.info("webhook attempts", extra={"results": dict(results)})
    return _failures(failed)


def lane_queue(record: dict[str, Any]) -> str:
    """The URL of the lane queue a record came from: ``DELIVERY_SLOW_QUEUE_URL`` when its
    ``eventSourceARN`` is the slow lanes' queue, else ``DELIVERY_QUEUE_URL``."""
    config = settings()
    if record.get("eventSourceARN") == config.DELIVERY_SLOW_QUEUE_ARN:
        return config.DELIVERY_SLOW_QUEUE_URL
    return config.DELIVERY_QUEUE_URL


#: Back-off of a lane message whose attempt hit a fault of ours, per receive so far (seconds):
#: 60, 120, 180, 240 s, about 10 minutes before the 5th receive sends it to the dead-letter queue.
#: Without it the message would return when its heartbeat's 20 s hold ends, and a short DynamoDB
#: outage would dead-letter deliveries within two minutes.
FAULT_BACKOFF_SECONDS = 60


def fault_backoff_seconds(record: dict[str, Any]) -> int:
    """How long a lane message that hit a fault stays invisible: :data:`FAULT_BACKOFF_SECONDS` x its receives."""
    try:
        receives = int((record.get("attributes") or {}).get("ApproximateReceiveCount") or 1)
    except (TypeError, ValueError):
        receives = 1
    return FAULT_BACKOFF_SECONDS * max(1, receives)


def _give_back(queue_url: str, record: dict[str, Any], seconds: float) -> None:
    """Make a message reported failed visible again after ``seconds`` (at least 1 s from now; SQS: at most 12 h)."""
    try:
        storage.client("sqs").change_message_visibility(
            QueueUrl=queue_url, ReceiptHandle=str(record.get("receiptHandle")), VisibilityTimeout=max(1, math.ceil(seconds))
        )
    except Exception:  # it then returns when the hold its heartbeat set last ends
        logger.warning("giving a lane message back failed", exc_info=True)


def handle_retry_batch(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Put the retries of a ``DeliveryRetryQueue`` batch (backoff over) back into their lanes.

    Parameters
    ----------
    event:
        The Lambda SQS event.
    context:
        The Lambda context (unused).

    Returns
    -------
    dict
        ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``.
    """
    parsed: list[tuple[str, Delivery]] = []
    failed: list[str] = []
    for record in event.get("Records") or []:
        message_id = str(record.get("messageId"))
        try:
            parsed.append((message_id, lanes.from_message(record["body"])))
        except (KeyError, TypeError, ValueError):
            logger.exception("malformed retry message", extra={"messageId": message_id})
            failed.append(message_id)
    try:
        lanes.enqueue([delivery for _, delivery in parsed])
    except lanes.EnqueueFailed as exc:
        failed += [parsed[i][0] for i in exc.failed]
    except Exception:
        logger.exception("re-queuing retries failed")
        failed += [message_id for message_id, _ in parsed]
    return _failures(failed)
