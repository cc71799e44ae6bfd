"""The account export's document (``GET /v1/me/export``): one JSON object, its schema in the
OpenAPI document (``AccountExport``)."""

from __future__ import annotations

from pydantic import Field

from chalicelib.blocks.models import Block
from chalicelib.conversations.models import Conversation, Message
from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.listings.models import Listing
from chalicelib.match_requests.models import MatchRequest
from chalicelib.reports.models import Report
from chalicelib.saved_searches.models import SavedSearch
from chalicelib.users.models import Channel, Profile
from chalicelib.webhooks.models import DeliveryAttempt, Webhook

#: The export format's version; a change of the document's shape raises it.
EXPORT_VERSION = 1
#: Delivery attempts exported per webhook (its newest page of the delivery log).
RECENT_DELIVERIES = 100


class ExportedConversation(Model):
    """A conversation the user takes part in, with every message in it, oldest first."""

    conversation: Conversation
    messages: list[Message]


class WebhookSettings(Model):
    """A webhook's settings as exported: those of ``GET /v1/webhooks`` without the signing secret."""

    id: str
    name: str
    url: str
    events: list[str]
    active: bool
    failCount: int
    createdAt: Timestamp
    updatedAt: Timestamp

    @classmethod
    def of(cls, webhook: Webhook) -> WebhookSettings:
        """``webhook`` without its ``secret``."""
        return cls.model_validate(webhook.model_dump(exclude={"secret"}))


class ExportedWebhook(Model):
    """A webhook (never its secret) and its recent delivery log, newest first."""

    webhook: WebhookSettings
    recentDeliveries: list[DeliveryAttempt] = Field(description=f"At most {RECENT_DELIVERIES} attempts, newest first.")


class ExportedApiKey(Model):
    """An API key's metadata: never key material (neither the key, its prefix nor its hash)."""

    keyId: str = Field(description="The key's public id: 16 random hex characters, independent of the key and its hash.")
    name: str
    createdAt: Timestamp
    lastUsedAt: Timestamp | None
    expiresAt: Timestamp | None


class AccountExport(Model):
    """Everything the service holds about the caller (``GET /v1/me/export``)."""

    exportVersion: int = Field(default=EXPORT_VERSION, description="The document's format version.")
    exportedAt: Timestamp
    profile: Profile
    channels: list[Channel]
    listings: list[Listing] = Field(description="Every listing of the user, in every status, newest first.")
    requestsSent: list[MatchRequest]
    requestsReceived: list[MatchRequest]
    conversations: list[ExportedConversation]
    webhooks: list[ExportedWebhook]
    savedSearches: list[SavedSearch]
    apiKeys: list[ExportedApiKey]
    blocks: list[Block] = Field(description="The users the user blocks (not who blocks the user).")
    reports: list[Report] = Field(description="The reports the user made.")
