"""Outbox stream consumer of saved searches (via ``app.py``): ``listing.activated`` events -> the
percolator; ``saved_search.deleted`` events -> the match cleanup (:mod:`chalicelib.saved_searches.cleanup`)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from chalicelib.persistence import outbox
from chalicelib.persistence.outbox import OutboxEvent
from chalicelib.persistence.streams import process_outbox_batch
from chalicelib.saved_searches import cleanup, percolator

logger = Logger(service="matching-service", child=True)


def _handle(item: OutboxEvent) -> None:
    if item["type"] == outbox.SAVED_SEARCH_DELETED:
        _clean_up(item)
        return
    if item["type"] != outbox.LISTING_ACTIVATED:
        return
    data = item["data"]
    version = int(data["version"]) if data.get("version") is not None else None
    report = percolator.percolate(str(data["listingId"]), version, str(item["createdAt"]))
    if report.matches:
        extra = {"listingId": data["listingId"], "matches": report.matches, "recorded": report.recorded}
        logger.info("saved searches matched", extra=extra)


def _clean_up(item: OutboxEvent) -> None:
    data = item["data"]
    removed = cleanup.remove_matches(str(data["savedSearchId"]), str(data["ownerId"]))
    if removed:
        logger.info("matches of a deleted saved search removed", extra={"savedSearchId": data["savedSearchId"], "removed": removed})


def handle_outbox_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry: percolate every listing activated in the batch, and remove the stored
    matches of every saved search deleted in it (a bounded step each).

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: records whose percolation or cleanup raised are retried
        by the event source mapping; the others are done (matches are recorded and deleted
        idempotently).
    """
    return process_outbox_batch(event, _handle)
