"""Request rules: sending match and profile requests, and reading them.

* Match request: only to an ACTIVE listing (``NotFound`` otherwise, as for its detail), never
  to one's own (``Forbidden``), with channels the requester has connected (``RuleViolation``
  naming ``channels``).
* Profile request: the target's ``profileRequestPolicy`` must admit the caller (``Forbidden`` with its
  reason); ``channel`` must be one of the target's ``activeChannels`` and connected by the
  requester (``RuleViolation`` naming ``channel``).
* One request per requester and subject, ever: the id is derived from both
  (:mod:`chalicelib.match_requests.ids`) and written with ``attribute_not_exists``, so of any
  number of simultaneous identical requests exactly one is created; the others get ``Conflict``.
* Each create is one BatchGetItem plus one TransactWriteItems holding the request, the guard
  on the listing or profile (:func:`chalicelib.listings.api.count_request_op`,
  :func:`chalicelib.users.api.admits_profile_request_op`: their tables' owners build them), the list counters and the
  outbox event, built in one place for both kinds (:mod:`chalicelib.match_requests.request_transaction`),
  plus the requester's daily quota counter (``MATCH_REQUESTS_PER_DAY``, ``PROFILE_REQUESTS_PER_DAY``;
  :mod:`chalicelib.rate_limits`): only a request that is written counts, and none is written
  beyond the quota (429 ``RATE_LIMITED``).
* Lists are newest first (ties by request id); without ``subjectType`` they hold both kinds.
  Each list and filter is its own index (:mod:`chalicelib.match_requests.list_indexes`): a page reads
  ``pageSize + 1`` requests and one counter item, whatever the length of the history; every
  create and decision updates the counters in its own transaction, so ``total`` is exact.

The rules reach storage through :data:`DEFAULT_PORTS` (:mod:`chalicelib.match_requests.ports`);
the unit tests replace them with :func:`use_ports`.
"""

from __future__ import annotations

from typing import cast

from chalicelib.auth.service import Caller
from chalicelib.blocks import api as blocks
from chalicelib.edge.path_ids import within_limit
from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import PageQuery
from chalicelib.kernel.ports import Seam
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.listings import api as listings
from chalicelib.listings import service as listing_service
from chalicelib.listings import status as listing_status
from chalicelib.listings.records import ListingRecord
from chalicelib.match_requests import ids, repository, request_transaction
from chalicelib.match_requests.list_indexes import ListQuery, RequestList
from chalicelib.match_requests.models import (
    ListingRequestQuery,
    MatchRequest,
    MatchRequestCreate,
    ProfileRequestCreate,
    RequestListQuery,
    RequestPage,
    RequestStatus,
)
from chalicelib.match_requests.ports import Ports
from chalicelib.match_requests.profile_policy import evaluate
from chalicelib.match_requests.records import RequesterSnapshot, RequestRecord
from chalicelib.match_requests.repository import Bundle
from chalicelib.match_requests.request_transaction import Guard
from chalicelib.persistence.transactions import Transaction, TransactionConflict
from chalicelib.rate_limits import service as rate_limits
from chalicelib.rate_limits.service import Quota
from chalicelib.users import api as users
from chalicelib.users.records import UserRecord
from chalicelib.users.service import active_channels, require_connected, summary_from_item

#: The real repository and commit; mypy checks here that the repository module satisfies its port.
DEFAULT_PORTS = Ports(repository=repository, commit=Transaction.commit)
_seam = Seam(DEFAULT_PORTS)
#: ``use_ports(replacement)``: the service reads and writes through ``replacement``; returns the
#: ports it replaced (:meth:`chalicelib.kernel.ports.Seam.use`).
use_ports = _seam.use


def to_model(item: RequestRecord) -> MatchRequest:
    """The API view of a request item."""
    # Every field has the stored attribute's name; absent optional attributes are ``None``.
    return MatchRequest.model_validate({
        **item,
        "profile": summary_from_item(item.get("profile") or {}),
        "channels": list(item.get("channels") or []),
        "message": item.get("message", ""),
    })


def _page(query: PageQuery, route: str, scope_id: str, wanted: ListQuery, total: int | None = None) -> RequestPage:
    """The page of list ``wanted`` that ``query`` asks for, with the exact total and the next cursor.

    With a cursor the page starts right after the cursor's key (reads ``pageSize + 1`` index
    items); with ``page=N`` alone it passes over the ``(N - 1) x pageSize`` newer requests
    first. ``total`` is one counter read unless the caller read it already (``total``).
    """
    position = query.position_in(route, scope_id)
    skip = position.offset if position.key is None else 0
    items, last_key = _seam.ports.repository.list_page(wanted, position.page_size, after=position.key, skip=skip)
    return RequestPage(
        requests=[to_model(i) for i in items], total=_seam.ports.repository.list_total(wanted) if total is None else total,
        page=position.page, pageSize=position.page_size, nextCursor=position.next_cursor(last_key is not None, last_key),
    )


