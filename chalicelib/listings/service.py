"""Listing rules (spec §3 "Listing status", DESIGN §2 "Listings").

* Create and update validate against the category, check channels and webhooks, and write
  the listing and its ``listing.submitted`` outbox event in one transaction; the event is
  turned into an approval task (:mod:`chalicelib.approvals`).
* Only ACTIVE listings are visible to others; owners see their own in any status.
* Pause: ACTIVE -> PAUSED; resume: PAUSED -> ACTIVE; anything else is a ``Conflict``
  (the machine: :mod:`chalicelib.listings.status`).

The rules reach storage and the other domains through :data:`DEFAULT_PORTS`
(:mod:`chalicelib.listings.ports`); the unit tests replace them with :func:`use_ports`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.blocks import api as blocks
from chalicelib.categories.models import Category, CategoryField, FieldType
from chalicelib.categories.registry import all_categories
from chalicelib.edge.conditional import check_version
from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import PageQuery
from chalicelib.kernel.ports import Seam
from chalicelib.kernel.text import words
from chalicelib.listings import repository, status, status_history
from chalicelib.listings.meta import InvalidValue, parse_value, validate_meta
from chalicelib.listings.models import (
    Listing,
    ListingCreate,
    ListingStatusChange,
    ListingUpdate,
    MyListingPage,
    MyListingsFilter,
)
from chalicelib.listings.ports import Ports
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.status import Transition
from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import ConditionFailed, TransactionConflict
from chalicelib.users import api as users
from chalicelib.users.records import UserRecord
from chalicelib.users.service import active_channels, require_connected, summary_fields
from chalicelib.webhooks import api as webhooks

#: Field types whose words ``q`` searches (DESIGN §2 "Search": title and text fields).
SEARCHED_TYPES = {FieldType.TEXT, FieldType.RICHTEXT, FieldType.LOCATION}

#: The real repository and domains; mypy checks here that each module satisfies its port.
DEFAULT_PORTS = Ports(repository=repository, users=users, webhooks=webhooks, blocks=blocks)
_seam = Seam(DEFAULT_PORTS)
#: ``use_ports(replacement)``: the service reads and writes through ``replacement``; returns the
#: ports it replaced (:meth:`chalicelib.kernel.ports.Seam.use`).
use_ports = _seam.use


def _require_owner(user_id: str) -> UserRecord:
    user = _seam.ports.users.get_user(user_id)
    if user is None:
        raise errors.NotFound(f"User '{user_id}' not found")
    return user


def _owner_fields(user: UserRecord | None, user_id: str) -> dict[str, Any]:
    """The owner summary's fields as plain data, validated once by the model that holds them."""
    return {"userId": user_id} if user is None else {"userId": user_id, **summary_fields(user)}


def to_model[ViewT: Listing](
    item: ListingRecord, owner: UserRecord | None, owner_view: bool = False, model: type[ViewT] = Listing,  # type: ignore[assignment]
    **extra: Any,
) -> ViewT:
    """The API view of a listing item; ``webhookIds`` only in the owner's view (``owner_view``).

    ``model``: a subclass of :class:`Listing` to build instead, its own fields given in
    ``extra``. One validation per item, the owner summary (and its social links) included.
    """
    return model.model_validate({**extra, **view_fields(item, owner, owner_view)})


def offered_channels(item: ListingRecord, owner: UserRecord | None) -> list[str]:
    """The listing's ``channels`` that its owner has connected now, in the listing's order.

    A listing keeps the channels it was given; a channel its owner has disconnected since is left
    out of every view (and shows again once reconnected), read from the owner item the view
    reads for the profile summary anyway, so no read is added (docs/decisions.md "Listings").

    Parameters
    ----------
    item:
        The listing item (``channels``).
    owner:
        The owner's user item (``channels``); ``None`` when the owner is gone, which offers none.

    Returns
    -------
    list[str]
        The stored channel keys the owner has connected.
    """
    connected = set(active_channels(owner)) if owner is not None else set()
    return [c for c in item.get("channels") or [] if c in connected]


