"""Listings, their incoming requests, and conversations: the owner's pages over the API's services."""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any

from chalice.app import Response

from chalicelib.dashboard.web import Page, page
from chalicelib.http import parse_model
from chalicelib.lazy import lazy_import

# The domains' modules load with the first page that uses them, not at the API's cold start.
if TYPE_CHECKING:
    from chalicelib import pagination
    from chalicelib.conversations import models as conversation_models
    from chalicelib.conversations import service as conversations
    from chalicelib.listings import models as listing_models
    from chalicelib.listings import service as listings
    from chalicelib.match_requests import models as request_models
    from chalicelib.match_requests import service as match_requests
    from chalicelib.pagination import Envelope, PageQuery
    from chalicelib.workflows import listing_deletion, listing_detail, request_decisions
else:
    pagination = lazy_import("chalicelib.pagination")
    conversation_models = lazy_import("chalicelib.conversations.models")
    conversations = lazy_import("chalicelib.conversations.service")
    listing_models = lazy_import("chalicelib.listings.models")
    listings = lazy_import("chalicelib.listings.service")
    request_models = lazy_import("chalicelib.match_requests.models")
    match_requests = lazy_import("chalicelib.match_requests.service")
    listing_deletion = lazy_import("chalicelib.workflows.listing_deletion")
    listing_detail = lazy_import("chalicelib.workflows.listing_detail")
    request_decisions = lazy_import("chalicelib.workflows.request_decisions")

NOTICES = {
    "paused": "Listing paused: it no longer appears in search.",
    "resumed": "Listing resumed: it appears in search again.",
    "deleted": "Listing deleted.",
    "accepted": "Request accepted: a conversation was opened.",
    "rejected": "Request rejected.",
    "sent": "Message sent.",
}


def _first_page() -> PageQuery:
    """The first page of the largest size (every list of a Dashboard page shows one such page)."""
    return pagination.PageQuery(page=1, pageSize=pagination.MAX_PAGE_SIZE)


def _paged_query[Q: PageQuery](current: Page, model: type[Q]) -> Q:
    """The list query of a paged Dashboard page: ``pageSize`` (default and at most 100) and the
    ``cursor`` of the API's envelope (``nextCursor``), both from the query string.

    Raises
    ------
    ValidationError
        ``pageSize`` out of 1..100, or a cursor that is not this list's (the page shows 400).
    """
    values = {"pageSize": current.query("pageSize") or str(pagination.MAX_PAGE_SIZE), "cursor": current.query("cursor") or None}
    return parse_model(model, {k: v for k, v in values.items() if v is not None})


def _paged(current: Page, path: str, templates: tuple[str, str], found: Envelope, count: int, **context: Any) -> Response:
    """Render one page of a paged list, as the whole page or, for htmx's "Load more", only its items.

    Parameters
    ----------
    path:
        The page's path under the Dashboard (``/listings``), for the next page's link.
    templates:
        ``(whole page, items fragment)``.
    found, count:
        The service's envelope and how many items it holds.

    A plain request (the link followed without JavaScript) gets the whole page starting at the
    cursor; an htmx request (``HX-Request: true``) gets the fragment: the page's items and the
    next "Load more" control, swapped in place of the old control, with the first new item's
    link focused (``autofocus``) and the count above the list updated out of band. ``Vary``
    keeps caches from mixing the two answers of one URL.
    """
    first = (found.page - 1) * found.pageSize + 1
    more = None
    if found.nextCursor:
        more = f"{current.root}{path}?" + urllib.parse.urlencode({"pageSize": found.pageSize, "cursor": found.nextCursor})
    htmx = current.request.headers.get("hx-request") == "true"
    shown = {"first": 1 if htmx else first, "last": first + count - 1, "total": found.total}
    response = current.render(templates[1] if htmx else templates[0], more=more, shown=shown, fragment=htmx, **context)
    response.headers["Vary"] = "HX-Request"
    return response


@page("/dashboard/listings")
def my_listings(current: Page) -> Response:
    """The signed-in user's listings with statuses and status reasons, a page at a time (newest first)."""
    found = listings.list_my_listings(current.caller, _paged_query(current, pagination.PageQuery))
    return _paged(current, "/listings", ("listings.html", "listings_items.html"), found, len(found.listings),
                  nav="listings", listings=found.listings, notice=NOTICES.get(current.query("done")))


