"""The account export: everything held about the caller in one document.

Each part is read through its domain's service, page after page of 100 (every list follows its
cursor to the end), so the reads grow with the user's own data and never with the tables: one
profile read, one page read per 100 listings, requests, conversations, messages, saved searches
and blocks, one delivery-log page per webhook, one Query of the user's keys and one of the
reports they made.
"""

from __future__ import annotations

from collections.abc import Callable

from chalicelib.auth import own_keys
from chalicelib.auth.service import Caller
from chalicelib.blocks import service as blocks
from chalicelib.blocks.models import Block, BlockListQuery
from chalicelib.conversations import service as conversations
from chalicelib.conversations.models import Conversation, ConversationListQuery, Message
from chalicelib.kernel import clock
from chalicelib.kernel.pagination import MAX_PAGE_SIZE, PageQuery
from chalicelib.listings import service as listings
from chalicelib.listings.models import Listing
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
from chalicelib.saved_searches.models import SavedSearch
from chalicelib.users import service as users
from chalicelib.webhooks import service as webhooks


def _all[T](page: Callable[[str | None], tuple[list[T], str | None]]) -> list[T]:
    """Every item of a paged list: ``page(cursor)`` answers one page and its ``nextCursor``."""
    items, cursor = page(None)
    while cursor is not None:
        more, cursor = page(cursor)
        items += more
    return items


def export_account(caller: Caller) -> AccountExport:
    """The caller's data as one document (:class:`~chalicelib.privacy.models.AccountExport`).

    Raises
    ------
    NotFound
        The caller's user record no longer exists.
    """
    def my_listings(cursor: str | None) -> tuple[list[Listing], str | None]:
        found = listings.list_my_listings(caller, PageQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
        return list(found.listings), found.nextCursor

    def sent(cursor: str | None) -> tuple[list[MatchRequest], str | None]:
        found = match_requests.list_sent(caller, RequestListQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
        return list(found.requests), found.nextCursor

    def received(cursor: str | None) -> tuple[list[MatchRequest], str | None]:
        found = match_requests.list_received(caller, RequestListQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
        return list(found.requests), found.nextCursor

    def my_conversations(cursor: str | None) -> tuple[list[Conversation], str | None]:
        found = conversations.list_conversations(caller, ConversationListQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
        return list(found.conversations), found.nextCursor

    def messages_of(conversation_id: str) -> list[Message]:
        def page(cursor: str | None) -> tuple[list[Message], str | None]:
            found = conversations.list_messages(caller, conversation_id, PageQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
            return list(found.messages), found.nextCursor
        return _all(page)

    def my_searches(cursor: str | None) -> tuple[list[SavedSearch], str | None]:
        found = saved_searches.list_saved_searches(caller, PageQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
        return list(found.savedSearches), found.nextCursor

    def my_blocks(cursor: str | None) -> tuple[list[Block], str | None]:
        found = blocks.list_blocks(caller.user_id, BlockListQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
        return list(found.blocks), found.nextCursor

    profile = users.read_me(caller).result
    hooks = [
        ExportedWebhook(webhook=WebhookSettings.of(hook), recentDeliveries=list(
            webhooks.list_deliveries(caller, hook.id, PageQuery(pageSize=RECENT_DELIVERIES)).deliveries
        ))
        for hook in webhooks.list_webhooks(caller).webhooks
    ]
    keys = [ExportedApiKey(keyId=k.key_id, name=k.name, createdAt=k.created_at, lastUsedAt=k.last_used_at,
                           expiresAt=k.expires_at) for k in own_keys.list_keys(caller)]
    return AccountExport(
        exportedAt=clock.iso(),
        profile=profile,
        channels=users.list_channels(caller).channels,
        listings=_all(my_listings),
        requestsSent=_all(sent),
        requestsReceived=_all(received),
        conversations=[ExportedConversation(conversation=c, messages=messages_of(c.conversationId))
                       for c in _all(my_conversations)],
        webhooks=hooks,
        savedSearches=_all(my_searches),
        apiKeys=keys,
        blocks=_all(my_blocks),
        reports=reports.reports_made(caller.user_id),
    )