def view_fields(item: ListingRecord, owner: UserRecord | None, owner_view: bool = False) -> dict[str, Any]:
    """The fields of :class:`Listing` for a listing item, as plain data for a model that holds
    many listings to validate in one pass (a search page: 20 to 100 listings validated by one
    ``ListingPage.model_validate``, not one model each; docs/search.md, "Cheap pages").

    ``channels`` are :func:`offered_channels`: only those ``owner`` has connected.
    """
    return {
        "id": item["listingId"],
        "title": item["title"],
        "categoryKey": item["categoryKey"],
        "roleKey": item["roleKey"],
        "meta": item.get("meta") or {},
        "channels": offered_channels(item, owner),
        "webhookIds": (item.get("webhookIds") or []) if owner_view else None,
        "status": item["status"],
        "statusReason": item.get("statusReason"),
        "statusHistory": list(item.get("statusHistory") or []) if owner_view else None,
        "profile": _owner_fields(owner, item["ownerId"]),
        "createdAt": item["createdAt"],
        "updatedAt": item["updatedAt"],
    }


def search_text(category: Category, meta: dict[str, str]) -> str:
    """The folded, de-duplicated words of the searched fields, space separated (``q`` matches word prefixes)."""
    found: dict[str, None] = {}
    for field in category.fields:
        if field.type in SEARCHED_TYPES and field.key in meta:
            found.update(dict.fromkeys(words(meta[field.key])))
    return " ".join(found)


def _category_and_role(category_key: str, role_key: str) -> Category:
    category = all_categories().get(category_key)
    if category is None:
        raise errors.RuleViolation.for_field(
            "categoryKey", f"unknown category; use one of {', '.join(all_categories())}"
        )
    if category.role(role_key) is None:
        raise errors.RuleViolation.for_field(
            "roleKey", f"unknown role for category '{category_key}'; use one of {', '.join(r.key for r in category.roles)}"
        )
    return category


def _check_webhooks(owner_id: str, webhook_ids: list[str]) -> list[str]:
    unique = list(dict.fromkeys(webhook_ids))
    found = _seam.ports.webhooks.get_many(unique) if unique else {}
    foreign = [w for w in unique if w not in found or found[w]["ownerId"] != owner_id]
    if foreign:
        raise errors.RuleViolation.for_field("webhookIds", f"not webhooks of yours: {', '.join(foreign)}")
    return unique


def _submitted_event(listing_id: str, version: int) -> TransactItem:
    return outbox.event_op(outbox.LISTING_SUBMITTED, {"listingId": listing_id, "version": version})


def create_listing(caller: Caller, body: ListingCreate) -> Listing:
    """Create a PENDING listing and queue it for approval (one transaction with its event).

    Raises
    ------
    RuleViolation
        Unknown category or role, invalid meta, channels not connected by the caller
        (``details`` field ``channels``), or webhook ids that are not the caller's.
    """
    category = _category_and_role(body.categoryKey, body.roleKey)
    meta = validate_meta(category, body.roleKey, body.meta)
    owner = _require_owner(caller.user_id)
    channels = require_connected(owner, body.channels, "channels")
    webhook_ids = _check_webhooks(caller.user_id, body.webhookIds)
    now = clock.iso()
    listing_id = clock.new_id("lst")
    pending = _seam.ports.repository.pending_attributes(listing_id, now)
    item: ListingRecord = {
        "listingId": listing_id,
        "ownerId": caller.user_id,
        "categoryKey": category.key,
        "roleKey": body.roleKey,
        "title": meta["title"],
        "meta": meta,
        "channels": channels,
        "webhookIds": webhook_ids,
        "status": status.INITIAL,
        "version": 1,
        "searchText": search_text(category, meta),
        "createdAt": now,
        "updatedAt": now,
        "pendingQueue": pending["pendingQueue"],
        "pendingSort": pending["pendingSort"],
        "statusHistory": [status_history.entry(status.INITIAL, now)],
    }
    _seam.ports.repository.create(item, [_submitted_event(listing_id, 1)])
    return to_model(item, owner, owner_view=True)


