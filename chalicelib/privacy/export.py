"""The account export: everything held about the caller in one document.

Each part is read through its domain's service, page after page of 100 (every list follows its
cursor to the end), so the reads grow with the user's own data and never with the tables: one
profile read, one page read per 100 listings, requests, messages, saved searches and blocks,
one read per conversation, one delivery-log page per webhook, one Query of the user's keys and
one of the reports they made.

The conversations are those the caller took part in, the ones they left included: every
conversation was opened by an accepted request, sent or received, so the exported requests name
them all (as the account erasure finds them, :mod:`chalicelib.privacy.erasure`), and a
participant who left keeps read access by id. The "my conversations" list leaves those out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chalicelib.auth import own_keys
from chalicelib.auth.service import Caller
from chalicelib.blocks import service as blocks
from chalicelib.blocks.models import BlockListQuery
from chalicelib.conversations import service as conversations
from chalicelib.conversations.models import Conversation, Message
from chalicelib.kernel import clock
from chalicelib.kernel.pagination import MAX_PAGE_SIZE, PageQuery
from chalicelib.listings import service as listings
from chalicelib.match_requests import service as match_requests
from chalicelib.match_requests.models import MatchRequest, RequestListQuery
from chalicelib.privacy.models import (
    RECENT_DELIVERIES,
    AccountExport,
    ExportedApiKey,
    ExportedConversation,
    ExportedWebhook,
    WebhookSettings,
)
from chalicelib.reports import service as reports
from chalicelib.saved_searches import service as saved_searches
from chalicelib.users import service as users
from chalicelib.webhooks import service as webhooks


def _every(read: Callable[[str | None], Any], items: Callable[[Any], Sequence[Any]]) -> list[Any]:
    """Every item of a list read page after page: ``read(cursor)`` answers one page (with its
    ``nextCursor``, ``None`` on the last), ``items(page)`` the page's items."""
    found: list[Any] = []
    cursor: str | None = None
    while True:
        page = read(cursor)
        found += items(page)
        if (cursor := page.nextCursor) is None:
            return found


def _full(cursor: str | None) -> PageQuery:
    return PageQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor)


def _conversations(caller: Caller, requests: Sequence[MatchRequest]) -> list[ExportedConversation]:
    """Every conversation the accepted ``requests`` opened, with all its messages, most recently
    active first (its last message, or its opening when it has none; ties by id), as the
    conversations list orders them (a leave or a participant's erasure moves ``updatedAt``, not
    the activity)."""
    found = [conversations.get_conversation(caller, cid) for cid in sorted({r.conversationId for r in requests if r.conversationId})]
    found.sort(key=lambda c: (c.lastMessage.createdAt if c.lastMessage else c.createdAt, c.conversationId), reverse=True)
    return [ExportedConversation(conversation=c, messages=_messages(caller, c)) for c in found]


def _messages(caller: Caller, conversation: Conversation) -> list[Message]:
    return _every(lambda cursor: conversations.list_messages(caller, conversation.conversationId, _full(cursor)),
                  lambda p: p.messages)


def export_account(caller: Caller) -> AccountExport:
    """The caller's data as one document (:class:`~chalicelib.privacy.models.AccountExport`).

    Raises
    ------
    NotFound
        The caller's user record no longer exists.
    """
    profile = users.read_me(caller).result
    hooks = [
        ExportedWebhook(webhook=WebhookSettings.of(hook), recentDeliveries=list(
            webhooks.list_deliveries(caller, hook.id, PageQuery(pageSize=RECENT_DELIVERIES)).deliveries
        ))
        for hook in webhooks.list_webhooks(caller).webhooks
    ]
    keys = [ExportedApiKey(keyId=k.key_id, name=k.name, createdAt=k.created_at, lastUsedAt=k.last_used_at,
                           expiresAt=k.expires_at) for k in own_keys.list_keys(caller)]
    sent = _every(lambda c: match_requests.list_sent(caller, RequestListQuery(pageSize=MAX_PAGE_SIZE, cursor=c)), lambda p: p.requests)
    received = _every(lambda c: match_requests.list_received(caller, RequestListQuery(pageSize=MAX_PAGE_SIZE, cursor=c)),
                      lambda p: p.requests)
    return AccountExport(
        exportedAt=clock.iso(),
        profile=profile,
        channels=users.list_channels(caller).channels,
        listings=_every(lambda c: listings.list_my_listings(caller, _full(c)), lambda p: p.listings),
        requestsSent=sent,
        requestsReceived=received,
        conversations=_conversations(caller, [*sent, *received]),
        webhooks=hooks,
        savedSearches=_every(lambda c: saved_searches.list_saved_searches(caller, _full(c)), lambda p: p.savedSearches),
        apiKeys=keys,
        blocks=_every(lambda c: blocks.list_blocks(caller.user_id, BlockListQuery(pageSize=MAX_PAGE_SIZE, cursor=c)), lambda p: p.blocks),
        reports=reports.reports_made(caller.user_id),
    )
