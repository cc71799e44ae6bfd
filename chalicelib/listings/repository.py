"""Listings table access.

Item shape: :class:`~chalicelib.listings.records.ListingRecord` (every read converts ``status`` to
the :class:`~chalicelib.listings.status.ListingStatus` enum) plus, while ACTIVE, the
sparse index attributes of :mod:`chalicelib.listings.index` and, while PENDING, those of the
``pendingReview`` index (:func:`pending_attributes`). ``version`` increments on every
content change; approval tasks carry it so a stale task is never applied.
"""

from __future__ import annotations

import heapq
import itertools
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from chalicelib.kernel.config import settings
from chalicelib.listings import counters, owner_list, status, status_history
from chalicelib.listings.index import INDEX_ATTRIBUTES, index_attributes
from chalicelib.listings.records import ListingRecord, record
from chalicelib.listings.status import ListingStatus, Transition
from chalicelib.persistence import batch_reads, outbox, storage
from chalicelib.persistence.transact_items import TransactItem, typed
from chalicelib.search import counters as list_counters
from chalicelib.search import keyset
from chalicelib.users import api as users
from chalicelib.users.records import UserRecord


def _table() -> str:
    return settings().LISTINGS_TABLE


def _key(listing_id: str) -> dict[str, str]:
    return {"listingId": listing_id}


#: Partition values of the sparse ``pendingReview`` index, oldest first by ``pendingSort`` within
#: each. Two write shards: every submission and every decision writes the index, and at 300
#: approvals/s one partition key would take 600 write units/s, above half of a partition's 1,000
#: (docs/capacity.md). A listing's shard follows from its id; shard 0 keeps the value of the
#: single partition before sharding, so listings pending since then are still read.
PENDING_PARTITIONS = (ListingStatus.PENDING.value, f"{ListingStatus.PENDING.value}#1")
PENDING_INDEX = "pendingReview"


def pending_partition(listing_id: str) -> str:
    """The ``pendingReview`` shard of ``listing_id`` (CRC-32 of the id, modulo the shards: stable)."""
    return PENDING_PARTITIONS[zlib.crc32(listing_id.encode("utf-8")) % len(PENDING_PARTITIONS)]


def _pending_table_key(_partition: str, pending_sort: str) -> dict[str, str]:
    """The listing key of a ``pendingReview`` position: the id ends ``pendingSort`` (ids hold no ``#``)."""
    return {"listingId": pending_sort.rsplit("#", 1)[1]}


#: The review queue as a list index (:mod:`chalicelib.search.keyset`): per shard, ``pendingSort`` ascending.
PENDING_LIST = keyset.ListIndex(PENDING_INDEX, "pendingQueue", "pendingSort", _pending_table_key)


def pending_attributes(listing_id: str, submitted_at: str) -> dict[str, str]:
    """The ``pendingReview`` index attributes of a listing submitted (created or changed) at ``submitted_at``.

    ``pendingSort`` is ``<submittedAt ISO 8601 UTC>#<listingId>``: oldest submission first,
    unique per listing.
    """
    return {"pendingQueue": pending_partition(listing_id), "pendingSort": f"{submitted_at}#{listing_id}"}


def get(listing_id: str, consistent: bool = False) -> ListingRecord | None:
    """The listing record, or ``None`` (``consistent``: a strongly consistent read)."""
    item = storage.get(_table(), _key(listing_id), consistent=consistent)
    return record(item) if item is not None else None


def read_part(listing_ids: Sequence[str]) -> batch_reads.Part[ListingRecord]:
    """The listings ``listing_ids`` (duplicates dropped) as one part of a shared BatchGetItem, by ``listingId``."""
    return batch_reads.Part(_table(), [_key(i) for i in dict.fromkeys(listing_ids)], _listing_id, record)


def _listing_id(item: Mapping[str, Any]) -> str:
    return str(item["listingId"])


def get_many(listing_ids: Sequence[str]) -> dict[str, ListingRecord]:
    """Listing records by id (BatchGetItem); missing ids are absent."""
    return {i["listingId"]: record(i) for i in storage.batch_get(_table(), [_key(x) for x in listing_ids])}