def owned(caller: Caller, listing_id: str) -> ListingRecord:
    """The listing item if the caller owns it.

    Raises
    ------
    NotFound
        No such listing, or another user's listing that is not public to the caller
        (:func:`public_to`, :func:`chalicelib.kernel.errors.not_owner`).
    Forbidden
        Another user's listing that is public to the caller.
    """
    item = _seam.ports.repository.get(listing_id)
    if item is None:
        raise errors.not_found("Listing", listing_id)
    if item["ownerId"] != caller.user_id:
        raise errors.not_owner("Listing", listing_id, public_to(caller.user_id, item), "Only the listing's owner may change it")
    return item


def public_to(user_id: str, item: ListingRecord) -> bool:
    """Whether another user's listing ``item`` is visible to ``user_id`` as to anyone: ACTIVE, and
    no block stands between ``user_id`` and its owner (a block hides each side's listings from
    the other, as a missing listing). Reads the user's block set (cached per process)."""
    return status.is_public(item["status"]) and item["ownerId"] not in _seam.ports.blocks.hidden_from(user_id)


def get_visible(caller: Caller, listing_id: str) -> ListingRecord:
    """The listing item if the caller may see it: ACTIVE, or the caller's own.

    Raises
    ------
    NotFound
        No such listing, or another user's listing that is not ACTIVE.
    """
    item = _seam.ports.repository.get(listing_id)
    if item is None or not status.is_visible(item["status"], item["ownerId"], caller.user_id):
        raise errors.not_found("Listing", listing_id)
    return item


def list_my_listings(caller: Caller, page: PageQuery) -> MyListingPage:
    """The caller's listings in every status, newest first (ties in ``createdAt`` by id, descending).

    Reads only the page: with a cursor, ``pageSize + 1`` index items right after the cursor's
    position; with ``page=N`` alone, the ``(N - 1) x pageSize`` newer listings first. ``total``
    is the owner's listing counter (:mod:`chalicelib.listings.owner_list`), read in the same
    BatchGetItem as the owner's summary: two DynamoDB calls whatever the number of listings.

    Raises
    ------
    RuleViolation
        ``cursor`` malformed, edited or from another query (field ``cursor``).
    """
    position = page.position_in("listings.mine", caller.user_id)
    skip = position.offset if position.key is None else 0
    items, last_key = _seam.ports.repository.owner_page(caller.user_id, position.page_size, after=position.key, skip=skip)
    if items:
        owner, total = _seam.ports.repository.owner_with_total(caller.user_id)
    else:
        owner, total = None, _seam.ports.repository.owner_total(caller.user_id)
    return MyListingPage(
        listings=[to_model(i, owner, owner_view=True) for i in items], total=total, page=position.page,
        pageSize=position.page_size, nextCursor=position.next_cursor(last_key is not None, last_key),
    )


def filter_my_listings(caller: Caller, query: MyListingsFilter) -> tuple[list[Listing], str | None]:
    """A page of the caller's listings with ``query.status`` and every word of ``query.q`` in the
    title (case-insensitive), newest first, and the cursor of the next page (``None``: no more).

    Without a filter this is :func:`list_my_listings`' page. With one, it reads the owner's list
    until the page is full, the list ends or ``chalicelib.listings.repository.FILTER_BUDGET`` listings were examined
    (then the cursor continues from there, possibly to an empty page), and one BatchGetItem of the
    owner's summary.

    Raises
    ------
    RuleViolation
        ``cursor`` malformed, edited, or from another filter (field ``cursor``).
    """
    position = query.position_in("listings.mine.filtered", caller.user_id)
    wanted = (query.q or "").casefold().split()

    def keep(item: ListingRecord) -> bool:
        title = str((item.get("meta") or {}).get("title") or "").casefold()
        return (query.status is None or item.get("status") == query.status) and all(w in title for w in wanted)

    items, last_key = _seam.ports.repository.owner_page_matching(caller.user_id, position.page_size, keep, after=position.key)
    owner = _seam.ports.repository.owner_with_total(caller.user_id)[0] if items else None
    return [to_model(i, owner, owner_view=True) for i in items], position.next_cursor(last_key is not None, last_key)


