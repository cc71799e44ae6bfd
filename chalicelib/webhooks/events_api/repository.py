"""Events table reads of the events API: a user's events by the outbox's list indexes.

The records are the outbox items with a recipient (:mod:`chalicelib.persistence.outbox`): partition
``recipientId`` (index ``byRecipient``), ``<recipientId>#<type>`` (``byRecipientType``) or
``<recipientId>#<listingId>#<type>`` (``byRecipientListingType``), each sorted by
``recipientSort`` = ``<createdAt>#<eventId>``. A page filtered by several types (or a
listing's three ``match_request.*`` types) merges the newest-first pages of those partitions
(at most ``pageSize + 1`` items each, as the review queue's shards:
:func:`chalicelib.listings.repository.pending_page`), so the items read follow the page, never
the user's history.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import outbox, queries, storage

#: The shape of a ``recipientSort`` key (a cursor's position): ``<ISO 8601 UTC ms>#evt_<ULID>``.
SORT_KEY = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#evt_[0-9A-HJKMNP-TV-Z]{26}$")
#: Bounds of ``recipientSort`` when a side is open (every key sorts between them).
_LOWEST = "0"
_HIGHEST = "~"


def _table() -> str:
    return settings().EVENTS_TABLE


def get(event_id: str) -> outbox.OutboxEvent | None:
    """The Events item ``event_id``, or ``None``."""
    item = storage.get(_table(), {"eventId": event_id})
    return outbox.record(item) if item is not None else None


@dataclass(frozen=True)
class Partitions:
    """Which list index partitions hold the events a query asks for: ``index`` and its ``values``."""

    index: str
    attribute: str
    values: tuple[str, ...]


def partitions(recipient_id: str, types: list[str], listing_id: str | None) -> Partitions:
    """The partitions of ``recipient_id``'s events of ``types`` (all types when empty), about
    ``listing_id`` when given (whose events are the ``match_request.*`` types in ``types``)."""
    if listing_id is not None:
        return Partitions(
            outbox.BY_RECIPIENT_LISTING_TYPE_INDEX, "recipientListingType",
            tuple(f"{recipient_id}#{listing_id}#{t}" for t in types),
        )
    if types:
        return Partitions(outbox.BY_RECIPIENT_TYPE_INDEX, "recipientType", tuple(f"{recipient_id}#{t}" for t in types))
    return Partitions(outbox.BY_RECIPIENT_INDEX, "recipientId", (recipient_id,))


def _partition_page(where: Partitions, value: str, lower: str, upper: str, wanted: int, after: str | None) -> list[dict[str, Any]]:
    """Up to ``wanted`` events of partition ``value`` with ``recipientSort`` in ``[lower, upper]`` and
    below ``after``, newest first: one Query (more only when DynamoDB's 1 MB page cuts it short)."""
    params: dict[str, Any] = {
        "IndexName": where.index,
        "KeyConditionExpression": "#p = :p AND recipientSort BETWEEN :lo AND :hi",
        "ExpressionAttributeNames": {"#p": where.attribute},
        "ExpressionAttributeValues": storage.values(p=value, lo=lower, hi=upper),
        "ScanIndexForward": False,
    }
    if after is not None:  # a position, whichever partition its event lives in
        params["ExclusiveStartKey"] = storage.to_item({"eventId": after.partition("#")[2], where.attribute: value, "recipientSort": after})
    return queries.query_up_to(_table(), wanted, **params)[0]


@dataclass(frozen=True)
class EventsPage:
    """One page of events, newest first, whether ``more`` follow, and how many events were passed
    over before it (``skipped``: fewer than asked when the list ended first)."""

    items: list[outbox.OutboxEvent]
    more: bool
    skipped: int = 0


def page(
    where: Partitions, size: int, lower: str | None = None, upper: str | None = None, after: str | None = None, skip: int = 0
) -> EventsPage:
    """A page of ``size`` events of the partitions ``where``, newest first.

    Parameters
    ----------
    where:
        The partitions (:func:`partitions`).
    size:
        Events per page (1..100).
    lower:
        Oldest ``createdAt`` listed (ISO 8601 UTC, inclusive), or ``None``.
    upper:
        ``createdAt`` the events must be older than (exclusive), or ``None``.
    after:
        ``recipientSort`` of the previous page's last event (a cursor's position; it must match
        :data:`SORT_KEY`), or ``None``.
    skip:
        Events to pass over first (offset pages without a cursor).

    Returns
    -------
    EventsPage
        Reads at most ``skip + size + 1`` items per partition (``k`` partitions: ``k`` Queries),
        whatever the number of events; the partitions' pages merged by ``recipientSort`` (unique:
        it ends with the event id) hold the list's next ``size`` events.
    """
    low = lower or _LOWEST
    # Keys of createdAt T are "T#evt_...", greater than "T": an upper bound of "T" excludes T itself.
    high = upper or _HIGHEST
    if not where.values or low >= high:  # nothing to list: no partition, or an empty interval
        return EventsPage(items=[], more=False)
    wanted = skip + size + 1
    pages = [_partition_page(where, value, low, high, wanted, after) for value in where.values]
    found = list(itertools.islice(heapq.merge(*pages, key=_sort_key, reverse=True), wanted))
    return EventsPage(
        items=[outbox.record(i) for i in found[skip : skip + size]], more=len(found) > skip + size, skipped=min(skip, len(found))
    )


def _sort_key(item: Mapping[str, Any]) -> str:
    return str(item["recipientSort"])


def written_between(recipient_id: str, event_type: str, lower: str, upper: str) -> list[outbox.OutboxEvent]:
    """``recipient_id``'s events of ``event_type`` whose ``createdAt`` lies in ``[lower, upper]``
    (ISO 8601 UTC, both inclusive): one Query of the ``byRecipientType`` partition (more only past
    DynamoDB's 1 MB page)."""
    items = storage.query(
        _table(), IndexName=outbox.BY_RECIPIENT_TYPE_INDEX,
        KeyConditionExpression="recipientType = :p AND recipientSort BETWEEN :lo AND :hi",
        ExpressionAttributeValues=storage.values(p=f"{recipient_id}#{event_type}", lo=lower, hi=f"{upper}#~"),
    )
    return [outbox.record(i) for i in items]


def set_data(event_id: str, fields: Mapping[str, Any]) -> None:
    """Set ``data.<name>`` to each value of ``fields`` on event ``event_id`` (one UpdateItem; an
    event removed meanwhile by its TTL is left removed)."""
    names = {f"#f{i}": name for i, name in enumerate(fields)}
    with contextlib.suppress(storage.ConditionFailed):
        storage.update(
            _table(), {"eventId": event_id}, "SET " + ", ".join(f"#data.{n} = :{n[1:]}" for n in names),
            condition="attribute_exists(eventId)",
            ExpressionAttributeNames={"#data": "data", **names},
            # null members kept, as the outbox writes an event's data: a payload keeps every field its schema requires
            ExpressionAttributeValues={f":{n[1:]}": storage.to_value(v, keep_none=True)
                                       for n, v in zip(names, fields.values(), strict=True)},
        )
