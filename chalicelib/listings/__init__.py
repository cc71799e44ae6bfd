"""Listings: create, read, update, pause/resume; meta validated against the category; listing search.

Deleting a listing also rejects its requests, so it is a workflow (:mod:`chalicelib.workflows`).

The package owns the Listings table. Other packages reach its data only through the functions
below (or :mod:`chalicelib.listings.service`), never through its repository or the table's name
(``docs/architecture.md``, "Table ownership"; the import contract ``listings-own-their-tables``).
Each function imports the repository when first called, so importing this package (as every
import of ``chalicelib.listings.records`` does) loads no storage code (``bench/cold_start.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chalicelib.listings.records import ListingRecord
    from chalicelib.listings.status import ListingStatus, Transition
    from chalicelib.persistence.batch_reads import Part
    from chalicelib.persistence.transact_items import TransactItem


def get(listing_id: str, consistent: bool = False) -> ListingRecord | None:
    """The listing record, or ``None`` (one GetItem; ``consistent``: strongly consistent)."""
    from chalicelib.listings import repository

    return repository.get(listing_id, consistent=consistent)


def get_many(listing_ids: Sequence[str]) -> dict[str, ListingRecord]:
    """Listing records by id (one BatchGetItem); missing ids are absent."""
    from chalicelib.listings import repository

    return repository.get_many(listing_ids)


def read_part(listing_ids: Sequence[str]) -> Part[ListingRecord]:
    """Listings by id as one part of a shared BatchGetItem (:mod:`chalicelib.persistence.batch_reads`)."""
    from chalicelib.listings import repository

    return repository.read_part(listing_ids)


def pending_page(size: int, after: str | None = None) -> tuple[list[ListingRecord], str | None]:
    """One page of the review queue, oldest submission first (:func:`chalicelib.listings.repository.pending_page`)."""
    from chalicelib.listings import repository

    return repository.pending_page(size, after=after)


def transition(
    listing: ListingRecord, change: Transition, updated_at: str, reason: str | None = None, version: int | None = None,
    extra: Sequence[TransactItem] = (),
) -> ListingRecord:
    """Apply the status ``change`` to ``listing`` (with ``extra`` items of other tables in the same
    transaction) and return it as written (:func:`chalicelib.listings.repository.transition`, which
    documents its errors)."""
    from chalicelib.listings import repository

    return repository.transition(listing, change, updated_at, reason=reason, version=version, extra=extra)


def count_request_op(listing_id: str) -> TransactItem:
    """Transaction ``Update``: ``requestCount + 1`` while the listing is ACTIVE (a match request's guard)."""
    from chalicelib.listings import repository

    return repository.count_request_op(listing_id)


def exists_op(listing_id: str) -> TransactItem:
    """Transaction ``ConditionCheck``: the listing still exists (a request decision's guard)."""
    from chalicelib.listings import repository

    return repository.exists_op(listing_id)


def delete_counted_op(
    listing_id: str, owner_id: str, request_count: int, status: str, version: int | None = None
) -> TransactItem:
    """Transaction ``Delete`` of the listing while it has exactly ``request_count`` requests
    (:func:`chalicelib.listings.repository.delete_counted_op`)."""
    from chalicelib.listings import repository

    return repository.delete_counted_op(listing_id, owner_id, request_count, status, version)


def leave_active_ops(listing: Mapping[str, Any], from_status: ListingStatus) -> list[TransactItem]:
    """The search counter items of a change out of ``from_status`` (none unless it was ACTIVE)."""
    from chalicelib.listings import repository

    return repository.leave_active_ops(listing, from_status)


def owner_count_op(owner_id: str, change: int) -> TransactItem:
    """Transaction ``Update`` moving the owner's listing counter by ``change`` (+1 create, -1 delete)."""
    from chalicelib.listings import repository

    return repository.owner_count_op(owner_id, change)


def forget_owner_counter_op(owner_id: str) -> TransactItem:
    """Transaction ``Delete`` of the owner's listing counter item (:func:`chalicelib.listings.repository.forget_owner_counter_op`)."""
    from chalicelib.listings import repository

    return repository.forget_owner_counter_op(owner_id)
