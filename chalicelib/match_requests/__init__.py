"""Requests: match requests (about listings) and profile requests (about profiles), one collection.

A request has ``subjectType`` LISTING or PROFILE, goes PENDING -> ACCEPTED | REJECTED by its
recipient's decision, and an acceptance opens a conversation (:mod:`chalicelib.conversations`).

The package owns the Requests table. Other packages reach its data only through the functions
below (or :mod:`chalicelib.match_requests.service`), never through its repository or the
table's name (``docs/architecture.md``, "Table ownership"). Each function imports the
repository when first called, so importing this package loads no storage code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chalicelib.match_requests.records import RequestRecord
    from chalicelib.match_requests.repository import Bundle
    from chalicelib.persistence.transact_items import TransactItem


def read_bundle(
    request_ids: Sequence[str] = (), user_ids: Sequence[str] = (), listing_ids: Sequence[str] = (),
    block_pairs: Sequence[tuple[str, str]] = (),
) -> Bundle:
    """Requests, users, listings and blocks between pairs in one BatchGetItem
    (:func:`chalicelib.match_requests.repository.read_bundle`)."""
    from chalicelib.match_requests import repository

    return repository.read_bundle(request_ids, user_ids, listing_ids, block_pairs)


def list_for_subject(subject_id: str) -> list[RequestRecord]:
    """Every request about ``subject_id`` (a listing or a user), newest first (the listing deletion's read)."""
    from chalicelib.match_requests import repository

    return repository.list_for_subject(subject_id)


def pending_sent(requester_id: str) -> list[RequestRecord]:
    """Every PENDING request ``requester_id`` sent (the block workflow's read;
    :func:`chalicelib.match_requests.repository.pending_sent`)."""
    from chalicelib.match_requests import repository

    return repository.pending_sent(requester_id)


def decide_op(
    request: RequestRecord,
    status: str,
    responded_at: str,
    *,
    reason: str | None = None,
    conversation_id: str | None = None,
    listing_title: str | None = None,
) -> TransactItem:
    """Transaction ``Update``: PENDING -> ``status`` by the request's recipient
    (:func:`chalicelib.match_requests.repository.decide_op`)."""
    from chalicelib.match_requests import repository

    return repository.decide_op(
        request, status, responded_at, reason=reason, conversation_id=conversation_id, listing_title=listing_title
    )


def counter_ops(changes: Sequence[tuple[RequestRecord, str | None, str]]) -> list[TransactItem]:
    """Transaction items of the request list counters for ``(request, from, to)`` status changes."""
    from chalicelib.match_requests import repository

    return repository.counter_ops(changes)


def every_sent(user_id: str) -> list[RequestRecord]:
    """Every request ``user_id`` sent, any status, newest first (the account erasure's read)."""
    from chalicelib.match_requests import repository
    from chalicelib.match_requests.lists import RequestList

    return repository.every_of(user_id, RequestList.SENT)


def every_received(user_id: str) -> list[RequestRecord]:
    """Every request ``user_id`` received, any status, newest first (the account erasure's read)."""
    from chalicelib.match_requests import repository
    from chalicelib.match_requests.lists import RequestList

    return repository.every_of(user_id, RequestList.RECEIVED)


def withdraw_ops(requests: Sequence[RequestRecord]) -> list[TransactItem]:
    """Transaction items withdrawing PENDING ``requests`` of one requester: each deleted (conditional
    on PENDING) and taken out of its list counters
    (:func:`chalicelib.match_requests.repository.withdraw_op`)."""
    from chalicelib.match_requests import repository

    return [*(repository.withdraw_op(r) for r in requests), *repository.removal_counter_ops(requests)]


def anonymize_requester_op(request: RequestRecord) -> TransactItem:
    """Transaction ``Update``: the requester snapshot of ``request`` becomes "Deleted user"
    (:func:`chalicelib.match_requests.repository.anonymize_requester_op`)."""
    from chalicelib.match_requests import repository

    return repository.anonymize_requester_op(request)


def forget_counter_ops(user_id: str) -> list[TransactItem]:
    """Transaction ``Delete`` items of ``user_id``'s request list counters."""
    from chalicelib.match_requests import repository

    return repository.forget_counter_ops(user_id)
