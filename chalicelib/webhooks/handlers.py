"""Lambda entries (via ``app.py``): the outbox stream consumer and the retry queue consumer.

Both fan a whole batch out first, run all its deliveries concurrently
(:mod:`chalicelib.webhooks.dispatcher`), then report through powertools' ``BatchProcessor``
(https://docs.powertools.aws.dev/lambda/python/latest/utilities/batch/) the records whose
processing hit an infrastructure fault, as ``{"batchItemFailures": [...]}``; the event
source mapping retries only those (``FunctionResponseTypes: [ReportBatchItemFailures]``).
A record is never failed because a receiver failed: that is the failure policy's business.
Replays send nothing twice: every attempt is claimed first (:mod:`chalicelib.webhooks.deliveries`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from chalicelib.streams import outbox_event
from chalicelib.webhooks import dispatcher, fanout, repository, retries
from chalicelib.webhooks.delivery import Target
from chalicelib.webhooks.dispatcher import Job
from chalicelib.webhooks.events import SUPPORTED_EVENTS, Delivery, Event

logger = Logger(service="matching-service", child=True)


class RecordFailed(Exception):
    """Raised for a record whose processing hit a fault, so that the batch processor reports it."""


def _events(event: dict[str, Any]) -> list[Event]:
    found = []
    for raw in event.get("Records") or []:
        item = outbox_event(DynamoDBRecord(raw))
        if item is not None and item.get("type") in SUPPORTED_EVENTS:
            found.append(Event.from_outbox(item))
    return found


def time_left_of(context: Any) -> Callable[[], float] | None:
    """Seconds left in the invocation, from a Lambda context (``None`` without one)."""
    if context is None or not hasattr(context, "get_remaining_time_in_millis"):
        return None
    return lambda: float(context.get_remaining_time_in_millis()) / 1000.0


def handle_outbox_batch(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Deliver every webhook event of a stream batch to its webhooks (first attempts).

    Parameters
    ----------
    event:
        The Lambda DynamoDB Streams event (``Records`` of the Events table).
    context:
        The Lambda context; attempts that would outlive the invocation are deferred.

    Returns
    -------
    dict
        ``{"batchItemFailures": [{"itemIdentifier": <sequence number>}, ...]}``.
    """
    directory = fanout.WebhookDirectory()
    targets: dict[str, Target] = {}
    jobs: list[Job] = []
    failed: set[str] = set()
    events = _events(event)
    bound = [i for e in events if e.type.startswith("match_request.") for i in e.routing.get("webhookIds") or []]
    try:
        directory.by_ids(bound)  # one BatchGetItem for the whole batch
    except Exception:  # each event reads again below and fails on its own
        logger.exception("prefetching bound webhooks failed")
    for item in events:
        try:
            webhooks = fanout.recipients(item, directory)
        except Exception:  # the record is reported and retried
            logger.exception("webhook fan-out failed", extra={"eventId": item.event_id})
            failed.add(item.event_id)
            continue
        for webhook in webhooks:
            target = targets.setdefault(webhook["webhookId"], Target(webhook))
            jobs.append(Job(Delivery(item, target.webhook_id), target, source=item.event_id))
    report = dispatcher.run(jobs, time_left_of(context))
    failed |= report.failed_sources
    if jobs:
        logger.info("webhook deliveries", extra={"results": dict(report.results), "events": len(events)})

    def record_handler(record: DynamoDBRecord) -> None:
        item = outbox_event(record)
        if item is not None and item.get("eventId") in failed:
            raise RecordFailed(f"webhook delivery of {item.get('eventId')} hit a fault")

    return _report(event, EventType.DynamoDBStreams, record_handler)


def _report(event: dict[str, Any], kind: EventType, record_handler: Callable[[Any], None]) -> dict[str, Any]:
    """``{"batchItemFailures": [...]}`` for the records ``record_handler`` raises on, also when all do
    (powertools would raise instead; the event source retries the same records either way)."""
    if not event.get("Records"):
        return {"batchItemFailures": []}
    processor = BatchProcessor(event_type=kind, raise_on_entire_batch_failure=False)
    return dict(process_partial_response(event=event, record_handler=record_handler, processor=processor))


def handle_retry_batch(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Run the retries of a ``DeliveryRetryQueue`` batch; inactive or deleted webhooks get nothing.

    Parameters
    ----------
    event:
        The Lambda SQS event.
    context:
        The Lambda context; attempts that would outlive the invocation are deferred.

    Returns
    -------
    dict
        ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``.
    """
    failed: set[str] = set()
    parsed: dict[str, Delivery] = {}
    for record in event.get("Records") or []:
        try:
            parsed[record["messageId"]] = retries.from_message(record["body"])
        except (KeyError, TypeError, ValueError):
            logger.exception("malformed retry message", extra={"messageId": record.get("messageId")})
            failed.add(str(record.get("messageId")))
    jobs: list[Job] = []
    try:
        webhooks = repository.get_many(sorted({d.webhook_id for d in parsed.values()})) if parsed else {}
    except Exception:  # every message is reported and comes back after its visibility timeout
        logger.exception("reading webhooks for retries failed")
        failed.update(parsed)
        parsed = {}
        webhooks = {}
    targets = {webhook_id: Target(item) for webhook_id, item in webhooks.items()}
    for message_id, item in parsed.items():
        webhook = webhooks.get(item.webhook_id)
        if webhook is None or not fanout.subscribed(webhook, item.event.type):
            continue  # deleted, inactive or unsubscribed: retries stop
        jobs.append(Job(item, targets[item.webhook_id], source=message_id))
    report = dispatcher.run(jobs, time_left_of(context))
    failed |= report.failed_sources
    if parsed:
        logger.info("webhook retries", extra={"results": dict(report.results), "messages": len(parsed)})

    def record_handler(record: SQSRecord) -> None:
        if record.message_id in failed:
            raise RecordFailed(f"retry message {record.message_id} hit a fault")

    return _report(event, EventType.SQS, record_handler)