def _requester(bundle: Bundle, caller: Caller) -> UserRecord:
    user = bundle.users.get(caller.user_id)
    if user is None:
        raise errors.NotFound("Your user record no longer exists")
    return user


def _new_item(caller: Caller, requester: UserRecord, subject_type: SubjectType, subject_id: str,
              recipient_id: str, channels: list[str], message: str) -> RequestRecord:
    return {
        "requestId": ids.request_id(subject_type, caller.user_id, subject_id),
        "subjectType": subject_type,
        "subjectId": subject_id,
        "requesterId": caller.user_id,
        "recipientId": recipient_id,
        "status": RequestStatus.PENDING,
        "profile": cast(RequesterSnapshot, summary_from_item(requester).model_dump(mode="json")),
        "channels": channels,
        "message": message,
        "createdAt": clock.iso(),
    }


def _send(
    item: RequestRecord, guard: Guard, listing: ListingRecord | None, *, quota: Quota, duplicate: str, guard_failed: errors.DomainError
) -> MatchRequest:
    """Commit a new PENDING request (:func:`request_transaction.request_write`: request, guard, counters, event)
    with the requester's daily ``quota`` counter in the same transaction.

    Parameters
    ----------
    item:
        The new request (:func:`_new_item` plus its subject's attributes).
    guard:
        The condition on its listing or profile, re-checking at commit what the caller read.
    listing:
        The listing item of a match request (the event's title and webhook ids), else ``None``.
    duplicate:
        The message of the ``Conflict`` when the caller already sent this request (the
        ``requestId`` is appended).
    guard_failed:
        The error raised when ``guard``'s condition fails.

    Raises
    ------
    Blocked
        A block stands between the requester and the recipient (checked in the same transaction).
    Conflict
        The request exists already (one per requester and subject, ever).
    RateLimited
        The requester made ``quota``'s daily number of such requests already (nothing written).
    DomainError
        ``guard_failed``.
    """
    tx = request_transaction.request_write(_seam.ports.repository.put_new_op(item), item, None, guard, listing)
    tx.add("block", blocks.not_blocked_op(item["requesterId"], item["recipientId"]))
    rate_limits.count(tx, item["requesterId"], quota)
    try:
        _seam.ports.commit(tx)
    except TransactionConflict as exc:
        if exc.failed("block"):
            raise _blocked_error() from exc
        if exc.failed("request"):
            raise errors.Conflict(f"{duplicate} (requestId '{item['requestId']}')") from exc
        if exc.failed(rate_limits.TRANSACTION_ITEM):
            raise rate_limits.quota_exceeded(quota) from exc
        raise guard_failed from exc
    return to_model(item)


def _blocked_error() -> errors.Blocked:
    return errors.Blocked("You cannot send requests to this user")


def create_match_request(caller: Caller, body: MatchRequestCreate) -> MatchRequest:
    """Send a match request about an ACTIVE listing (status PENDING, event ``match_request.received``).

    Raises
    ------
    NotFound
        No such listing, or it is not ACTIVE (also when it stops being ACTIVE meanwhile).
    Forbidden
        The listing is the caller's own.
    RuleViolation
        A channel the caller has not connected (``details`` field ``channels``).
    Conflict
        The caller already sent a request about this listing.
    RateLimited
        The caller sent ``MATCH_REQUESTS_PER_DAY`` match requests this UTC day already.
    """
    bundle = _seam.ports.repository.read_bundle(user_ids=[caller.user_id], listing_ids=[body.listingId])
    listing = bundle.listings.get(body.listingId)
    if listing is not None and listing["ownerId"] == caller.user_id:
        raise errors.Forbidden("You cannot send a match request to your own listing")
    if listing is None or not listing_status.accepts_requests(listing["status"]):
        raise errors.NotFound(f"Listing '{body.listingId}' not found or not accepting requests")
    requester = _requester(bundle, caller)
    channels = require_connected(requester, [c.value for c in body.channels], "channels")
    item = _new_item(caller, requester, SubjectType.LISTING, listing["listingId"], listing["ownerId"], channels, body.message)
    item["listingId"], item["listingTitle"] = listing["listingId"], listing["title"]
    return _send(
        item, Guard("listing", listings.count_request_op(listing["listingId"])), listing, quota=Quota.MATCH_REQUESTS,
        duplicate="You already sent a match request for this listing",
        guard_failed=errors.NotFound(f"Listing '{body.listingId}' not found or not accepting requests"),
    )


