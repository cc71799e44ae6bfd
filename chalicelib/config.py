"""Process configuration, read once from environment variables.

Each stage of ``.chalice/config.json`` sets the plain settings; the resource names
(tables, queues, stream ARN) are injected by the deployment template
(``infra/resources.json``: ``Environment.Variables`` with ``Ref``/``GetAtt``) and, locally,
by ``chalicelib.local.resources`` from that same template.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Typed view of the environment (pydantic-settings reads the variables by field name)."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore")

    USERS_TABLE: str = "UsersTable"
    API_KEYS_TABLE: str = "ApiKeysTable"
    LISTINGS_TABLE: str = "ListingsTable"
    REQUESTS_TABLE: str = "RequestsTable"
    CONVERSATIONS_TABLE: str = "ConversationsTable"
    CONVERSATION_MEMBERS_TABLE: str = "ConversationMembersTable"
    MESSAGES_TABLE: str = "MessagesTable"
    WEBHOOKS_TABLE: str = "WebhooksTable"
    DELIVERIES_TABLE: str = "DeliveriesTable"
    EVENTS_TABLE: str = "EventsTable"
    SEARCH_INDEX_TABLE: str = "SearchIndexTable"
    SAVED_SEARCHES_TABLE: str = "SavedSearchesTable"
    PERCOLATOR_TABLE: str = "PercolatorTable"
    SAVED_SEARCH_MATCHES_TABLE: str = "SavedSearchMatchesTable"
    DASHBOARD_SESSIONS_TABLE: str = "DashboardSessionsTable"
    APPROVAL_QUEUE_URL: str = ""
    DELIVERY_QUEUE_URL: str = ""
    DELIVERY_QUEUE_ARN: str = "arn:aws:sqs:us-east-1:000000000000:DeliveryQueue.fifo"
    DELIVERY_RETRY_QUEUE_URL: str = ""
    DELIVERY_RETRY_QUEUE_ARN: str = "arn:aws:sqs:us-east-1:000000000000:DeliveryRetryQueue"
    EVENTS_STREAM_ARN: str = "arn:aws:dynamodb:us-east-1:000000000000:table/EventsTable/stream/placeholder"
    #: Allow http:// and loopback/private webhook targets (local stage and tests only).
    ALLOW_INSECURE_WEBHOOKS: bool = False
    #: Total deadline of one webhook delivery (DNS + connect + TLS + send + read), seconds (spec §8: 10).
    WEBHOOK_TIMEOUT_SECONDS: float = Field(default=10.0, gt=0, le=60)
    #: Delays before the retries of a failed delivery, seconds, comma separated (SQS DelaySeconds: 0..900).
    WEBHOOK_RETRY_DELAYS_SECONDS: str = "30,120,600"
    #: botocore client timeouts and attempts of every DynamoDB and SQS client (see storage.boto_config).
    AWS_CONNECT_TIMEOUT_SECONDS: float = Field(default=2.0, gt=0, le=60)
    AWS_READ_TIMEOUT_SECONDS: float = Field(default=3.0, gt=0, le=60)
    AWS_MAX_ATTEMPTS: int = Field(default=3, ge=1, le=10)
    #: Seconds an authenticated key stays in the per-process cache (revocation delay).
    AUTH_CACHE_TTL_SECONDS: int = Field(default=60, ge=0)
    #: Seconds an approval task stays claimed by ``GET /v1/admin/approvals``.
    APPROVAL_CLAIM_SECONDS: int = Field(default=300, ge=1, le=43200)
    #: Saved searches one user may keep at once (``POST /v1/saved-searches`` answers 409 beyond).
    SAVED_SEARCH_LIMIT: int = Field(default=50, ge=1, le=1000)
    #: ``gazetteer`` (embedded GeoNames) or ``amazon-location``.
    GEOCODER: str = "gazetteer"
    #: HMAC key of the page cursors (:mod:`chalicelib.cursors`); set a random value per deployment.
    CURSOR_SECRET: str = "local-cursor-secret"


@lru_cache(maxsize=1)
def settings() -> Settings:
    """Return the process-wide :class:`Settings` (read once; tests call ``settings.cache_clear()``)."""
    return Settings()
