"""Listings, their incoming requests, and conversations: the owner's pages over the API's services."""

from __future__ import annotations

from typing import Any

from chalice.app import Response

from chalicelib.dashboard import views_unread
from chalicelib.dashboard.web import Page, field_errors, is_htmx, page, page_status
from chalicelib.edge.http import parse_model
from chalicelib.kernel import errors
from chalicelib.kernel.lazy_imports import lazy_imports

# The domains' modules load with the first page that uses them, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.conversations import models as conversation_models
    from chalicelib.conversations import service as conversations
    from chalicelib.dashboard import content, paging
    from chalicelib.kernel import pagination
    from chalicelib.listings import models as listing_models
    from chalicelib.listings import service as listings
    from chalicelib.match_requests import models as request_models
    from chalicelib.match_requests import service as match_requests
    from chalicelib.users import api as users
    from chalicelib.webhooks import service as webhooks
    from chalicelib.workflows import conversation_context, listing_deletion, listing_detail, request_decisions

#: Listings per "My listings" page (a phone shows about one card per screen).
LISTINGS_PAGE_SIZE = 10
#: The status filter's choices.
STATUSES = ("PENDING", "ACTIVE", "PAUSED", "REJECTED")

NOTICES = {
    "paused": "Listing paused: it no longer appears in search.",
    "resumed": "Listing resumed: it appears in search again.",
    "deleted": "Listing deleted.",
    "accepted": "Request accepted: a conversation was opened.",
    "rejected": "Request rejected.",
    "sent": "Message sent.",
    "created": "Listing created: it is PENDING until an administrator approves it.",
    "resubmitted": "Listing saved: its content changed, so it is PENDING review again.",
    "saved": "Listing saved: its status is unchanged.",
    "webhooks": "Webhooks saved: the listing's status is unchanged.",
}


@page("/dashboard/listings")
def my_listings(current: Page) -> Response:
    """The signed-in user's listings with statuses and status reasons, a page at a time (newest first)."""
    status, q = current.query("status"), current.query("q").strip()
    if not status and not q:
        found = listings.list_my_listings(current.caller, paging.page_query(current, pagination.PageQuery, LISTINGS_PAGE_SIZE))
        return paging.forward(current, "/listings", ("listings.html", "listings_items.html"), found, len(found.listings),
                              nav="listings", listings=found.listings, notice=NOTICES.get(current.query("done")),
                              filters={"status": "", "q": ""}, statuses=STATUSES)
    query = parse_model(listing_models.MyListingsFilter, {
        "pageSize": current.query("pageSize") or str(min(LISTINGS_PAGE_SIZE, pagination.MAX_PAGE_SIZE)),
        "cursor": current.query("cursor") or None,
        "status": status or None, "q": q or None,
    })
    shown, cursor = listings.filter_my_listings(current.caller, query)
    first = paging.Shown(first=1, last=len(shown), total=0)  # the matches are not counted: no "of N"
    return paging.render(current, "/listings", ("listings.html", "listings_items.html"), cursor, query.pageSize,
                         first, nav="listings", listings=shown, notice=NOTICES.get(current.query("done")),
                         filters={"status": status, "q": q}, statuses=STATUSES, extra_query={"status": status, "q": q})


def _status(current: Page, listing_id: str, status: str) -> None:
    """Change the listing's status; one already at ``status`` (a second tab, a double click) is left
    as it is, as the person asked: only a move the state does not allow is a 409 page."""
    try:
        listings.change_status(current.caller, listing_id, parse_model(listing_models.ListingStatusChange, {"status": status}))
    except errors.Conflict:
        if listings.owned(current.caller, listing_id).get("status") != status:
            raise


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


@page("/dashboard/listings/{listingId}/delete")
def confirm_delete(current: Page, listingId: str) -> Response:
    """Confirmation page of "Delete listing" (a plain form: works without JavaScript)."""
    item = listings.owned(current.caller, listingId)  # 404 for an unknown or foreign id
    return current.render("confirm.html", nav="listings", heading="Delete this listing?", button="Delete listing",
                          subject=str(item.get("meta", {}).get("title") or listingId), danger=True,
                          explanation="It leaves search at once and its pending requests are rejected. This cannot be undone.",
                          action=f"{current.root}/listings/{listingId}/delete", back=f"{current.root}/listings")


@page("/dashboard/listings/{listingId}/delete", "POST")
def delete(current: Page, listingId: str) -> Response:
    """Delete the listing (its pending requests are rejected, as through the API)."""
    listing_deletion.delete_listing(current.caller, listingId)
    return current.redirect("/listings?done=deleted")


@page("/dashboard/listings/{listingId}")
def listing(current: Page, listingId: str) -> Response:
    """One of the user's listings: its content (every field by its type, rich text sanitized as on
    write, options by their labels, the location's place name), channels, status and times, its
    bound webhooks, and its incoming requests, newest first, a page at a time.

    The requests are ``match_requests.list_for_listing``'s page (the API's
    ``GET /v1/match-requests/listing/{id}``: one Query of the listing's request index after the
    signed cursor's position). htmx's "Load more" answer reads only that page: the service
    checks ownership itself, so the listing's detail is read for the whole page only.
    """
    return _listing_page(current, listingId)


