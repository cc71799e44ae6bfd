"""Webhook request and response models (spec §2 "Webhook", §4 webhook endpoints)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints, field_validator

from chalicelib.kernel.config import settings
from chalicelib.kernel.json_types import SINGLE_LINE, Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import Envelope
from chalicelib.webhooks.addresses import MAX_URL_LENGTH, url_pattern
from chalicelib.webhooks.catalogue import DEFAULT_EVENTS, SUPPORTED_EVENTS

DEFAULT_NAME = "API Webhook"

#: An event name: one of the catalogue's (:mod:`chalicelib.webhooks.catalogue`).
EventName = Annotated[str, Field(json_schema_extra={"enum": list(SUPPORTED_EVENTS)})]


def _url_schema(schema: dict[str, Any]) -> None:
    """The URL rules the schema can state (:func:`~chalicelib.webhooks.addresses.url_pattern`):
    https (http too on stages that allow it), a host, no user info, a port in 1..65535, printable
    ASCII, no fragment.

    Whether the host resolves to public addresses only is checked by the service and cannot be
    stated here; ``POST /v1/webhooks`` lists it in its description.
    """
    schema.update({"format": "uri", "pattern": url_pattern(settings().ALLOW_INSECURE_WEBHOOKS)})


class WebhookCreate(Model):
    """Body of ``POST /v1/webhooks``.

    ``events`` null, omitted or empty subscribes to every domain event
    (:data:`~chalicelib.webhooks.catalogue.DEFAULT_EVENTS`; the operational ``webhook.*`` events
    only when named); an unknown event name fails validation naming the field ``events``. The URL rules (https, public address)
    are checked by the service, which resolves the host.
    """

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"name": "Matching alerts", "url": "https://example.com/hooks/matching", "events": ["match_request.received", "message.new"]},
    ]})
    name: Annotated[str, StringConstraints(min_length=1, max_length=100), SINGLE_LINE] | None = DEFAULT_NAME
    url: str = Field(min_length=1, max_length=MAX_URL_LENGTH, json_schema_extra=_url_schema)
    events: list[EventName] | None = Field(
        default=None, max_length=len(SUPPORTED_EVENTS) * 4, validate_default=True,
        description="The events to deliver; null, omitted or empty: every domain event (the operational `webhook.*` "
        "events only when named)",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str:
        if value is None:
            return DEFAULT_NAME
        stripped = value.strip()
        if not stripped:
            raise ValueError("must not be blank")
        return stripped

    @field_validator("events")
    @classmethod
    def _events(cls, value: list[str] | None) -> list[str]:
        if not value:
            return list(DEFAULT_EVENTS)
        unknown = [e for e in dict.fromkeys(value) if e not in SUPPORTED_EVENTS]
        if unknown:
            raise ValueError(f"unknown event(s): {', '.join(unknown)}; supported: {', '.join(SUPPORTED_EVENTS)}")
        return list(dict.fromkeys(value))


class WebhookCreated(Model):
    """Response of ``POST /v1/webhooks`` (201)."""

    id: str
    name: str
    url: str
    secret: str = Field(description="Signing secret: whsec_ + base64 of 32 random bytes")
    events: list[str]
    active: bool
    createdAt: Timestamp
    updatedAt: Timestamp


class Webhook(WebhookCreated):
    """A webhook in ``GET /v1/webhooks``: adds ``failCount`` (consecutive failed attempts)."""

    failCount: int


class WebhookList(Model):
    """``GET /v1/webhooks``: every webhook of the caller, newest first (not paginated)."""

    webhooks: list[Webhook]


class DeliveryAttempt(Model):
    """One logged delivery attempt."""

    id: str
    eventId: str
    event: str
    attempt: int = Field(description="1 for the first send, 2.. for retries")
    attemptedAt: Timestamp
    messageId: str = Field(description="The webhook-id header: stable per event and webhook")
    success: bool
    statusCode: int | None = Field(default=None, description="HTTP status; null when no response arrived")
    error: str | None = Field(
        default=None, description="timeout, connection_error, tls_error, protocol_error, blocked_address or dns_error"
    )
    errorDetail: str | None = None
    durationMs: int
    responseBody: str | None = Field(default=None, description="First 4 KiB of the response body")
    nextAttemptAt: Timestamp | None = Field(
        default=None,
        description="When the retry of this failed attempt is due (ISO 8601 UTC, its backoff after the failure); "
        "null when no retry follows (success, the retries used up, or the webhook disabled)",
    )


class DeliveryPage(Envelope):
    """``GET /v1/webhooks/{id}/deliveries`` envelope, newest first: the attempts of today and the 30
    days before (UTC days); ``total`` is exact."""

    deliveries: list[DeliveryAttempt]


class WebhookOverview(Webhook):
    """A webhook as the Dashboard lists it: the API view plus its rotation window and last attempt."""

    previousSecretExpiresAt: str | None = Field(default=None, description="Until when the rotated-out secret still verifies")
    lastDelivery: DeliveryAttempt | None = None
    disabledAt: str | None = Field(default=None, description="When it was switched off (ISO 8601 UTC); null while active")
    disabledReason: str | None = Field(default=None, description="Why it was switched off, e.g. after 5 consecutive failures")
    lastFailure: str | None = Field(default=None, description="The failure that switched it off: `HTTP 500` or the error")


class RecoverResult(Model):
    """What "Recover failed deliveries" queued (Dashboard only)."""

    queued: int = Field(description="Failed deliveries queued again, each as a new attempt with its webhook-id")
    complete: bool = Field(description="False when the bound (100 deliveries, 1000 log entries read) cut the recover short")


class RecoveryReport(Model):
    """The latest "Recover failed deliveries" of a webhook, as its attempts went (Dashboard only)."""

    at: str = Field(description="When it was started (ISO 8601 UTC)")
    queued: int = Field(description="Attempts it queued (each delivery once)")
    sent: int = Field(description="Of those, attempts made (whatever their outcome: see the delivery log)")
    notSent: int = Field(description="Of those, attempts not made: the webhook was inactive or gone when their turn came")

    @property
    def waiting(self) -> int:
        """Attempts still in the webhook's lane."""
        return max(self.queued - self.sent - self.notSent, 0)


