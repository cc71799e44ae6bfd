"""Webhook rules for the API (spec §2 "Webhook", §4, §5; DESIGN §2 "Webhooks").

* Any user may register any number of webhooks (spec §5.5, §8: unlimited).
* The URL must pass the address rules (:mod:`chalicelib.webhooks.addresses`) at registration;
  they are checked again at every delivery.
* A user sees, deletes and reads the delivery log of its own webhooks only; someone else's
  id is NOT_FOUND, as is an unknown one (no existence oracle).
"""

from __future__ import annotations

from typing import Any

from chalicelib import clock, errors
from chalicelib.auth.service import Caller
from chalicelib.config import settings
from chalicelib.pagination import Deleted, PageQuery
from chalicelib.webhooks import addresses, deliveries, repository, signing
from chalicelib.webhooks.models import DeliveryAttempt, DeliveryPage, Webhook, WebhookCreate, WebhookCreated, WebhookList

#: Seconds a registration may spend resolving the URL's host.
REGISTRATION_RESOLVE_SECONDS = 5.0


def _created_view(item: dict[str, Any]) -> WebhookCreated:
    return WebhookCreated(
        id=item["webhookId"],
        name=item["name"],
        url=item["url"],
        secret=item["secret"],
        events=list(item.get("events") or []),
        active=bool(item.get("active")),
        createdAt=item["createdAt"],
        updatedAt=item["updatedAt"],
    )


def to_model(item: dict[str, Any]) -> Webhook:
    """The API view of a webhook item (with ``failCount``)."""
    return Webhook(**_created_view(item).model_dump(), failCount=int(item.get("failCount") or 0))


def check_url(url: str) -> None:
    """Apply the address rules to ``url`` at registration.

    Raises
    ------
    ValidationError
        ``details`` field ``url``: not https (unless the stage allows http), malformed, an
        unresolvable host, or a host with any private, loopback, link-local, CGNAT,
        unique-local, IPv4-mapped, unspecified, multicast or reserved address.
    """
    try:
        addresses.allowed_target(url, settings().ALLOW_INSECURE_WEBHOOKS, REGISTRATION_RESOLVE_SECONDS)
    except addresses.UrlRejected as exc:
        raise errors.ValidationError.for_field("url", str(exc), f"Invalid url: {exc}") from exc


def create_webhook(caller: Caller, body: WebhookCreate) -> WebhookCreated:
    """Register a webhook for the caller: active, ``failCount`` 0, a new ``whsec_`` secret.

    Raises
    ------
    ValidationError
        A URL that breaks the address rules (field ``url``); unknown events are rejected by
        the body model (field ``events``).
    """
    check_url(body.url)
    now = clock.iso()
    item = {
        "webhookId": clock.new_id("whk"),
        "ownerId": caller.user_id,
        "name": body.name,
        "url": body.url,
        "secret": signing.new_secret(),
        "events": body.events,
        "active": True,
        "failCount": 0,
        "createdAt": now,
        "updatedAt": now,
    }
    repository.create(item)
    return _created_view(item)


def list_webhooks(caller: Caller) -> WebhookList:
    """Every webhook of the caller, newest first, with ``failCount`` and ``secret``."""
    return WebhookList(webhooks=[to_model(item) for item in repository.list_by_owner(caller.user_id)])


def require_own(caller: Caller, webhook_id: str) -> dict[str, Any]:
    """The caller's webhook ``webhook_id``.

    Raises
    ------
    NotFoundError
        Unknown, or someone else's.
    """
    item = repository.get(webhook_id)
    if item is None or item.get("ownerId") != caller.user_id:
        raise errors.NotFoundError(f"Webhook '{webhook_id}' not found")
    return item


def delete_webhook(caller: Caller, webhook_id: str) -> Deleted:
    """Delete the caller's webhook; deliveries to it stop, pending retries are dropped.

    Listings that name it in ``webhookIds`` keep the id; it simply matches nothing.

    Raises
    ------
    NotFoundError
        Unknown, or someone else's.
    """
    if not repository.delete_owned(webhook_id, caller.user_id):
        raise errors.NotFoundError(f"Webhook '{webhook_id}' not found")
    return Deleted(id=webhook_id)


def list_deliveries(caller: Caller, webhook_id: str, query: PageQuery) -> DeliveryPage:
    """The delivery log of the caller's webhook, newest first, paginated.

    Raises
    ------
    NotFoundError
        Unknown, or someone else's webhook.
    """
    require_own(caller, webhook_id)
    position = query.position_in("webhook.deliveries", webhook_id)
    newest = deliveries.newest_attempts(webhook_id, position.page * position.page_size)
    total = deliveries.count_attempts(webhook_id)
    return DeliveryPage(
        deliveries=[_attempt_model(item) for item in position.slice(newest)],
        total=total,
        page=position.page,
        pageSize=position.page_size,
        nextCursor=position.next_cursor(position.after(total)),
    )


def _attempt_model(item: dict[str, Any]) -> DeliveryAttempt:
    return DeliveryAttempt(
        id=item["deliveryId"],
        eventId=item["eventId"],
        event=item["event"],
        attempt=int(item["attempt"]),
        attemptedAt=item["attemptedAt"],
        messageId=item["messageId"],
        success=bool(item.get("success")),
        statusCode=item.get("statusCode"),
        error=item.get("error"),
        errorDetail=item.get("errorDetail"),
        durationMs=int(item.get("durationMs") or 0),
        responseBody=item.get("responseBody"),
    )
