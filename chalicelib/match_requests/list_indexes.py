"""The request lists and their indexes: which GSI serves each list route, and what it counts.

Three lists hold every request: the requests a user **sent** (``/v1/match-requests/mine``),
the requests a user **received** (``/incoming``) and the requests about a **subject** (a
listing's requests, ``/listing/{id}``). Each list and each filter combination the routes offer
has its own GSI of the Requests table, partitioned by the list (the owner, plus the filter
values) and sorted by :data:`SORT` = ``<createdAt>#<requestId>`` (newest first, ties by id),
so a page is one Query of ``pageSize + 1`` items (:mod:`chalicelib.search.keyset`):

===========  ==================  ================================  ==========================
list         filters             index                             partition key value
===========  ==================  ================================  ==========================
sent         none                ``sentNewest``                    ``requesterId``
sent         subjectType         ``sentByType``                    ``<requesterId>#<type>``
sent         status              ``sentByStatus``                  ``<requesterId>#<status>``
sent         both                ``sentByTypeStatus``              ``<requesterId>#<type>#<status>``
received     (same four)         ``receivedNewest`` ...            ``recipientId`` ...
subject      none / status       ``subjectNewest`` / ``subjectByStatus``  ``subjectId`` / ``<subjectId>#<status>``
===========  ==================  ================================  ==========================

The partition attributes that contain the status change with it (:func:`status_attributes`),
so a decision moves the request between the status lists in the same write.

Totals come from one counter item per list owner (:mod:`chalicelib.search.counters`), named
``requests#<list>#<owner>``, with one attribute per filter combination (:func:`counter_attribute`):
``n``, ``t#<type>``, ``s#<status>``, ``ts#<type>#<status>``. :func:`deltas` says how a creation
or a status change moves them; the services write those in the same transaction as the change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from itertools import product
from typing import Any

from chalicelib.search.counters import Delta
from chalicelib.search.keyset import ListIndex

#: The sort key attribute of every request list index: ``<createdAt>#<requestId>``.
SORT = "newest"


class RequestList(StrEnum):
    """The three lists every request is in."""

    SENT = "sent"
    RECEIVED = "received"
    SUBJECT = "subject"


#: The item attribute naming each list's owner (its partition key without filters).
OWNER_ATTRIBUTE = {RequestList.SENT: "requesterId", RequestList.RECEIVED: "recipientId", RequestList.SUBJECT: "subjectId"}


def newest(item: Mapping[str, Any]) -> str:
    """The sort key of a request item: ``<createdAt>#<requestId>`` (ISO 8601 UTC, fixed width)."""
    return f"{item['createdAt']}#{item['requestId']}"


def _table_key(_partition: str, sort_value: str) -> dict[str, str]:
    return {"requestId": sort_value.partition("#")[2]}


#: ``(list, by subjectType, by status)`` -> ``(GSI name, partition key attribute)``; the template declares these.
_INDEXES: dict[tuple[RequestList, bool, bool], tuple[str, str]] = {
    (RequestList.SENT, False, False): ("sentNewest", "requesterId"),
    (RequestList.SENT, True, False): ("sentByType", "sentType"),
    (RequestList.SENT, False, True): ("sentByStatus", "sentStatus"),
    (RequestList.SENT, True, True): ("sentByTypeStatus", "sentTypeStatus"),
    (RequestList.RECEIVED, False, False): ("receivedNewest", "recipientId"),
    (RequestList.RECEIVED, True, False): ("receivedByType", "receivedType"),
    (RequestList.RECEIVED, False, True): ("receivedByStatus", "receivedStatus"),
    (RequestList.RECEIVED, True, True): ("receivedByTypeStatus", "receivedTypeStatus"),
    (RequestList.SUBJECT, False, False): ("subjectNewest", "subjectId"),
    (RequestList.SUBJECT, False, True): ("subjectByStatus", "subjectStatus"),
}


def index(kind: RequestList, by_type: bool, by_status: bool) -> ListIndex:
    """The GSI of list ``kind`` filtered by subject type and/or status (see the module table).

    Raises
    ------
    KeyError
        ``by_type`` for the subject list (it has no such index).
    """
    name, partition = _INDEXES[(kind, by_type, by_status)]
    return ListIndex(name, partition, SORT, _table_key)


def by_type(kind: RequestList) -> bool:
    """Whether list ``kind`` can be filtered by ``subjectType`` (a subject's requests are all of its type)."""
    return (kind, True, False) in _INDEXES