def update_listing(caller: Caller, listing_id: str, body: ListingUpdate, expected_version: int | None = None) -> Listing:
    """Apply a PATCH: merge meta, replace channels/webhookIds; a changed ``meta`` sends the listing back
    to PENDING and re-queues it for approval (spec §3 state table: "meta updated -> PENDING").

    Only what the body gives is checked: ``channels`` and ``webhookIds`` when given (each channel
    connected by the caller, each webhook the caller's); when not given, the stored lists are kept
    unchecked, so a channel disconnected or a webhook deleted since never fails a PATCH of
    something else.

    A PATCH that leaves ``meta`` as stored (only ``channels`` and/or ``webhookIds``, or meta values
    equal to the stored ones) keeps the listing's status: it is a binding change, not new
    content to review (docs/decisions.md "Listings"). A PATCH that changes nothing at all writes
    nothing: the listing, its ``version`` (ETag) and ``updatedAt`` stay, and no review is queued.

    ``expected_version`` (``If-Match``, :mod:`chalicelib.edge.conditional`) applies the change only to
    that version; the write is conditional on the version read either way (412 otherwise).

    Raises
    ------
    NotFound, Forbidden
        No such listing; not the caller's.
    RuleViolation
        As for create, for the fields the body gives.
    Conflict
        The listing changed concurrently (retry with the new state).
    """
    item = owned(caller, listing_id)
    check_version(int(item["version"]), expected_version)
    category = _category_and_role(item["categoryKey"], item["roleKey"])
    meta = validate_meta(category, item["roleKey"], _merged_meta(category, item.get("meta") or {}, body.meta or {}))
    owner = _require_owner(caller.user_id)
    # Only the lists the body gives are checked: stored ones stay as they are, a channel disconnected
    # or a webhook deleted since included (views leave such a channel out; such an id matches nothing).
    channels = list(item.get("channels") or []) if body.channels is None else require_connected(owner, body.channels, "channels")
    webhook_ids = list(item.get("webhookIds") or []) if body.webhookIds is None else _check_webhooks(caller.user_id, body.webhookIds)
    version = int(item["version"])
    if _same_content(category, meta, item.get("meta") or {}):
        if channels == list(item.get("channels") or []) and webhook_ids == list(item.get("webhookIds") or []):
            return to_model(item, owner, owner_view=True)  # nothing changes: nothing is written, the ETag stays
        return _rebind(item, owner, channels, webhook_ids, expected_version)
    updated: ListingRecord = {
        **item, "title": meta["title"], "meta": meta, "channels": channels, "webhookIds": webhook_ids,
        "searchText": search_text(category, meta), "updatedAt": clock.iso(), "status": status.target(Transition.SUBMIT),
        "version": version + 1,
    }
    updated.pop("statusReason", None)
    try:
        updated["statusHistory"] = _seam.ports.repository.resubmit(item, updated, [_submitted_event(listing_id, version + 1)])
    except TransactionConflict as exc:
        raise _changed_meanwhile(expected_version) from exc
    return to_model(updated, owner, owner_view=True)