def owner_page(owner_id: str, size: int, after: str | None = None, skip: int = 0) -> tuple[list[ListingRecord], str | None]:
    """One page of ``owner_id``'s listings (every status), newest first, from the ``ownerNewest`` index.

    Parameters
    ----------
    owner_id:
        The owner (the list).
    size:
        Listings per page (1..100).
    after:
        The previous page's last sort key (a cursor's position, ``<createdAt>#<listingId>``), or ``None``.
    skip:
        Listings to pass over first (offset pages without a cursor).

    Returns
    -------
    tuple
        The page's records and the sort key to continue after (``None`` on the last page).
        Reads at most ``skip + size + 1`` index items (projection ALL, no re-read).
    """
    page = keyset.read_page(_table(), owner_list.INDEX, owner_id, size, after=after, skip=skip)
    items = [record(i) for i in page.items]
    return items, (owner_list.sort_key(items[-1]) if page.more and items else None)


#: Most listings of the owner's list one filtered page examines (the filter is applied to what is read).
FILTER_BUDGET = 500


def owner_page_matching(
    owner_id: str, size: int, keep: Callable[[ListingRecord], bool], after: str | None = None
) -> tuple[list[ListingRecord], str | None]:
    """The next ``size`` of ``owner_id``'s listings for which ``keep`` is true, newest first.

    Reads the ``ownerNewest`` index 100 items a Query from ``after`` until ``size`` listings
    matched, the list ended, or :data:`FILTER_BUDGET` items were examined (the read grows with
    the part of the list passed over, never beyond the budget).

    Returns
    -------
    tuple
        The matching records and the sort key to continue after (the last one returned when the
        page is full, else the last one examined when the budget ran out; ``None``: the list ended).
    """
    found: list[ListingRecord] = []
    examined = 0
    position = after
    while examined < FILTER_BUDGET:
        page = keyset.read_page(_table(), owner_list.INDEX, owner_id, min(100, FILTER_BUDGET - examined), after=position)
        items = [record(i) for i in page.items]
        examined += len(items)
        for item in items:
            if keep(item):
                found.append(item)
                if len(found) > size:
                    return found[:size], owner_list.sort_key(found[size - 1])
        if not page.more or not items:
            return found, None
        position = owner_list.sort_key(items[-1])
    return found, position


def owner_total(owner_id: str) -> int:
    """The exact number of ``owner_id``'s listings (one GetItem of the owner's counter item)."""
    return list_counters.read(owner_list.counter_name(owner_id), owner_list.COUNT_ATTRIBUTE)


def owner_with_total(owner_id: str) -> tuple[UserRecord | None, int]:
    """The owner's user record (``None`` when gone) and the exact number of their listings.

    One BatchGetItem of the Users item (the users package's part) and the owner's counter item,
    so the ``mine`` route stays at two DynamoDB calls (the page's Query and this).
    """
    counter = owner_list.counter_name(owner_id)
    owner, count = users.read_part([owner_id]), batch_reads.item_part(list_counters.table(), list_counters.key(counter), counter)
    found = batch_reads.read(owner, count)
    total = list_counters.count_in(found.of(count).get(counter), owner_list.COUNT_ATTRIBUTE)
    return found.of(owner).get(owner_id), total


def owner_count_op(owner_id: str, change: int) -> TransactItem:
    """Transaction ``Update`` moving ``owner_id``'s listing counter by ``change`` (+1 create, -1 delete).

    Only valid in the transaction whose conditional Put or Delete of the listing makes the change.
    """
    name, changes = owner_list.delta(owner_id, change)
    return typed(list_counters.add_op(name, changes))


def forget_owner_counter_op(owner_id: str) -> TransactItem:
    """Transaction ``Delete`` of ``owner_id``'s listing counter item (the account erasure, once
    every listing of the owner is deleted)."""
    return storage.tx_delete(list_counters.table(), list_counters.key(owner_list.counter_name(owner_id)))


def count_request_op(listing_id: str) -> TransactItem:
    """Transaction ``Update``: ``requestCount + 1``, only while the listing accepts requests.

    The condition is :func:`chalicelib.listings.status.accepts_requests` written as a condition
    expression (status ACTIVE), so the request service's check on its read is re-checked at
    commit. ``requestCount`` is written only here and by :func:`uncount_request_op`, and checked by
    :func:`delete_counted_op`.
    """
    return storage.tx_update(
        _table(),
        _key(listing_id),
        "SET requestCount = if_not_exists(requestCount, :zero) + :one",
        condition="#st = :active",
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(zero=0, one=1, active=ListingStatus.ACTIVE.value),
    )