def _status(current: Page, listing_id: str, status: str) -> None:
    listings.change_status(current.caller, listing_id, parse_model(listing_models.ListingStatusChange, {"status": status}))


@page("/dashboard/listings/{listingId}/pause", "POST")
def pause(current: Page, listingId: str) -> Response:
    """ACTIVE -> PAUSED (the API's rule: 409 from any other status)."""
    _status(current, listingId, "PAUSED")
    return current.redirect("/listings?done=paused")


@page("/dashboard/listings/{listingId}/resume", "POST")
def resume(current: Page, listingId: str) -> Response:
    """PAUSED -> ACTIVE."""
    _status(current, listingId, "ACTIVE")
    return current.redirect("/listings?done=resumed")


@page("/dashboard/listings/{listingId}/delete", "POST")
def delete(current: Page, listingId: str) -> Response:
    """Delete the listing (its pending requests are rejected, as through the API)."""
    listing_deletion.delete_listing(current.caller, listingId)
    return current.redirect("/listings?done=deleted")


@page("/dashboard/listings/{listingId}")
def listing(current: Page, listingId: str) -> Response:
    """One of the user's listings and its incoming requests."""
    detail = listing_detail.get_listing_detail(current.caller, listingId)
    query = request_models.ListingRequestQuery(page=1, pageSize=pagination.MAX_PAGE_SIZE)
    requests = match_requests.list_for_listing(current.caller, listingId, query)
    return current.render("listing.html", nav="listings", listing=detail, requests=requests.requests,
                          notice=NOTICES.get(current.query("done")))


def _decide(current: Page, request_id: str, status: str) -> str:
    reason = current.field("reason").strip() or None
    change: dict[str, str] = {"status": status} if reason is None else {"status": status, "reason": reason}
    decided = request_decisions.decide(current.caller, request_id, parse_model(request_models.StatusChange, change))
    return f"/listings/{decided.listingId}" if decided.listingId else "/listings"


@page("/dashboard/requests/{requestId}/accept", "POST")
def accept(current: Page, requestId: str) -> Response:
    """Accept a PENDING request addressed to the user (opens a conversation)."""
    return current.redirect(_decide(current, requestId, "ACCEPTED") + "?done=accepted")


@page("/dashboard/requests/{requestId}/reject", "POST")
def reject(current: Page, requestId: str) -> Response:
    """Reject a PENDING request, with the optional "Reason"."""
    return current.redirect(_decide(current, requestId, "REJECTED") + "?done=rejected")


@page("/dashboard/conversations")
def conversation_list(current: Page) -> Response:
    """The user's conversations, most recently active first, a page at a time."""
    found = conversations.list_conversations(current.caller, _paged_query(current, conversation_models.ConversationListQuery))
    return _paged(current, "/conversations", ("conversations.html", "conversations_items.html"), found,
                  len(found.conversations), nav="conversations", conversations=found.conversations, me=current.caller.user_id)


@page("/dashboard/conversations/{conversationId}")
def conversation(current: Page, conversationId: str) -> Response:
    """One conversation: its latest messages (oldest first) and the reply box."""
    found = conversations.get_conversation(current.caller, conversationId)
    first = conversations.list_messages(current.caller, conversationId, _first_page())
    last_page = max(1, -(-first.total // pagination.MAX_PAGE_SIZE))
    messages = first if last_page == 1 else conversations.list_messages(
        current.caller, conversationId, pagination.PageQuery(page=last_page, pageSize=pagination.MAX_PAGE_SIZE)
    )
    return current.render("conversation.html", nav="conversations", conversation=found, messages=messages.messages,
                          me=current.caller.user_id, notice=NOTICES.get(current.query("done")))


@page("/dashboard/conversations/{conversationId}/messages", "POST")
def send(current: Page, conversationId: str) -> Response:
    """Send a message (1..4000 characters, the API's rules)."""
    body = parse_model(conversation_models.MessageCreate, {"content": current.field("content")})
    conversations.send_message(current.caller, conversationId, body.content, via_api=False)
    return current.redirect(f"/conversations/{conversationId}?done=sent")