def _listing_page(current: Page, listingId: str, status: int = 200, refused: dict[str, Any] | None = None) -> Response:
    """:func:`listing`'s page answered with ``status``; ``refused`` is a refused rejection of one of
    its requests: the ``request_id``, the ``reason`` typed, its ``error`` and the ``error_message``
    (:func:`reject`)."""
    query = paging.page_query(current, request_models.ListingRequestQuery)
    found = match_requests.list_for_listing(current.caller, listingId, query)
    detail = None if is_htmx(current.request) else listing_detail.get_listing_detail(current.caller, listingId)
    hooks = [] if detail is None else webhooks.list_webhooks(current.caller).webhooks
    shown = [] if detail is None else content.content_fields(detail.categoryKey, detail.roleKey, detail.meta)
    kind = "" if detail is None else content.kind_name(detail.categoryKey, detail.roleKey)
    return paging.forward(current, f"/listings/{listingId}", ("listing.html", "listing_requests_items.html"), found,
                          len(found.requests), nav="listings", listing=detail, requests=found.requests, hooks=hooks,
                          content=shown, kind=kind,
                          handles=conversation_context.requester_handles(found.requests),
                          notice=NOTICES.get(current.query("done")), status=status, refused=refused)


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
    """Reject a PENDING request, with the optional "Reason". A reason the API refuses (over 500
    characters, an invisible or bidirectional control character) shows the listing's page again
    (400) with the reason kept and its error under it, in the request's card; nothing is decided."""
    try:
        return current.redirect(_decide(current, requestId, "REJECTED") + "?done=rejected")
    except errors.RuleViolation as exc:
        found, _ = field_errors(exc, ["reason"])
        decided = match_requests.get_request(current.caller, requestId)  # 404 unless the caller takes part
        if "reason" not in found or decided.listingId is None:
            raise
        return _listing_page(current, decided.listingId, page_status(exc), {
            "request_id": requestId, "reason": current.field("reason"), "error": found["reason"], "error_message": exc.message})


@page("/dashboard/conversations")
def conversation_list(current: Page) -> Response:
    """The user's conversations, most recently active first, a page at a time."""
    query = paging.page_query(current, conversation_models.ConversationListQuery)
    # The first page of a whole page refreshes itself (views_unread): it needs the state's tag first.
    live = not is_htmx(current.request) and query.cursor is None
    etag = views_unread.unread_tag(current.caller)[0] if live else None
    found = conversations.list_conversations(current.caller, query)
    return paging.forward(current, "/conversations", ("conversations.html", "conversations_items.html"), found,
                          len(found.conversations), nav="conversations", conversations=found.conversations, me=current.caller.user_id,
                          etag=etag, poll_seconds=views_unread.POLL_SECONDS)


@page("/dashboard/conversations/{conversationId}")
def conversation(current: Page, conversationId: str) -> Response:
    """One conversation: its newest page of messages (oldest first within it), "Load earlier
    messages" above it while earlier pages exist, and the reply box.

    The messages are ``conversations.list_messages``'s page (the API's
    ``GET /v1/conversations/{id}/messages``: one Query of the message numbers of that page).
    The first view reads the conversation (it gives the message count, hence the last page);
    htmx's "Load earlier messages" answer reads only its page (the service checks that the
    user takes part).
    """
    return _conversation_page(current, conversationId)


def _conversation_page(current: Page, conversationId: str, status: int = 200, **form: Any) -> Response:
    """:func:`conversation`'s page answered with ``status``; ``form`` is a refused reply's
    ``content``, ``errors``, ``first_invalid`` and ``error_message`` (:func:`send`)."""
    pages = paging.EarlierPages.of(paging.page_query(current, pagination.PageQuery), "dashboard.messages",
                                   f"{current.caller.user_id}|{conversationId}")
    fragment = is_htmx(current.request)
    found = None if fragment and pages.page_to_read else conversations.get_conversation(current.caller, conversationId)
    number = pages.page(found.messageCount if found else 0)
    messages = conversations.list_messages(current.caller, conversationId, pagination.PageQuery(page=number, pageSize=pages.size))
    context = conversation_context.conversation_context(current.caller, found) if found else None
    etag = None
    newest_shown = found is not None and pages.page_to_read is None  # the first view: its newest page
    if newest_shown:
        if found is not None and found.unreadCount and messages.messages:  # read as shown: up to the newest shown
            conversations.mark_read(current.caller, conversationId, messages.messages[-1].messageId)
        etag = views_unread.unread_tag(current.caller)[0]
    # Block is offered against a user who can be blocked: not erased, not suspended (as unknown).
    others = [p for p in found.participants if p.userId != current.caller.user_id] if found else []
    known = users.get_users([p.userId for p in others]) if others else {}
    blockable = [p for p in others if p.userId in known and not users.is_suspended(known[p.userId])]
    return pages.render(current, f"/conversations/{conversationId}", ("conversation.html", "messages_items.html"), number,
                        len(messages.messages), messages.total, nav="conversations", conversation=found, blockable=blockable,
                        messages=messages.messages, me=current.caller.user_id, context=context,
                        notice=NOTICES.get(current.query("done")), etag=etag, poll_seconds=views_unread.POLL_SECONDS,
                        newest=(number - 1) * pages.size + len(messages.messages), status=status, **form)


@page("/dashboard/conversations/{conversationId}/messages", "POST")
def send(current: Page, conversationId: str) -> Response:
    """Send a message (1..4000 characters, the API's rules). A refused message is shown again in the
    reply box of the conversation page (400; 403 when a block stands or the other side left), its
    error tied to it; nothing was sent."""
    content = current.field("content")
    try:
        body = parse_model(conversation_models.MessageCreate, {"content": content})
        conversations.send_message(current.caller, conversationId, body.content, via_api=False)
    except (errors.RuleViolation, errors.Forbidden) as exc:
        found, first = field_errors(exc, ["content"]) if exc.details else ({"content": exc.message}, "content")
        return _conversation_page(current, conversationId, page_status(exc), content=content, errors=found,
                                  first_invalid=first, error_message=exc.message)
    return current.redirect(f"/conversations/{conversationId}?done=sent")
