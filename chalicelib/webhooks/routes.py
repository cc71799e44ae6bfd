"""Webhook routes: register, list, delete, and read the delivery log (spec §4)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.kernel import pagination
    from chalicelib.webhooks import models, service

bp = Blueprint(__name__)
route = routes(bp, tags=("webhooks",))


@route(
    "/v1/webhooks", "POST", body=lambda: models.WebhookCreate, response=lambda: models.WebhookCreated, status=201,
    rules=(
        "The host of `url` must resolve, and only to public addresses (no private, loopback, link-local, "
        "carrier-grade NAT, unique-local, multicast or reserved ranges); checked again at every delivery. "
        "So a host name must be a DNS name (labels of 1 to 63 characters) and a bracketed host a valid IPv6 address.",
    ),
)
def create_webhook(caller: Caller, body: models.WebhookCreate) -> models.WebhookCreated:
    """Register a webhook; the response carries its signing secret."""
    return service.create_webhook(caller, body)


@route("/v1/webhooks", "GET", response=lambda: models.WebhookList)
def list_webhooks(caller: Caller) -> models.WebhookList:
    """The caller's webhooks with ``failCount`` and ``secret``."""
    return service.list_webhooks(caller)


@route("/v1/webhooks/{webhookId}", "DELETE", response=lambda: pagination.Deleted)
def delete_webhook(caller: Caller, webhookId: str) -> pagination.Deleted:
    """Delete one of the caller's webhooks."""
    return service.delete_webhook(caller, webhookId)


@route("/v1/webhooks/{webhookId}/deliveries", "GET", query=lambda: pagination.PageQuery, response=lambda: models.DeliveryPage)
def list_deliveries(caller: Caller, webhookId: str, query: pagination.PageQuery) -> models.DeliveryPage:
    """The delivery attempts of one of the caller's webhooks, newest first."""
    return service.list_deliveries(caller, webhookId, query)
