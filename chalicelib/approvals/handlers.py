"""Outbox stream consumer that turns ``listing.submitted`` events into approval tasks."""

from __future__ import annotations

from typing import Any

from chalicelib.approvals import service
from chalicelib.persistence import outbox
from chalicelib.persistence.outbox import OutboxEvent
from chalicelib.persistence.streams import process_outbox_batch


def _handle(item: OutboxEvent) -> None:
    if item["type"] == outbox.LISTING_SUBMITTED:
        service.enqueue_submitted(item["data"], item["createdAt"])


def handle_outbox_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry (via ``app.py``): queue a review for every submitted listing in the batch."""
    return process_outbox_batch(event, _handle)
