"""Conversation routes: list, detail, messages (read and send), read markers and unread counts, leave."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.conversations import models, service
    from chalicelib.edge import conditional
    from chalicelib.kernel import pagination

bp = Blueprint(__name__)
route = routes(bp, tags=("conversations",))


@route("/v1/conversations", "GET", query=lambda: models.ConversationListQuery, response=lambda: models.ConversationPage)
def list_conversations(caller: Caller, query: models.ConversationListQuery) -> models.ConversationPage:
    """The caller's conversations, most recently active first; ``subjectType=PROFILE|LISTING`` narrows them."""
    return service.list_conversations(caller, query)


@route("/v1/conversations/{conversationId}", "GET", response=lambda: models.Conversation)
def get_conversation(caller: Caller, conversationId: str) -> models.Conversation:
    """One conversation of the caller (404 for non-participants)."""
    return service.get_conversation(caller, conversationId)


@route("/v1/conversations/{conversationId}/messages", "GET", query=lambda: pagination.PageQuery, response=lambda: models.MessagePage)
def list_messages(caller: Caller, conversationId: str, query: pagination.PageQuery) -> models.MessagePage:
    """The conversation's messages, oldest first, paginated."""
    return service.list_messages(caller, conversationId, query)


@route(
    "/v1/conversations/{conversationId}/messages", "POST", body=lambda: models.MessageCreate, response=lambda: models.Message,
    status=201,
)
def send_message(caller: Caller, conversationId: str, body: models.MessageCreate) -> models.Message:
    """Send a message (1 to 4000 characters); 403 once a participant has left."""
    return service.send_message(caller, conversationId, body.content)


@route("/v1/conversations/{conversationId}", "DELETE", response=lambda: models.LeaveResult)
def leave(caller: Caller, conversationId: str) -> models.LeaveResult:
    """Leave the conversation: ``{"success": true}``; the other participant then sees ``otherLeft``."""
    return service.leave(caller, conversationId)


@route("/v1/conversations/{conversationId}/read", "POST", body=lambda: models.ReadMarkerUpdate, response=lambda: models.ReadState)
def mark_read(caller: Caller, conversationId: str, body: models.ReadMarkerUpdate) -> models.ReadState:
    """Mark the conversation read up to a message (``{}``: up to the newest); answers the new unread counts."""
    return service.mark_read(caller, conversationId, body.messageId)


@route("/v1/me/unread", "GET", response=lambda: models.UnreadSummary, etag=True)
def unread(caller: Caller) -> conditional.Versioned:
    """The caller's unread messages over all their conversations: one small read; ``ETag`` / ``If-None-Match`` -> 304."""
    return service.unread_summary(caller)