def _merged_meta(category: Category, stored: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``stored`` meta with a PATCH's ``patch`` merged in (a ``None`` value removes the key).

    A changed address field drops its stored ``<key>_lat``/``<key>_lng`` unless the PATCH gives
    new ones: the old coordinates belong to the old address (geocoded again on save). The address
    is compared as it would be stored (:func:`chalicelib.listings.meta.parse_value`: "Berlin " is
    "Berlin", no change).
    """
    merged = {**stored, **{k: v for k, v in patch.items() if v is not None}}
    addresses = {f.key: f for f in category.location_fields()}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        if key in addresses and _stored_form(addresses[key], value) != stored.get(key):
            for axis in ("lat", "lng"):
                if f"{key}_{axis}" not in patch:
                    merged.pop(f"{key}_{axis}", None)
    return merged


def _same_content(category: Category, meta: Mapping[str, str], stored: Mapping[str, str]) -> bool:
    """Whether validated ``meta`` says what ``stored`` says: the same keys and values, a
    multiselect's options compared as a set ("b,a" chooses what "a,b" does)."""
    if meta.keys() != stored.keys():
        return False
    kinds = {f.key: f.type for f in category.fields}
    return all(
        set(value.split(",")) == set(stored[key].split(",")) if kinds.get(key) == FieldType.MULTISELECT else value == stored[key]
        for key, value in meta.items()
    )


def _stored_form(field: CategoryField, value: str | None) -> str | None:
    """``value`` of ``field`` as it would be stored (``None`` when removed, or when it does not
    parse: :func:`validate_meta` reports it)."""
    if value is None:
        return None
    try:
        return parse_value(field, value)
    except InvalidValue:
        return None


def _changed_meanwhile(expected_version: int | None) -> errors.DomainError:
    """The error of a listing write whose version condition failed: 412 when the caller sent
    ``If-Match`` (the version read matched it; the write saw another one), else 409 to retry."""
    if expected_version is not None:
        return errors.PreconditionFailed("The listing changed while you were updating it; read it again")
    return errors.Conflict("The listing changed while you were updating it; read it again and retry")


def _rebind(item: ListingRecord, owner: UserRecord, channels: list[str], webhook_ids: list[str],
            expected_version: int | None) -> Listing:
    """Write new ``channels``/``webhookIds`` of an unchanged listing: status kept, version + 1, no new review.

    A PENDING listing's queued approval task names the version it was queued for (stale tasks are
    dropped when claimed, :mod:`chalicelib.approvals.service`), so a PENDING listing gets a
    ``listing.submitted`` event for its new version in the same transaction: it stays in the queue.

    Raises
    ------
    PreconditionFailed, Conflict
        The listing changed since it was read (with or without ``If-Match``).
    """
    version = int(item["version"])
    updated: ListingRecord = {**item, "channels": channels, "webhookIds": webhook_ids, "updatedAt": clock.iso(),
                              "version": version + 1}
    event = [_submitted_event(item["listingId"], version + 1)] if status.awaiting_review(item["status"]) else []
    try:
        _seam.ports.repository.rebind(updated, version, event)
    except TransactionConflict as exc:
        raise _changed_meanwhile(expected_version) from exc
    return to_model(updated, owner, owner_view=True)


def change_status(
    caller: Caller, listing_id: str, body: ListingStatusChange, expected_version: int | None = None
) -> Listing:
    """Pause an ACTIVE listing or resume a PAUSED one.

    ``expected_version`` (``If-Match``) applies the change only to that version, atomically. A
    resume holds a check that the owner is not suspended (as an approval does): a suspension
    that commits while the request is in flight refuses it, so its listings stay paused.

    Raises
    ------
    Forbidden
        A resume, and the owner was suspended meanwhile.
    Conflict
        Any other transition (e.g. pausing a PENDING listing), or another change of the listing
        raced this one (its status history changed meanwhile: retry).
    PreconditionFailed
        The listing is not at ``expected_version`` (412).
    """
    item = owned(caller, listing_id)
    check_version(int(item["version"]), expected_version)
    at_version = int(item["version"]) if expected_version is not None else None
    change = status.owner_transition(body.status)
    owner_check = [_seam.ports.users.not_suspended_op(caller.user_id)] if change == Transition.RESUME else []
    try:
        updated = _seam.ports.repository.transition(item, change, clock.iso(), version=at_version, extra=owner_check)
    except ConditionFailed as exc:
        current = _seam.ports.repository.get(listing_id)
        if current is None:  # deleted since it was read: not a state conflict
            raise errors.not_found("Listing", listing_id) from exc
        owner = _seam.ports.users.get_user(caller.user_id) if owner_check else None
        if owner is not None and users.is_suspended(owner):
            raise errors.Forbidden("The account is suspended: its listings stay paused") from exc
        if at_version is not None and int(current["version"]) != at_version:
            raise errors.PreconditionFailed("The listing changed meanwhile; read it again") from exc
        if item["status"] == current["status"] and status.may_start(change, item["status"]):  # another change raced it
            raise errors.Conflict("The listing changed while you were changing its status; retry") from exc
        raise errors.Conflict(  # the status now, which another change may have set since the read
            f"Cannot change status from {current['status']} to {body.status}; "
            "only ACTIVE -> PAUSED and PAUSED -> ACTIVE are allowed"
        ) from exc
    return to_model(updated, _seam.ports.users.get_user(caller.user_id), owner_view=True)
