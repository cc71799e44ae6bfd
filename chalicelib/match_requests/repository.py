"""Requests table access.

Item shape (both kinds)::

    {requestId, subjectType, subjectId, requesterId, recipientId, status,
     listingId?, listingTitle?,            # LISTING
     userId?,                              # PROFILE: the requested user
     profile: {displayName, verifiedLevel, country, socialLinks},   # requester, as sent
     channels, message, reason?, conversationId?, createdAt, respondedAt?}

plus the list index attributes of :mod:`chalicelib.match_requests.list_indexes` (``newest`` and
the filtered partitions such as ``sentStatus``), which key the ten list GSIs; their sizes are
counted in the SearchIndex table (:mod:`chalicelib.search.counters`). Ids come from
:mod:`chalicelib.match_requests.ids`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chalicelib.blocks import api as blocks
from chalicelib.kernel.config import settings
from chalicelib.kernel.profile_summary import ProfileSummary, SocialLinks
from chalicelib.listings import api as listings
from chalicelib.listings.records import ListingRecord
from chalicelib.match_requests import list_indexes
from chalicelib.match_requests.list_indexes import ListQuery, RequestList
from chalicelib.match_requests.models import RequestStatus
from chalicelib.match_requests.records import RequestRecord, record
from chalicelib.persistence import batch_reads, storage
from chalicelib.persistence.transact_items import TransactItem, typed
from chalicelib.search import counters as list_counters
from chalicelib.search import keyset
from chalicelib.users import api as users
from chalicelib.users.records import UserRecord


def _table() -> str:
    return settings().REQUESTS_TABLE


def _record(item: dict[str, Any]) -> RequestRecord:
    return record(list_indexes.without_index_attributes(item))


def _key(request_id: str) -> dict[str, str]:
    return {"requestId": request_id}


def get(request_id: str) -> RequestRecord | None:
    """The request item, or ``None``."""
    item = storage.get(_table(), _key(request_id))
    return _record(item) if item is not None else None


def put_new_op(item: RequestRecord) -> TransactItem:
    """Transaction ``Put`` of a new request with its list index attributes (:func:`list_indexes.index_attributes`);
    its condition fails when the id exists (a duplicate)."""
    return storage.tx_put(_table(), {**item, **list_indexes.index_attributes(item)}, condition="attribute_not_exists(requestId)")


def list_page(
    query: ListQuery, size: int, after: str | None = None, skip: int = 0
) -> tuple[list[RequestRecord], str | None]:
    """One page of a request list, newest first, read from its list index.

    Parameters
    ----------
    query:
        The list and its filters (:class:`chalicelib.match_requests.list_indexes.ListQuery`).
    size, after, skip:
        Requests per page, the previous page's last sort key (a cursor's position) or ``None``,
        and the requests to pass over first (offset pages without a cursor).

    Returns
    -------
    tuple
        As :func:`chalicelib.listings.repository.owner_page`: the page's records and the sort key
        to continue after (``None`` on the last page), from at most ``skip + size + 1`` index items.
    """
    page = keyset.read_page(_table(), query.index, query.partition, size, after=after, skip=skip)
    items = [_record(i) for i in page.items]
    return items, (list_indexes.newest(items[-1]) if page.more and items else None)


def list_total(query: ListQuery) -> int:
    """The exact size of a request list (one GetItem of its owner's counter item)."""
    return list_counters.read(query.counter, query.counter_attribute)


def listing_with_total(listing_id: str, query: ListQuery) -> tuple[ListingRecord | None, int]:
    """The listing and the exact size of list ``query`` in one BatchGetItem (the listing route's first read).

    The listing is the listings package's part of the read (:func:`chalicelib.listings.api.read_part`).
    """
    count = batch_reads.item_part(list_counters.table(), list_counters.key(query.counter), query.counter)
    listing = listings.read_part([listing_id])
    found = batch_reads.read(listing, count)
    total = list_counters.count_in(found.of(count).get(query.counter), query.counter_attribute)
    return found.of(listing).get(listing_id), total


def list_for_subject(subject_id: str) -> list[RequestRecord]:
    """Every request about ``subject_id`` (a listing or a user), newest first.

    Reads the whole list: only for the listing deletion, which must reject every pending one.
    """
    query = ListQuery(RequestList.SUBJECT, subject_id)
    return [_record(i) for i in keyset.read_all(_table(), query.index, query.partition)]


def pending_sent(requester_id: str) -> list[RequestRecord]:
    """Every PENDING request ``requester_id`` sent, newest first (the sent-by-status list, whole:
    bounded by the daily request quotas; only for the block workflow)."""
    query = ListQuery(RequestList.SENT, requester_id, None, RequestStatus.PENDING.value)
    return [_record(i) for i in keyset.read_all(_table(), query.index, query.partition)]


def counter_ops(changes: Sequence[tuple[RequestRecord, str | None, str]]) -> list[TransactItem]:
    """Transaction ``Update`` items of the list counters for ``(request, from status, to status)`` changes.

    ``from status`` is ``None`` for a new request. Changes of the same counter item are summed
    into one item (a transaction touches an item once); the transaction's own conditions (the
    request's ``attribute_not_exists`` or its PENDING condition) make the counts exact.
    """
    return [typed(op) for op in list_counters.add_ops(
        delta for request, before, after in changes for delta in list_indexes.deltas(request, before, after)
    )]


def decide_op(
    request: RequestRecord,
    status: str,
    responded_at: str,
    *,
    reason: str | None = None,
    conversation_id: str | None = None,
    listing_title: str | None = None,
) -> TransactItem:
    """Transaction ``Update``: PENDING -> ``status``, by the request's recipient only.

    The condition (still PENDING and addressed to ``request["recipientId"]``) makes a
    concurrent second decision fail instead of overwriting the first. The status list
    attributes move with the status (:func:`list_indexes.status_attributes`), so the request leaves
    the PENDING lists and enters the ``status`` lists in the same write.
    """
    names = {"#st": "status"}
    assignments = ["#st = :st", "respondedAt = :r"]
    vals: dict[str, Any] = {"st": status, "r": responded_at, "pending": "PENDING", "me": request["recipientId"]}
    changes: dict[str, str | None] = {
        "reason": reason, "conversationId": conversation_id, "listingTitle": listing_title,
        **list_indexes.status_attributes(request, status),
    }
    for attribute, value in changes.items():
        if value is not None:
            names[f"#{attribute}"] = attribute
            assignments.append(f"#{attribute} = :{attribute}")
            vals[attribute] = value
    return storage.tx_update(
        _table(),
        _key(request["requestId"]),
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
    #: ``"<user>|<other>"`` of the asked pairs between which a block stands.
    blocked: frozenset[str] = frozenset()

    def blocks(self, user_id: str, other_id: str) -> bool:
        """Whether a block stands between the two (the pair was asked for in the read)."""
        return f"{user_id}|{other_id}" in self.blocked


def read_bundle(
    request_ids: Sequence[str] = (), user_ids: Sequence[str] = (), listing_ids: Sequence[str] = (),
    block_pairs: Sequence[tuple[str, str]] = (),
) -> Bundle:
    """Requests, users and listings by id in one BatchGetItem (at most 100 keys in all).

    This is how detail reads and decisions stay at one read call: e.g. a listing's owner and
    the caller's request, or a request with its listing and the deciding user. The users,
    listings and blocks (``block_pairs``: whether a block stands between each pair) are their
    owners' parts of the read (:mod:`chalicelib.persistence.batch_reads`).
    """
    mine = batch_reads.Part(_table(), [_key(i) for i in dict.fromkeys(request_ids)], _request_id, _record)
    people, subjects = users.read_part(user_ids), listings.read_part(listing_ids)
    between = blocks.read_part(list(block_pairs))
    found = batch_reads.read(mine, people, subjects, between)
    return Bundle(requests=found.of(mine), users=found.of(people), listings=found.of(subjects),
                  blocked=frozenset(found.of(between)))


def _request_id(item: Mapping[str, Any]) -> str:
    return str(item["requestId"])


def every_of(user_id: str, kind: RequestList) -> list[RequestRecord]:
    """Every request ``user_id`` sent (``kind`` SENT) or received (RECEIVED), any status, newest
    first: the whole list, page after page of its index (only for the account erasure)."""
    query = ListQuery(kind, user_id)
    return [_record(i) for i in keyset.read_all(_table(), query.index, query.partition)]


def withdraw_op(request: RequestRecord) -> TransactItem:
    """Transaction ``Delete`` of a PENDING request by its requester; fails unless it is still PENDING
    and ``request["requesterId"]``'s (a decision that commits first wins)."""
    return storage.tx_delete(
        _table(), _key(request["requestId"]), condition="#st = :pending AND requesterId = :me",
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(pending=RequestStatus.PENDING.value, me=request["requesterId"]),
    )


def removal_counter_ops(requests: Sequence[RequestRecord]) -> list[TransactItem]:
    """Transaction ``Update`` items taking ``requests`` (in their current statuses) out of every list counter."""
    def negated(request: RequestRecord) -> list[list_counters.Delta]:
        return [(name, {a: -d for a, d in counts.items()})
                for name, counts in list_indexes.deltas(request, None, str(request["status"]))]

    return [typed(op) for op in list_counters.add_ops(d for request in requests for d in negated(request))]


#: The requester snapshot of a request whose requester's account was erased.
#: Every field of the summary stays (spec §6: the payload schemas require them): no level, country or link.
ERASED_REQUESTER: dict[str, Any] = ProfileSummary(
    displayName="Deleted user", verifiedLevel=0, country=None, socialLinks=SocialLinks()
).model_dump(mode="json")


def anonymize_requester_op(request: RequestRecord) -> TransactItem:
    """Transaction ``Update`` replacing the requester's snapshot (``profile``) of one of
    ``request["requesterId"]``'s requests by :data:`ERASED_REQUESTER` (the ``message`` stays: the
    recipient received it, as they keep the messages of a conversation)."""
    return storage.tx_update(
        _table(), _key(request["requestId"]), "SET #profile = :anonymous",
        condition="requesterId = :me",
        ExpressionAttributeNames={"#profile": "profile"},
        ExpressionAttributeValues=storage.values(anonymous=ERASED_REQUESTER, me=request["requesterId"]),
    )


def forget_counter_ops(user_id: str) -> list[TransactItem]:
    """Transaction ``Delete`` items of ``user_id``'s request list counters (sent, received, and the
    requests about their profile)."""
    return [storage.tx_delete(list_counters.table(), list_counters.key(list_indexes.counter_name(kind, user_id)))
            for kind in RequestList]
