"""Outbox stream consumer of listing deletions (via ``app.py``): each
:data:`~chalicelib.persistence.outbox.LISTING_DELETED` event rejects the requests its deleting
transaction left PENDING (:func:`chalicelib.workflows.listing_deletion.reject_remaining`)."""

from __future__ import annotations

from typing import Any

from chalicelib.persistence import outbox
from chalicelib.persistence.outbox import OutboxEvent
from chalicelib.persistence.streams import process_outbox_batch
from chalicelib.workflows import listing_deletion


def _handle(item: OutboxEvent) -> None:
    if item["type"] == outbox.LISTING_DELETED:
        listing_deletion.reject_remaining(item["data"])


def handle_outbox_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry (outbox stream): reject the remaining requests of every
    :data:`~chalicelib.persistence.outbox.LISTING_DELETED` event of the batch.

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: an event whose rejections raised is retried by the event
        source mapping (:func:`~chalicelib.workflows.listing_deletion.reject_remaining` is idempotent).
    """
    return process_outbox_batch(event, _handle)