def uncount_request_op(listing_id: str) -> TransactItem:
    """Transaction ``Update``: ``requestCount - 1``, beside the delete of a PENDING request withdrawn
    by its requester's account erasure, so that the count :func:`delete_counted_op` compares with
    the listing's requests stays theirs. Conditional on the listing existing (the caller leaves it
    out for a listing it did not find)."""
    return storage.tx_update(
        _table(), _key(listing_id), "SET requestCount = requestCount - :one",
        condition="attribute_exists(listingId) AND requestCount > :zero",
        ExpressionAttributeValues=storage.values(zero=0, one=1),
    )


def exists_op(listing_id: str) -> TransactItem:
    """Transaction ``ConditionCheck``: the listing has not been deleted (a request decision's guard)."""
    return storage.tx_check(_table(), _key(listing_id), "attribute_exists(listingId)")


def delete_counted_op(
    listing_id: str, owner_id: str, request_count: int, status: str, version: int | None = None
) -> TransactItem:
    """Transaction ``Delete`` of a listing owned by ``owner_id`` that has exactly ``request_count`` requests,
    is still in ``status`` and, when ``version`` is given, still at that version (``If-Match``).

    The listing deletion, which rejects the pending requests in the same transaction, uses it:
    a request committed after the deletion's Query (or missing from the eventually consistent
    ``subjectNewest`` index) changes ``requestCount`` and cancels the deletion instead of being
    left PENDING. The listing must still be in ``status`` (the transaction adjusts the search
    counters by it).
    """
    counted = "requestCount = :n" if request_count else "(attribute_not_exists(requestCount) OR requestCount = :n)"
    vals: dict[str, Any] = {"o": owner_id, "n": request_count, "st": status}
    condition = f"ownerId = :o AND #st = :st AND {counted}"
    if version is not None:
        condition += " AND version = :v"
        vals["v"] = version
    return storage.tx_delete(
        _table(),
        _key(listing_id),
        condition=condition,
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(**vals),
    )


def create(item: ListingRecord, extra_ops: Sequence[TransactItem]) -> None:
    """Put a new listing together with ``extra_ops`` (its outbox event) in one transaction.

    The Put (conditional on the id being new) carries the ``ownerNewest`` sort key and the same
    transaction adds 1 to the owner's listing counter (:mod:`chalicelib.listings.owner_list`).
    ``item`` carries its first ``statusHistory`` entry (:mod:`chalicelib.listings.status_history`).
    """
    stored = {**item, owner_list.SORT: owner_list.sort_key(item)}
    storage.transact([
        storage.tx_put(_table(), stored, condition="attribute_not_exists(listingId)"),
        owner_count_op(item["ownerId"], 1),
        *extra_ops,
    ])


_REMOVE_PENDING = "pendingQueue, pendingSort"


def _remove_index() -> str:
    return ", ".join(INDEX_ATTRIBUTES)


def _history_update(
    listing: Mapping[str, Any], new: status_history.StatusEntry, vals: dict[str, Any]
) -> tuple[str, str, list[status_history.StatusEntry]]:
    """The ``SET`` clause and condition that add ``new`` to the ``statusHistory`` of ``listing`` (as read).

    Below :data:`chalicelib.listings.status_history.LIMIT` entries it appends in place, conditional
    on the stored list still being shorter than the limit; at the limit it writes the newest entries
    as read plus ``new``, conditional on the stored ``version`` being the one read (the bound and
    why: :mod:`chalicelib.listings.status_history`). Adds its values to ``vals``.

    Returns
    -------
    tuple[str, str, list[StatusEntry]]
        The ``SET`` clause (no leading ``SET``), the condition to AND with the update's own, and
        the history as the update writes it.
    """
    history = list(listing.get("statusHistory") or [])
    written = status_history.appended(history, new)
    if len(history) < status_history.LIMIT:
        vals.update(history_entry=[new], history_none=[], history_cap=status_history.LIMIT)
        return ("statusHistory = list_append(if_not_exists(statusHistory, :history_none), :history_entry)",
                "(attribute_not_exists(statusHistory) OR size(statusHistory) < :history_cap)", written)
    vals.update(history_kept=written, history_version=int(listing["version"]))
    return "statusHistory = :history_kept", "version = :history_version", written


