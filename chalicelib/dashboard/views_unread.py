"""Unread badges and live conversations: fragments htmx polls, answered ``304`` while nothing is new.

Each poller (``live.html``) sends ``If-None-Match`` with the entity tag of the state it shows:
the user's unread counter item (:func:`chalicelib.conversations.service.unread_summary`: the
number of messages ever sent to them and their unread total). An idle poll is therefore one
GetItem of that small item and a ``304`` without a body (``base.html`` tells htmx not to swap a
304); a new message changes the tag, and the poll's answer brings what changed and a poller
carrying the new tag. Why polling and not server-sent events: docs/dashboard.md, "Unread badges
and live conversations".
"""

from __future__ import annotations

import urllib.parse

from chalice.app import Response

from chalicelib.auth.service import Caller
from chalicelib.dashboard.paging import Shown
from chalicelib.dashboard.web import SECURITY_HEADERS, Page, page
from chalicelib.kernel.lazy_imports import lazy_imports

with lazy_imports(__name__):  # loaded with the first poll, not at the API's cold start
    from chalicelib.conversations import models as conversation_models
    from chalicelib.conversations import service as conversations
    from chalicelib.edge import conditional
    from chalicelib.kernel import errors, pagination

#: Seconds between two polls of a poller (htmx ``every``).
POLL_SECONDS = 5


def unread_tag(caller: Caller) -> tuple[str, int]:
    """The entity tag of ``caller``'s unread state and their unread total (one GetItem)."""
    state = conversations.unread_summary(caller)
    return f'"u{state.version}-{state.result.unreadCount}"', state.result.unreadCount


def _unchanged(current: Page, tag: str) -> Response | None:
    """``304`` with ``tag`` when the request's ``If-None-Match`` names it, else ``None``."""
    if conditional.not_modified(current.request.headers.get("if-none-match"), tag):
        return Response(body="", status_code=304, headers={**SECURITY_HEADERS, "ETag": tag})
    return None


def _after_number(current: Page) -> int:
    text = current.query("after", "0")
    if not text.isdigit() or len(text) > 10:
        raise errors.RuleViolation.for_field("after", "must be a message number (0 or more)")
    return int(text)


@page("/dashboard/live/unread")
def unread_badge(current: Page) -> Response:
    """The navigation's unread badge (the user's unread total) and its next poller."""
    tag, unread = unread_tag(current.caller)
    return _unchanged(current, tag) or current.render(
        "live_unread.html", headers={"ETag": tag}, unread=unread, etag=tag, poll_seconds=POLL_SECONDS
    )


@page("/dashboard/live/conversations")
def conversation_list(current: Page) -> Response:
    """The first page of the conversation list (its unread badges), when anything new arrived."""
    tag, _ = unread_tag(current.caller)
    unchanged = _unchanged(current, tag)
    if unchanged is not None:
        return unchanged
    found = conversations.list_conversations(current.caller, conversation_models.ConversationListQuery(
        pageSize=pagination.MAX_PAGE_SIZE))
    more = None
    if found.nextCursor:
        more = f"{current.root}/conversations?" + urllib.parse.urlencode(
            {"pageSize": found.pageSize, "cursor": found.nextCursor})
    return current.render(
        "live_conversations.html", headers={"ETag": tag}, conversations=found.conversations, more=more, fragment=False,
        shown=Shown(first=1, last=len(found.conversations), total=found.total), me=current.caller.user_id, etag=tag,
        poll_seconds=POLL_SECONDS,
    )


@page("/dashboard/live/conversations/{conversationId}")
def conversation(current: Page, conversationId: str) -> Response:
    """The messages after number ``after`` of an open conversation, marked read as they are shown."""
    after = _after_number(current)
    tag, _ = unread_tag(current.caller)
    unchanged = _unchanged(current, tag)
    if unchanged is not None:
        return unchanged
    messages, total = conversations.messages_after(current.caller, conversationId, after)
    me = current.caller.user_id
    # Marked read only when they reach the newest message: a poll from far behind (``after`` more
    # than a page back) never moves the marker back over messages already read.
    if after + len(messages) == total and any(m.senderId != me for m in messages):
        conversations.mark_read(current.caller, conversationId, messages[-1].messageId)
        tag, _ = unread_tag(current.caller)
    return current.render(
        "live_messages.html", headers={"ETag": tag}, messages=messages, me=me, conversation_id=conversationId,
        after=after, shown=Shown(first=1, last=after + len(messages), total=total), etag=tag, poll_seconds=POLL_SECONDS,
        arrived=sum(1 for m in messages if m.senderId != me),
    )
