"""Requests table access.

Item shape (both kinds)::

    {requestId, subjectType, subjectId, requesterId, recipientId, status,
     listingId?, listingTitle?,            # LISTING
     userId?,                              # PROFILE: the requested user
     profile: {displayName, verifiedLevel, country, socialLinks},   # requester, as sent
     channels, message, reason?, conversationId?, createdAt, respondedAt?}

Indexes: ``byRequester`` (requesterId, createdAt), ``byRecipient`` (recipientId, createdAt),
``bySubject`` (subjectId, createdAt). Ids come from :mod:`chalicelib.match_requests.ids`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.records import record as listing_record
from chalicelib.match_requests.records import RequestRecord, record
from chalicelib.users.records import UserRecord
from chalicelib.users.records import record as user_record


def _table() -> str:
    return settings().REQUESTS_TABLE


def _key(request_id: str) -> dict[str, str]:
    return {"requestId": request_id}


def get(request_id: str) -> RequestRecord | None:
    """The request item, or ``None``."""
    item = storage.get(_table(), _key(request_id))
    return record(item) if item is not None else None


def put_new_op(item: RequestRecord) -> dict[str, Any]:
    """Transaction ``Put`` of a new request; its condition fails when the id exists (a duplicate)."""
    return storage.put_op(_table(), item, condition="attribute_not_exists(requestId)")


def _list(index: str, attribute: str, value: str, filters: dict[str, str | None]) -> list[RequestRecord]:
    """Items of ``index`` whose ``attribute`` is ``value``, newest first, filtered by equality."""
    names: dict[str, str] = {}
    vals: dict[str, Any] = {"k": value}
    clauses = []
    for i, (name, wanted) in enumerate((n, w) for n, w in filters.items() if w is not None):
        names[f"#f{i}"] = name
        vals[f"f{i}"] = wanted
        clauses.append(f"#f{i} = :f{i}")
    params: dict[str, Any] = {
        "IndexName": index,
        "KeyConditionExpression": f"{attribute} = :k",
        "ExpressionAttributeValues": storage.values(**vals),
        "ScanIndexForward": False,
    }
    if clauses:
        params["FilterExpression"] = " AND ".join(clauses)
        params["ExpressionAttributeNames"] = names
    return [record(i) for i in storage.query(_table(), **params)]


def list_sent(requester_id: str, subject_type: str | None = None, status: str | None = None) -> list[RequestRecord]:
    """Requests sent by ``requester_id``, newest first (``byRequester``)."""
    return _list("byRequester", "requesterId", requester_id, {"subjectType": subject_type, "status": status})


def list_received(recipient_id: str, subject_type: str | None = None, status: str | None = None) -> list[RequestRecord]:
    """Requests addressed to ``recipient_id``, newest first (``byRecipient``)."""
    return _list("byRecipient", "recipientId", recipient_id, {"subjectType": subject_type, "status": status})


def list_for_subject(subject_id: str, status: str | None = None) -> list[RequestRecord]:
    """Requests about ``subject_id`` (a listing or a user), newest first (``bySubject``)."""
    return _list("bySubject", "subjectId", subject_id, {"status": status})


def decide_op(
    request_id: str,
    recipient_id: str,
    status: str,
    responded_at: str,
    *,
    reason: str | None = None,
    conversation_id: str | None = None,
    listing_title: str | None = None,
) -> dict[str, Any]:
    """Transaction ``Update``: PENDING -> ``status``, by ``recipient_id`` only.

    The condition (still PENDING and addressed to ``recipient_id``) makes a concurrent second
    decision fail instead of overwriting the first.
    """
    names = {"#st": "status"}
    assignments = ["#st = :st", "respondedAt = :r"]
    vals: dict[str, Any] = {"st": status, "r": responded_at, "pending": "PENDING", "me": recipient_id}
    for attribute, value in (("reason", reason), ("conversationId", conversation_id), ("listingTitle", listing_title)):
        if value is not None:
            names[f"#{attribute}"] = attribute
            assignments.append(f"#{attribute} = :{attribute}")
            vals[attribute] = value
    return storage.update_op(
        _table(),
        _key(request_id),
        "SET " + ", ".join(assignments),
        condition="#st = :pending AND recipientId = :me",
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=storage.values(**vals),
    )


@dataclass
class Bundle:
    """Items read together in one BatchGetItem, keyed by id (missing ids are absent)."""

    requests: dict[str, RequestRecord] = field(default_factory=dict)
    users: dict[str, UserRecord] = field(default_factory=dict)
    listings: dict[str, ListingRecord] = field(default_factory=dict)


def read_bundle(
    request_ids: Sequence[str] = (), user_ids: Sequence[str] = (), listing_ids: Sequence[str] = ()
) -> Bundle:
    """Requests, users and listings by id in one BatchGetItem (at most 100 keys in all).

    This is how detail reads and decisions stay at one read call: e.g. a listing's owner and
    the caller's request, or a request with its listing and the deciding user.
    """
    config = settings()
    tables = {
        config.REQUESTS_TABLE: [{"requestId": i} for i in dict.fromkeys(request_ids)],
        config.USERS_TABLE: [{"userId": i} for i in dict.fromkeys(user_ids)],
        config.LISTINGS_TABLE: [{"listingId": i} for i in dict.fromkeys(listing_ids)],
    }
    found = storage.batch_get_tables(tables)
    return Bundle(
        requests={i["requestId"]: record(i) for i in found[config.REQUESTS_TABLE]},
        users={i["userId"]: user_record(i) for i in found[config.USERS_TABLE]},
        listings={i["listingId"]: listing_record(i) for i in found[config.LISTINGS_TABLE]},
    )