def create_profile_request(caller: Caller, body: ProfileRequestCreate) -> MatchRequest:
    """Send a profile request (status PENDING, event ``profile_request.received``).

    Raises
    ------
    NotFound
        No such user, or the user's account is being erased or is suspended.
    Forbidden
        ``profileRequestPolicy`` does not admit the caller (the message is its ``reason``).
    RuleViolation
        ``channel`` is not one of the target's ``activeChannels`` or not connected by the
        caller (``details`` field ``channel``).
    Conflict
        The caller already sent this user a request, or the user's policy or channels
        changed while the request was being written (read the profile again).
    RateLimited
        The caller sent ``PROFILE_REQUESTS_PER_DAY`` profile requests this UTC day already.
    """
    bundle = _seam.ports.repository.read_bundle(user_ids=[body.userId, caller.user_id])
    target = bundle.users.get(body.userId)
    if target is None or target.get("erasure") is not None or users.is_suspended(target):
        raise errors.NotFound(f"User '{body.userId}' not found")  # an account being erased or suspended takes none
    requester = _requester(bundle, caller)
    level = int(requester.get("verifiedLevel", 0))
    policy = evaluate(target, caller.user_id, level)
    if not policy.canRequest:
        raise errors.Forbidden(policy.reason or "You cannot send this user a profile request")
    channel = body.channel.value
    if channel not in active_channels(target):
        raise errors.RuleViolation.for_field(
            "channel", f"not one of the user's activeChannels ({', '.join(active_channels(target))})"
        )
    require_connected(requester, [channel], "channel")
    item = _new_item(caller, requester, SubjectType.PROFILE, body.userId, body.userId, [channel], body.message)
    item["userId"] = body.userId
    return _send(
        item, Guard("profile", users.admits_profile_request_op(body.userId, level, channel)), None, quota=Quota.PROFILE_REQUESTS,
        duplicate="You already sent this user a profile request",
        guard_failed=errors.Conflict("The user's request policy or channels changed meanwhile; read the profile again"),
    )


def get_request(caller: Caller, request_id: str) -> MatchRequest:
    """One request, for its requester or its recipient.

    Raises
    ------
    NotFound
        No such request, or the caller is neither its requester nor its recipient.
    """
    item = _seam.ports.repository.get(request_id) if ids.subject_of(request_id) else None
    if item is None or caller.user_id not in (item["requesterId"], item["recipientId"]):
        raise errors.NotFound(f"Request '{request_id}' not found")
    return to_model(item)


def list_sent(caller: Caller, query: RequestListQuery) -> RequestPage:
    """The caller's sent requests (both kinds unless ``subjectType``, any status unless ``status``), newest first.

    One Query of the matching list index (``pageSize + 1`` items) and one counter read.
    """
    return _own_page(caller, query, RequestList.SENT, "requests.mine")


def list_received(caller: Caller, query: RequestListQuery) -> RequestPage:
    """Requests addressed to the caller (both kinds unless ``subjectType``, any status unless ``status``), newest first.

    One Query of the matching list index (``pageSize + 1`` items) and one counter read.
    """
    return _own_page(caller, query, RequestList.RECEIVED, "requests.incoming")


def _own_page(caller: Caller, query: RequestListQuery, kind: RequestList, route: str) -> RequestPage:
    """A page of the caller's own list ``kind`` (sent or received) with the query's filters, scoped to ``route``."""
    subject = query.subjectType.value if query.subjectType else None
    status = query.status.value if query.status else None
    return _page(query, route, caller.user_id, ListQuery(kind, caller.user_id, subject, status))


def list_for_listing(caller: Caller, listing_id: str, query: ListingRequestQuery) -> RequestPage:
    """Requests about one of the caller's listings (any status unless ``status``), newest first.

    One BatchGetItem (the listing and the list's counter) and one Query of the listing's list
    index (``pageSize + 1`` items).

    Raises
    ------
    NotFound
        No such listing, or another user's listing not public to the caller (not ACTIVE, or a
        block between them: :func:`chalicelib.listings.service.public_to`).
    Forbidden
        Another user's listing public to the caller.
    """
    if not within_limit(listing_id):
        raise errors.not_found("Listing", listing_id)
    status = query.status.value if query.status else None
    wanted = ListQuery(RequestList.SUBJECT, listing_id, None, status)
    listing, total = _seam.ports.repository.listing_with_total(listing_id, wanted)
    if listing is None:
        raise errors.not_found("Listing", listing_id)
    if listing["ownerId"] != caller.user_id:
        public = listing_service.public_to(caller.user_id, listing)
        raise errors.not_owner("Listing", listing_id, public, "Only the listing's owner may see its requests")
    return _page(query, "listing.requests", f"{caller.user_id}|{listing_id}", wanted, total)