class HealthBucket(Model):
    """Attempts of one period (an hour or a UTC day) by outcome."""

    start: str = Field(description="Start of the period (ISO 8601 UTC)")
    succeeded: int
    failed: int


class HealthSeries(Model):
    """Attempts per period over a span, oldest period first, with the span's totals."""

    buckets: list[HealthBucket]

    @property
    def succeeded(self) -> int:
        """Successful attempts of the span."""
        return sum(b.succeeded for b in self.buckets)

    @property
    def failed(self) -> int:
        """Failed attempts of the span."""
        return sum(b.failed for b in self.buckets)

    @property
    def success_rate(self) -> float | None:
        """Share of successful attempts, 0..1 (``None``: no attempts)."""
        total = self.succeeded + self.failed
        return self.succeeded / total if total else None


class DeliveryHealth(Model):
    """A webhook's delivery health (Dashboard only): attempts per hour over the last 24 hours (the
    current hour last) and per UTC day over the last 7 days (today last)."""

    hourly: HealthSeries
    daily: HealthSeries


class ScheduledRetry(Model):
    """A failed delivery whose next attempt is still scheduled (it is sent when due if the webhook is active)."""

    eventId: str
    event: str
    nextAttemptAt: str


class SecretRotated(Model):
    """Result of rotating a webhook's secret (Dashboard only; not an API operation, spec §4 note 1)."""

    webhook: Webhook
    secret: str = Field(description="The new secret, shown once on the page")
    previousSecretExpiresAt: str = Field(description="ISO 8601 UTC end of the old secret's 24 h overlap")


class LoggedAttempt(DeliveryAttempt):
    """A delivery attempt as the Dashboard's delivery log shows it: adds the exact request body
    and an opaque ``token`` naming the log entry (for the on-demand detail view)."""

    token: str
    requestBody: str | None = None
    requestHeaders: dict[str, str] | None = None