def replace_content_op(item: ListingRecord, expected_version: int, was_status: ListingStatus) -> TransactItem:
    """Transaction ``Update``: new content, status PENDING, version + 1, out of the search indexes.

    Conditional on the stored ``version`` still being ``expected_version`` (optimistic lock)
    and the status still being ``was_status`` (an ACTIVE listing's update also carries
    :func:`leave_active_ops`). ``item`` is the listing as read with its new content and
    ``updatedAt``: the update appends a PENDING entry to its ``statusHistory`` unless it was
    PENDING already (an edit under review changes no status), and :func:`resubmitted_history`
    is that history as written.
    """
    vals: dict[str, Any] = {}
    history_set, history_condition = "", ""
    if _enters_pending(was_status):
        clause, condition, _ = _history_update(item, _resubmitted_entry(item), vals)
        history_set, history_condition = f", {clause}", f" AND {condition}"
    return storage.tx_update(
        _table(),
        _key(item["listingId"]),
        "SET title = :t, meta = :m, channels = :c, webhookIds = :w, searchText = :s, #st = :pending, "
        f"version = :next, updatedAt = :u, pendingQueue = :pq, pendingSort = :ps{history_set} "
        f"REMOVE statusReason, {_remove_index()}",
        condition=f"version = :v AND #st = :was{history_condition}",
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(
            t=item["title"], m=item["meta"], c=item["channels"], w=item["webhookIds"], s=item["searchText"],
            pending=status.target(Transition.SUBMIT).value, next=expected_version + 1, u=item["updatedAt"],
            v=expected_version, was=ListingStatus(was_status).value,
            pq=pending_partition(item["listingId"]), ps=pending_attributes(item["listingId"], item["updatedAt"])["pendingSort"],
            **vals,
        ),
    )


def _enters_pending(was_status: ListingStatus | str) -> bool:
    """Whether a content update of a listing in ``was_status`` changes its status (to PENDING)."""
    return ListingStatus(was_status) != status.target(Transition.SUBMIT)


def _resubmitted_entry(item: ListingRecord) -> status_history.StatusEntry:
    return status_history.entry(status.target(Transition.SUBMIT), item["updatedAt"])


def resubmitted_history(item: ListingRecord, was_status: ListingStatus | str) -> list[status_history.StatusEntry]:
    """The ``statusHistory`` :func:`replace_content_op` writes for ``item`` (its history as read, plus
    PENDING unless it was PENDING already)."""
    history = list(item.get("statusHistory") or [])
    return status_history.appended(history, _resubmitted_entry(item)) if _enters_pending(was_status) else history


def rebind_op(item: ListingRecord, expected_version: int) -> TransactItem:
    """Transaction ``Update``: ``channels``, ``webhookIds`` and ``updatedAt`` of ``item``, version + 1,
    status untouched; conditional on the stored ``version`` still being ``expected_version``."""
    return storage.tx_update(
        _table(), _key(item["listingId"]), "SET channels = :c, webhookIds = :w, updatedAt = :u, version = :next",
        condition="version = :v",
        ExpressionAttributeValues=storage.values(c=item["channels"], w=item["webhookIds"], u=item["updatedAt"],
                                                 next=expected_version + 1, v=expected_version),
    )


def resubmit(read: ListingRecord, updated: ListingRecord, extra_ops: Sequence[TransactItem]) -> list[status_history.StatusEntry]:
    """Write ``updated``'s new content as PENDING (:func:`replace_content_op`), take the listing off its
    search counters when it was ACTIVE (:func:`leave_active_ops`) and write ``extra_ops`` (its
    ``listing.submitted`` event), in one transaction.

    Parameters
    ----------
    read:
        The listing as read (its ``version`` and ``status`` are the write's conditions; its meta
        names the counters it leaves).
    updated:
        ``read`` with its new content and ``updatedAt``.
    extra_ops:
        Items of other tables written in the same transaction.

    Returns
    -------
    list[StatusEntry]
        The ``statusHistory`` as written (:func:`resubmitted_history`).

    Raises
    ------
    storage.TransactionConflict
        The listing changed since it was read (version, status or history), or is gone.
    """
    version, was_status = int(read["version"]), read["status"]
    storage.transact([replace_content_op(updated, version, was_status), *leave_active_ops(read, was_status), *extra_ops])
    return resubmitted_history(updated, was_status)


