"""The Listings-table stream consumer that keeps the listing index of search.

Each stream record carries the listing's old and new image (``NEW_AND_OLD_IMAGES``); a batch
(up to 100 records) becomes one :func:`chalicelib.search.index.apply`: the new image's document
at its ``version`` (none unless ACTIVE; a deletion is ``version + 1`` with none). Changes of one
listing coalesce to the newest; a replayed or out-of-order record writes nothing (the stored
document's version decides). Postings lag the listing by the stream's delay; searches load
their page from the Listings table and leave out what is no longer ACTIVE.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import clock, errors, metrics, streams
from chalicelib.listings.search import spec
from chalicelib.search import index

logger = Logger(service="matching-service", child=True)


def change_of(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> index.Change | None:
    """The index change of one stream record: the new image's document at its version, or no
    document at the version after the old image's for a deletion (``None`` without images)."""
    if new is not None:
        return index.Change(str(new["listingId"]), int(new.get("version") or 0), spec.document(new))
    if old is not None:  # deleted: one version past the last one
        return index.Change(str(old["listingId"]), int(old.get("version") or 0) + 1, None)
    return None


def apply_changes(images: Iterable[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]) -> int:
    """Bring the index entries of every listing of ``images`` (``(old, new)`` stream images in
    stream order) to its newest record, in one batch; returns the listings moved.

    Raises
    ------
    botocore.exceptions.ClientError, chalicelib.errors.DependencyUnavailable
        The writes failed (the stream retries the batch; applying is idempotent).
    """
    changes = [c for old, new in images if (c := change_of(old, new)) is not None]
    return index.apply(spec.spec(), spec.store(), changes)


def apply_change(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Bring one listing's entries to one stream record (the backfill's call); False when the
    record was replayed or out of order."""
    return apply_changes([(old, new)]) > 0


def handle_stream_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Apply a Listings-stream batch at once; returns ``{"batchItemFailures": [...]}``.

    A record whose document cannot be computed is reported alone (the others are applied); a
    batch whose writes fail reports every record, and the event source mapping retries it.
    Records ``IndexerLag`` (``stream=listings``): the age of the batch's oldest record.
    """
    lag = streams.oldest_record_age_seconds(event, clock.now().timestamp())
    if lag is not None:
        metrics.record_indexer_lag("listings", lag)
    records = streams.change_records(event)
    failed: list[str] = []
    changes: list[index.Change] = []
    for sequence, old, new in records:
        try:
            change = change_of(old, new)
        except (KeyError, TypeError, ValueError, ArithmeticError):  # a record that cannot be read fails alone
            logger.exception("listing stream record not indexable", extra={"sequence": sequence})
            failed.append(sequence)
            continue
        if change is not None:
            changes.append(change)
    try:
        index.apply(spec.spec(), spec.store(), changes)
    except (errors.DependencyUnavailable, ClientError, BotoCoreError):
        logger.exception("listing index batch not applied; the stream retries it")
        return streams.batch_failures(sequence for sequence, _, _ in records)
    return streams.batch_failures(failed)
