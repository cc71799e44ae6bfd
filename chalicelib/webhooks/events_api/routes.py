"""Events API routes: list the caller's events, read one, and its delivery attempts."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.kernel import pagination
    from chalicelib.webhooks.events_api import models, service

bp = Blueprint(__name__)
route = routes(bp, tags=("events",))


@route("/v1/events", "GET", query=lambda: models.EventListQuery, response=lambda: models.EventPage, operation_id="events_list_events")
def list_events(caller: Caller, query: models.EventListQuery) -> models.EventPage:
    """The caller's events of the last 30 days, newest first: every event its webhooks would carry,
    whether or not a webhook received it; each is the delivered body plus ``id`` and ``createdAt``."""
    return service.list_events(caller, query)


@route("/v1/events/{eventId}", "GET", response=lambda: models.Event, operation_id="events_get_event")
def get_event(caller: Caller, eventId: str) -> models.Event:
    """One of the caller's events (a delivery's ``webhook-id`` is ``<eventId>_<webhookId>``)."""
    return service.get_event(caller, eventId)


@route(
    "/v1/events/{eventId}/deliveries", "GET", query=lambda: pagination.PageQuery, response=lambda: models.EventDeliveryPage,
    operation_id="events_list_event_deliveries",
)
def list_event_deliveries(caller: Caller, eventId: str, query: pagination.PageQuery) -> models.EventDeliveryPage:
    """The delivery attempts of one of the caller's events to its webhooks, newest first (the delivery log's records)."""
    return service.list_deliveries(caller, eventId, query)
