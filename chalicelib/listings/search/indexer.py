"""The Listings-table stream consumer that keeps the listing posting lists.

Each stream record carries the listing's old and new image (``NEW_AND_OLD_IMAGES``); the
consumer files the listing under the posting keys of its new image
(:func:`chalicelib.listings.search.postings.posting_keys`: none unless ACTIVE, none once
deleted), versioned by the listing's ``version`` (a deletion counts as one more version). A
whole batch (up to 100 records) is applied at once by :func:`chalicelib.search.batch_writer.apply_batch`:
several records of one listing coalesce to its newest, states are read in BatchGetItem calls,
states and list sizes move in a few TransactWriteItems, entries in BatchWriteItem calls. So a
replayed or out-of-order record changes nothing, and a record that changed neither status nor
content (e.g. a request counter) writes nothing but its state read. Postings lag the listing by
the stream's delay (bounded in docs/search.md, "Freshness"); searches re-read their page from
the Listings table (docs/search.md, "Consistency").

The consumer also keeps the typo dictionary (:mod:`chalicelib.typo_dictionary`): when a record
makes a listing ACTIVE or changes an ACTIVE listing's words, their words join the category's
vocabulary with their stems, before the postings move (so a retried record redoes both; adding is idempotent).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import clock, errors, metrics, storage, streams, typo_dictionary
from chalicelib.listings import status
from chalicelib.listings.search.postings import NAMESPACE, posting_keys
from chalicelib.listings.search.query import language_of
from chalicelib.search import batch_writer
from chalicelib.search.batch_writer import Change
from chalicelib.text_analysis.analyzer import stems

logger = Logger(service="matching-service", child=True)


def _new_words(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """The entries to add to the vocabulary for this record: an ACTIVE image's words and their stems
    when it became ACTIVE or its words changed (empty otherwise: nothing new to learn)."""
    if not status.is_public(str(new.get("status") or "")):
        return []
    text = str(new.get("searchText") or "")
    if old is not None and status.is_public(str(old.get("status") or "")) and old.get("searchText") == text:
        return []
    words = text.split()
    return sorted({*words, *stems(words, language_of(str(new["categoryKey"])))})  # corrections go to words and stems


def change_of(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> Change | None:
    """The posting change of one stream record: the new image's keys at its version, or no keys
    at the version after the old image's for a deletion (``None`` for a record without images)."""
    if new is not None:
        return Change(NAMESPACE, str(new["listingId"]), int(new.get("version") or 0), frozenset(posting_keys(new)))
    if old is not None:  # deleted: one version past the last one
        return Change(NAMESPACE, str(old["listingId"]), int(old.get("version") or 0) + 1, frozenset())
    return None


def apply_changes(images: Iterable[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]) -> batch_writer.BatchReport:
    """Bring the postings of every listing of ``images`` to its newest record, in one batch.

    Parameters
    ----------
    images:
        ``(old, new)`` images of stream records as plain dicts, in stream order (``None`` when
        absent: INSERT has no old image, REMOVE no new one).

    Returns
    -------
    chalicelib.search.batch_writer.BatchReport
        Listings moved, listings already at their version (replayed or out-of-order records),
        calls made.

    Raises
    ------
    chalicelib.storage.Contention
        DynamoDB kept cancelling the batch's transactions (the stream retries the batch).
    chalicelib.errors.DependencyUnavailable
        Batch reads or writes stayed throttled.
    """
    changes: list[Change] = []
    vocabulary: dict[str, set[str]] = defaultdict(set)
    for old, new in images:
        _collect(old, new, changes, vocabulary)
    return _apply(changes, vocabulary)


def _collect(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None,
             changes: list[Change], vocabulary: dict[str, set[str]]) -> None:
    """Add one record's posting change and new vocabulary words to the batch's."""
    change = change_of(old, new)
    if new is not None:
        vocabulary[str(new["categoryKey"])].update(_new_words(old, new))
    if change is not None:
        changes.append(change)


def _apply(changes: list[Change], vocabulary: Mapping[str, set[str]]) -> batch_writer.BatchReport:
    # Words first, as one record at a time did: a retried batch redoes both (adding is idempotent);
    # one typo-dictionary update per category of the batch.
    for category_key, words in vocabulary.items():
        if words:
            typo_dictionary.add(NAMESPACE, category_key, sorted(words))
    return batch_writer.apply_batch(changes)


def apply_change(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Bring one listing's postings to the state of one stream record (the backfill's call).

    Returns True when the postings moved to this record's version; False for a replayed or
    out-of-order record (or one without images). Raises as :func:`apply_changes`.
    """
    return apply_changes([(old, new)]).applied > 0


def handle_stream_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Apply a Listings-stream batch at once; returns ``{"batchItemFailures": [...]}``.

    A record whose keys cannot be computed is reported alone (the others are applied); a batch
    whose writes fail reports every record, and the event source mapping retries it (applying is
    idempotent by version). Records ``IndexerLag`` (``stream=listings``): the age of the batch's
    oldest record, i.e. how far search is behind the Listings table.
    """
    lag = streams.oldest_record_age_seconds(event, clock.now().timestamp())
    if lag is not None:
        metrics.record_indexer_lag("listings", lag)
    records = streams.change_records(event)
    failed: list[str] = []
    changes: list[Change] = []
    vocabulary: dict[str, set[str]] = defaultdict(set)
    for sequence, old, new in records:
        try:
            _collect(old, new, changes, vocabulary)
        except (KeyError, TypeError, ValueError, ArithmeticError):  # a record that cannot be read fails alone
            logger.exception("listing stream record not indexable", extra={"sequence": sequence})
            failed.append(sequence)
    try:
        _apply(changes, vocabulary)
    except (storage.Contention, errors.DependencyUnavailable, ClientError, BotoCoreError):
        logger.exception("listing postings batch not applied; the stream retries it")
        return streams.batch_failures(sequence for sequence, _, _ in records)
    return streams.batch_failures(failed)