def rebind(updated: ListingRecord, expected_version: int, extra_ops: Sequence[TransactItem]) -> None:
    """Write ``updated``'s ``channels``, ``webhookIds`` and ``updatedAt`` at ``expected_version + 1``
    (:func:`rebind_op`) and ``extra_ops`` in one transaction; status and content are untouched.

    Raises
    ------
    storage.TransactionConflict
        The stored ``version`` is not ``expected_version`` any more, or the listing is gone.
    """
    storage.transact([rebind_op(updated, expected_version), *extra_ops])


def leave_active_ops(listing: Mapping[str, Any], from_status: ListingStatus) -> list[TransactItem]:
    """The counter ops of a change out of ``from_status``: -1 when that was public (ACTIVE), else none."""
    return [typed(op) for op in counters.delta_ops(listing, -1)] if status.is_public(from_status) else []


def _transact_conditional(ops: list[TransactItem]) -> None:
    try:
        storage.transact(ops)
    except storage.TransactionConflict as exc:
        raise storage.ConditionFailed(str(exc)) from exc


def transition(
    listing: ListingRecord, change: Transition, updated_at: str, reason: str | None = None, version: int | None = None,
    extra: Sequence[TransactItem] = (),
) -> ListingRecord:
    """Apply the status ``change`` to ``listing`` in one transaction and return the item as written.

    The listing update is conditional on the status ``listing`` was read in, which must be one the
    machine lets ``change`` start from (:func:`chalicelib.listings.status.sources`), and appends the change to the listing's
    ``statusHistory`` (:mod:`chalicelib.listings.status_history`). Leading to ACTIVE puts the listing into the
    search indexes and its counters (+1, :mod:`chalicelib.listings.counters`) and writes
    its ``listing.activated`` outbox event (the saved-search percolator reads it); leaving
    ACTIVE takes it off its counters; any status but ACTIVE takes it out of the indexes (and
    out of ``pendingReview``).

    Parameters
    ----------
    listing:
        The listing item as read (its meta and category for the index attributes and counters).
    change:
        APPROVE, REJECT, PAUSE, RESUME or HIDE (a content update is :func:`replace_content_op`).
    updated_at:
        ISO 8601 UTC time of the change.
    reason:
        ``statusReason`` to store (rejections, hiding, a suspension's pause); any other change
        removes it. The change's ``statusHistory`` entry carries it too.
    version:
        When given (approvals, ``If-Match``), the stored ``version`` must also match. Every
        change increments the stored version (the listing's ETag, :mod:`chalicelib.edge.conditional`).
    extra:
        Items of other tables written in the same transaction (an administrator's decision adds
        its audit entry, :func:`chalicelib.audit.api.entry_op`).

    Returns
    -------
    ListingRecord
        The listing as stored after the change.

    Raises
    ------
    storage.ConditionFailed
        ``listing`` was read in a status ``change`` does not start from, or the listing is gone,
        no longer in that status, at another version, or its status history changed since.
    ValueError
        ``change`` is SUBMIT (it starts from any status; see :func:`replace_content_op`).
    """
    if status.sources(change) is None:
        raise ValueError(f"{change} is written by replace_content_op")
    from_status, to_status = ListingStatus(listing["status"]), status.target(change)
    if not status.may_start(change, from_status):
        raise storage.ConditionFailed(f"{change} does not start from {from_status}")
    vals: dict[str, Any] = {"from": from_status.value, "to": to_status.value, "u": updated_at, "one": 1}
    history_set, history_condition, history = _history_update(
        listing, status_history.entry(to_status, updated_at, reason), vals
    )
    condition = "#st = :from" + (" AND version = :v" if version is not None else "") + f" AND {history_condition}"
    if version is not None:
        vals["v"] = version
    if status.is_public(to_status):
        return _activate(listing, vals, condition, updated_at, extra, history_set, history)
    expression = f"SET #st = :to, updatedAt = :u, version = version + :one, {history_set}"
    if reason is not None:
        expression += ", statusReason = :r"
        vals["r"] = reason
    expression += f" REMOVE {_remove_index()}, {_REMOVE_PENDING}" + ("" if reason is not None else ", statusReason")
    update = storage.tx_update(
        _table(), _key(listing["listingId"]), expression, condition=condition,
        ExpressionAttributeNames={"#st": "status"}, ExpressionAttributeValues=storage.values(**vals),
    )
    _transact_conditional([update, *leave_active_ops(listing, from_status), *extra])
    dropped = {*INDEX_ATTRIBUTES, "statusReason", "pendingQueue", "pendingSort"}
    written = {k: v for k, v in listing.items() if k not in dropped}
    written.update(status=to_status, updatedAt=updated_at, version=int(listing["version"]) + 1, statusHistory=history)
    if reason is not None:
        written["statusReason"] = reason
    return cast(ListingRecord, written)


