"""The Listings-table stream consumer that keeps the listing posting lists (issue 13).

Each stream record carries the listing's old and new image (``NEW_AND_OLD_IMAGES``); the
consumer files the listing under the posting keys of its new image
(:func:`chalicelib.listings.search.postings.posting_keys`: none unless ACTIVE, none once
deleted) through :func:`chalicelib.search.postings.apply`, versioned by the listing's ``version``
(a deletion counts as one more version). So a replayed or out-of-order record changes nothing,
and a record that changed neither status nor content (e.g. a request counter) writes nothing
but its state check. Postings therefore lag the listing by the stream's delay; searches re-read
their page from the Listings table (docs/search.md, "Consistency").

The consumer also keeps the typo dictionary (:mod:`chalicelib.typo_dictionary`): when a record
makes a listing ACTIVE or changes an ACTIVE listing's words, their words join the category's
vocabulary with their stems, before the postings move (so a retried record redoes both; adding is idempotent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib import clock, metrics, streams, typo_dictionary
from chalicelib.listings import status
from chalicelib.listings.search.postings import NAMESPACE, posting_keys
from chalicelib.listings.search.query import language_of
from chalicelib.search import postings
from chalicelib.text_analysis.analyzer import stems


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


def apply_change(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Bring a listing's postings to the state of one stream record.

    Parameters
    ----------
    old, new:
        The record's images as plain dicts (``None`` when absent: INSERT has no old image,
        REMOVE no new one).

    Returns
    -------
    bool
        True when the postings moved to this record's version; False for a replayed or
        out-of-order record (or one without images).

    Raises
    ------
    chalicelib.storage.Contention
        DynamoDB kept cancelling the change (the batch reports the record as failed and the
        stream retries it).
    """
    if new is not None:
        if words := _new_words(old, new):
            typo_dictionary.add(NAMESPACE, str(new["categoryKey"]), words)
        return postings.apply(NAMESPACE, str(new["listingId"]), int(new.get("version") or 0), posting_keys(new))
    if old is not None:  # deleted: one version past the last one
        return postings.apply(NAMESPACE, str(old["listingId"]), int(old.get("version") or 0) + 1, set())
    return False


def handle_stream_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Apply every record of a Listings-stream batch; returns ``{"batchItemFailures": [...]}``.

    Records ``IndexerLag`` (``stream=listings``): the age of the batch's oldest record, i.e. how
    far search is behind the Listings table.
    """
    lag = streams.oldest_record_age_seconds(event, clock.now().timestamp())
    if lag is not None:
        metrics.record_indexer_lag("listings", lag)
    return streams.process_change_batch(event, apply_change)
