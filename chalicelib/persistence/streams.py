"""Reading DynamoDB stream records (outbox events, changes of ordinary tables), with partial-batch failure reporting.

Consumers process one record at a time through powertools' ``BatchProcessor``, which returns
``{"batchItemFailures": [...]}`` so that Lambda retries only the failed records
(event source mapping with ``FunctionResponseTypes: [ReportBatchItemFailures]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from chalicelib.persistence import outbox, storage
from chalicelib.persistence.outbox import OutboxEvent


def outbox_event(record: DynamoDBRecord) -> OutboxEvent | None:
    """The outbox event a stream record inserted, or ``None`` for MODIFY/REMOVE (TTL expiry) records."""
    item = storage.inserted_item(record.raw_event)
    return None if item is None else outbox.record(item)


def process_outbox_batch(event: dict[str, Any], handle: Callable[[OutboxEvent], None]) -> dict[str, Any]:
    """Call ``handle(outbox_item)`` for every INSERT record of a stream batch.

    Returns
    -------
    dict
        ``{"batchItemFailures": [{"itemIdentifier": <sequence number>}, ...]}``.
    """

    def record_handler(record: DynamoDBRecord) -> None:
        item = outbox_event(record)
        if item is not None:
            handle(item)

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    return dict(process_partial_response(event=event, record_handler=record_handler, processor=processor))


def oldest_record_age_seconds(event: dict[str, Any], now_epoch_seconds: float) -> float | None:
    """Age in seconds of the oldest record of a stream batch, or ``None`` for an empty batch.

    Parameters
    ----------
    event:
        The Lambda DynamoDB Streams event.
    now_epoch_seconds:
        The current time, Unix seconds.

    Returns
    -------
    float or None
        ``now - min(ApproximateCreationDateTime)`` (DynamoDB Streams gives that time in Unix
        seconds, to the second), never negative.
    """
    created = [
        float(stamp) for r in event.get("Records") or []
        if (stamp := (r.get("dynamodb") or {}).get("ApproximateCreationDateTime")) is not None
    ]
    return max(0.0, now_epoch_seconds - min(created)) if created else None


def change_records(event: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    """``(sequence number, old image, new image)`` of every record of a table's stream batch, in order.

    For consumers that apply a whole batch at once (:func:`chalicelib.search.index.apply`).
    Images as plain dicts (numbers as int/float, :func:`chalicelib.persistence.storage.from_item`); ``None``
    where the record has no such image: INSERT has no old image, REMOVE no new one, whether the
    record leaves the image out (as DynamoDB Streams does) or carries an empty one (as moto 5.1
    does). An empty map is never an item's image: every item holds its key attributes.
    """
    records = []
    for raw in event.get("Records") or []:
        change = raw.get("dynamodb") or {}
        records.append((str(change.get("SequenceNumber")), _image(change.get("OldImage")), _image(change.get("NewImage"))))
    return records


def _image(image: dict[str, Any] | None) -> dict[str, Any] | None:
    """A record's image as plain values; ``None`` for a missing or empty one (:func:`change_records`)."""
    return storage.from_item(image) if image else None


def batch_failures(sequence_numbers: Iterable[str]) -> dict[str, Any]:
    """The partial-batch response naming ``sequence_numbers`` as failed (Lambda retries from the lowest)."""
    return {"batchItemFailures": [{"itemIdentifier": s} for s in sequence_numbers]}