def _activate(
    listing: ListingRecord, vals: dict[str, Any], condition: str, updated_at: str, extra: Sequence[TransactItem],
    history_set: str, history: list[status_history.StatusEntry],
) -> ListingRecord:
    """The ACTIVE side of :func:`transition`: indexes, counters +1 and ``listing.activated``, in one transaction."""
    attributes = index_attributes(listing)
    sets = "".join(f", {k} = :{k}" for k in attributes)
    change = storage.tx_update(
        _table(), _key(listing["listingId"]),
        # approvedMeta: the content as approved, the review page's diff base (in the same update)
        f"SET #st = :to, updatedAt = :u, version = version + :one, approvedMeta = meta, {history_set}{sets} "
        f"REMOVE statusReason, {_REMOVE_PENDING}",
        condition=condition,
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(**vals, **attributes),
    )
    event = outbox.event_op(  # the version as written by this change
        outbox.LISTING_ACTIVATED, {"listingId": listing["listingId"], "version": int(listing.get("version") or 1) + 1}
    )
    _transact_conditional([change, *(typed(op) for op in counters.delta_ops(listing, +1)), event, *extra])
    # The condition held, so the stored item is the one read plus this change.
    written = {k: v for k, v in listing.items() if k not in ("statusReason", "pendingQueue", "pendingSort")}
    written.update(attributes, status=ListingStatus.ACTIVE, updatedAt=updated_at, version=int(listing["version"]) + 1,
                   approvedMeta=dict(listing.get("meta") or {}), statusHistory=history)
    return cast(ListingRecord, written)


#: The newest-first indexes and their partition key attributes (search.index).
_NEWEST_INDEXES = (
    {"IndexName": "activeByCategoryShard", "attribute": "activeCategoryShard"},
    {"IndexName": "activeByRoleShard", "attribute": "activeRoleShard"},
)


def pending_page(size: int, after: str | None = None) -> tuple[list[ListingRecord], str | None]:
    """One page of the review queue: PENDING listings, oldest submission first, from ``pendingReview``.

    Parameters
    ----------
    size:
        Listings per page (1..100).
    after:
        ``pendingSort`` (``<submittedAt>#<listingId>``) of the previous page's last listing (a
        cursor's position), or ``None`` to start at the oldest.

    Returns
    -------
    tuple
        The page's records and the ``pendingSort`` to continue after (``None`` on the last page).
        Reads at most ``size + 1`` index items per shard (projection ALL, no re-read), whatever
        the queue's length (:func:`chalicelib.search.keyset.read_page`): each shard's page starts after
        the same position, and the shards' pages merged by ``pendingSort`` hold the queue's next
        ``size`` listings (``pendingSort`` is unique: it ends with the listing id).
    """
    pages = [keyset.read_page(_table(), PENDING_LIST, shard, size, after=after, descending=False)
             for shard in PENDING_PARTITIONS]
    merged = heapq.merge(*(page.items for page in pages), key=lambda item: str(item["pendingSort"]))
    found = list(itertools.islice(merged, size + 1))
    items = [record(i) for i in found[:size]]
    more = len(found) > size or any(page.more for page in pages)
    return items, (str(found[size - 1]["pendingSort"]) if more and items else None)