def indexes() -> list[ListIndex]:
    """Every request list index (the template declares exactly these on the Requests table)."""
    return [index(*combination) for combination in _INDEXES]


def _partition(owner: str, subject_type: str | None, status: str | None) -> str:
    return "#".join(part for part in (owner, subject_type, status) if part is not None)


def counter_attribute(subject_type: str | None, status: str | None) -> str:
    """The counter attribute of one filter combination: ``n``, ``t#T``, ``s#S`` or ``ts#T#S``."""
    if subject_type is None:
        return "n" if status is None else f"s#{status}"
    return f"t#{subject_type}" if status is None else f"ts#{subject_type}#{status}"


@dataclass(frozen=True)
class ListQuery:
    """One list route's list: ``kind`` of ``owner``, optionally one ``subject_type`` and ``status``.

    Raises
    ------
    ValueError
        ``subject_type`` given for the subject list (it has no such index).
    """

    kind: RequestList
    owner: str
    subject_type: str | None = None
    status: str | None = None

    def __post_init__(self) -> None:
        if self.subject_type is not None and not by_type(self.kind):
            raise ValueError(f"the {self.kind.value} list has no subjectType filter")

    @property
    def index(self) -> ListIndex:
        """The GSI holding this list."""
        return index(self.kind, self.subject_type is not None, self.status is not None)

    @property
    def partition(self) -> str:
        """This list's partition key value in :attr:`index`."""
        return _partition(self.owner, self.subject_type, self.status)

    @property
    def counter(self) -> str:
        """The counter item holding this list's size."""
        return counter_name(self.kind, self.owner)

    @property
    def counter_attribute(self) -> str:
        """The attribute of :attr:`counter` holding this list's size."""
        return counter_attribute(self.subject_type, self.status)


def counter_name(kind: RequestList, owner: str) -> str:
    """The counter item name of ``owner``'s list ``kind``: ``requests#<list>#<owner>``."""
    return f"requests#{kind.value}#{owner}"


def _filter_partitions(item: Mapping[str, Any], status: str) -> dict[str, str]:
    """The partition attributes of ``item`` in the filtered indexes, were its status ``status``."""
    attributes = {}
    for (kind, by_type, by_status), (_, partition) in _INDEXES.items():
        if by_type or by_status:
            owner = str(item[OWNER_ATTRIBUTE[kind]])
            subject_type = str(item["subjectType"]) if by_type else None
            attributes[partition] = _partition(owner, subject_type, status if by_status else None)
    return attributes


def index_attributes(item: Mapping[str, Any]) -> dict[str, str]:
    """Every list index attribute of a request item (``newest`` and the filtered partitions).

    ``item`` needs ``requestId``, ``createdAt``, ``requesterId``, ``recipientId``,
    ``subjectId``, ``subjectType`` and ``status``.
    """
    return {SORT: newest(item), **_filter_partitions(item, str(item["status"]))}


def status_attributes(item: Mapping[str, Any], status: str) -> dict[str, str]:
    """The index attributes that change when ``item`` moves to ``status`` (those containing it)."""
    return {name: value for name, value in _filter_partitions(item, status).items() if name.endswith("Status")}


def _counter_moves(item: Mapping[str, Any], kind: RequestList, status: str, sign: int) -> dict[str, int]:
    types = (None, str(item["subjectType"])) if by_type(kind) else (None,)
    return {counter_attribute(t, s): sign for t, s in product(types, (None, status))}


def deltas(item: Mapping[str, Any], from_status: str | None, to_status: str) -> list[Delta]:
    """The counter changes of ``item`` entering ``to_status`` (created when ``from_status`` is ``None``).

    Returns one ``(counter name, {attribute: delta})`` per list the item is in; the
    attributes that do not depend on the status cancel out on a status change
    (:func:`chalicelib.search.counters.merge` drops them).
    """
    changes: list[Delta] = []
    for kind in RequestList:
        counts = _counter_moves(item, kind, to_status, +1)
        if from_status is not None:
            for attribute, delta in _counter_moves(item, kind, from_status, -1).items():
                counts[attribute] = counts.get(attribute, 0) + delta
        changes.append((counter_name(kind, str(item[OWNER_ATTRIBUTE[kind]])), counts))
    return changes


def without_index_attributes(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` without its list index attributes (storage detail, never part of a record)."""
    derived = {SORT} | {i.partition for i in indexes()} - set(OWNER_ATTRIBUTE.values())
    return {name: value for name, value in item.items() if name not in derived}
