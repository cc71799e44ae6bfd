"""Outbox stream consumer: ``listing.activated`` events -> the percolator (via ``app.py``)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from chalicelib import outbox
from chalicelib.outbox import OutboxEvent
from chalicelib.saved_searches import percolator
from chalicelib.streams import process_outbox_batch

logger = Logger(service="matching-service", child=True)


def _handle(item: OutboxEvent) -> None:
    if item["type"] != outbox.LISTING_ACTIVATED:
        return
    data = item["data"]
    version = int(data["version"]) if data.get("version") is not None else None
    report = percolator.percolate(str(data["listingId"]), version, str(item["createdAt"]))
    if report.matches:
        extra = {"listingId": data["listingId"], "matches": report.matches, "recorded": report.recorded}
        logger.info("saved searches matched", extra=extra)


def handle_outbox_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry: percolate every listing activated in the batch.

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: records whose percolation raised are retried by the
        event source mapping; the others are done (their matches are recorded idempotently).
    """
    return process_outbox_batch(event, _handle)
