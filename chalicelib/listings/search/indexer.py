"""The Listings-table stream consumer that keeps the listing index of search.

Each stream record carries the listing's old and new image (``NEW_AND_OLD_IMAGES``); a batch
(up to 500 records) becomes one :func:`chalicelib.search.index.apply`: the new image's document
at its ``version`` (none unless ACTIVE; a deletion is ``version + 1`` with none). Changes of one
listing coalesce to the newest; a replayed or out-of-order record writes nothing (the stored
document's version decides). Postings lag the listing by the stream's delay; searches load
their page from the Listings table and leave out what is no longer ACTIVE.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.listings.search import spec
from chalicelib.search import consumer, index


def change_of(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> index.Change | None:
    """The index change of one stream record: the new image's document at its version, or no
    document at the version after the old image's for a deletion (``None`` without images)."""
    if new is not None:
        return index.Change(str(new["listingId"]), int(new.get("version") or 0), spec.document(new))
    if old is not None:  # deleted: one version past the last one
        return index.Change(str(old["listingId"]), int(old.get("version") or 0) + 1, None)
    return None


def apply_changes(images: consumer.Images) -> int:
    """Bring the index entries of every listing of ``images`` (``(old, new)`` stream images in
    stream order) to its newest record, in one batch (:func:`chalicelib.search.consumer.apply_images`);
    returns the listings moved."""
    return consumer.apply_images(spec.spec(), spec.store(), change_of, images)


def apply_change(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Bring one listing's entries to one stream record (the backfill's call); False when the
    record was replayed or out of order."""
    return apply_changes([(old, new)]) > 0


def handle_stream_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Apply a Listings-stream batch at once (:func:`chalicelib.search.consumer.handle_batch`,
    ``IndexerLag`` with ``stream=listings``); returns ``{"batchItemFailures": [...]}``."""
    return consumer.handle_batch(event, "listings", spec.spec(), spec.store(), change_of)
