"""Webhooks pages: list and add, one webhook's settings, actions and delivery log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice.app import Response

from chalicelib.dashboard.web import Page, page
from chalicelib.http import parse_model
from chalicelib.lazy import lazy_import

# The domain's modules load with the first page that uses them, not at the API's cold start.
if TYPE_CHECKING:
    from chalicelib.dashboard import samples
    from chalicelib.webhooks import catalogue, models, service, signing
    from chalicelib.webhooks.models import WebhookCreate
else:
    samples = lazy_import("chalicelib.dashboard.samples")
    catalogue = lazy_import("chalicelib.webhooks.catalogue")
    models = lazy_import("chalicelib.webhooks.models")
    service = lazy_import("chalicelib.webhooks.service")
    signing = lazy_import("chalicelib.webhooks.signing")

#: Attempts shown in a webhook's delivery log (newest first).
LOG_SIZE = 50

NOTICES = {
    "created": "Webhook added. Its signing secret is shown below.",
    "saved": "Changes saved.",
    "deleted": "Webhook deleted.",
    "enabled": "Webhook enabled: failCount is 0 and deliveries resume with the next event.",
    "disabled": "Webhook disabled: no deliveries until you enable it again.",
    "test-sent": "Test event queued: it is delivered, signed and logged like a real event.",
    "redelivered": "Redelivery queued as a new attempt with the same webhook-id.",
}


def _settings_form(current: Page) -> WebhookCreate:
    events = [e for e in current.form().get("events", []) if e]
    data = {"name": current.field("name") or None, "url": current.field("url").strip(), "events": events or None}
    return parse_model(models.WebhookCreate, data)


@page("/dashboard/webhooks")
def webhooks(current: Page) -> Response:
    """Every webhook of the signed-in user, and the "Add webhook" form."""
    return current.render(
        "webhooks.html",
        nav="webhooks",
        webhooks=service.overview(current.caller),
        supported_events=catalogue.SUPPORTED_EVENTS,
        notice=NOTICES.get(current.query("done")),
    )


@page("/dashboard/webhooks", "POST")
def add_webhook(current: Page) -> Response:
    """Register a webhook with the API's rules (validation, SSRF checks)."""
    created = service.create_webhook(current.caller, _settings_form(current))
    return current.redirect(f"/webhooks/{created.id}?done=created")


@page("/dashboard/webhooks/{webhookId}")
def webhook(current: Page, webhookId: str) -> Response:
    """One webhook: settings form, actions and its delivery log."""
    item = service.get_webhook(current.caller, webhookId)
    return current.render(
        "webhook.html",
        nav="webhooks",
        webhook=item,
        overview=next((w for w in service.overview(current.caller) if w.id == webhookId), None),
        attempts=service.newest_attempts(current.caller, webhookId, LOG_SIZE),
        supported_events=catalogue.SUPPORTED_EVENTS,
        overlap_hours=signing.PREVIOUS_SECRET_HOURS,
        notice=NOTICES.get(current.query("done")),
        rotated=None,
    )


@page("/dashboard/webhooks/{webhookId}", "POST")
def save_webhook(current: Page, webhookId: str) -> Response:
    """Save name, url and events (the API's validation and SSRF rules)."""
    service.update_webhook(current.caller, webhookId, _settings_form(current))
    return current.redirect(f"/webhooks/{webhookId}?done=saved")


@page("/dashboard/webhooks/{webhookId}/delete", "POST")
def delete_webhook(current: Page, webhookId: str) -> Response:
    """Delete the webhook."""
    service.delete_webhook(current.caller, webhookId)
    return current.redirect("/webhooks?done=deleted")


@page("/dashboard/webhooks/{webhookId}/enable", "POST")
def enable_webhook(current: Page, webhookId: str) -> Response:
    """Enable: active again with failCount 0."""
    service.set_active(current.caller, webhookId, True)
    return current.redirect(f"/webhooks/{webhookId}?done=enabled")


@page("/dashboard/webhooks/{webhookId}/disable", "POST")
def disable_webhook(current: Page, webhookId: str) -> Response:
    """Disable: no deliveries until enabled."""
    service.set_active(current.caller, webhookId, False)
    return current.redirect(f"/webhooks/{webhookId}?done=disabled")


@page("/dashboard/webhooks/{webhookId}/rotate", "POST")
def rotate_secret(current: Page, webhookId: str) -> Response:
    """New secret, shown once on the answer page; the old one verifies for 24 h more."""
    rotated = service.rotate_secret(current.caller, webhookId)
    return current.render(
        "webhook.html",
        nav="webhooks",
        webhook=rotated.webhook,
        overview=next((w for w in service.overview(current.caller) if w.id == webhookId), None),
        attempts=service.newest_attempts(current.caller, webhookId, LOG_SIZE),
        supported_events=catalogue.SUPPORTED_EVENTS,
        overlap_hours=signing.PREVIOUS_SECRET_HOURS,
        notice=None,
        rotated=rotated,
    )


@page("/dashboard/webhooks/{webhookId}/test", "POST")
def send_test_event(current: Page, webhookId: str) -> Response:
    """Queue a test event of the chosen type to this webhook only."""
    event_type = current.field("event_type")
    data = samples.sample_data(event_type, current.caller.user_id) if event_type in samples.DATA_MODELS else {}
    service.send_test_event(current.caller, webhookId, event_type, data)
    return current.redirect(f"/webhooks/{webhookId}?done=test-sent")


@page("/dashboard/webhooks/{webhookId}/redeliver", "POST")
def redeliver(current: Page, webhookId: str) -> Response:
    """Queue one more attempt of a logged delivery (same event, same webhook-id)."""
    service.redeliver(current.caller, webhookId, current.field("event_id"))
    return current.redirect(f"/webhooks/{webhookId}?done=redelivered")


@page("/dashboard/webhooks/{webhookId}/attempts/{token}")
def attempt(current: Page, webhookId: str, token: str) -> Response:
    """One attempt's request body and response excerpt (an htmx fragment, or a page without JS)."""
    found = service.get_attempt(current.caller, webhookId, token)
    template = "attempt_fragment.html" if current.request.headers.get("hx-request") else "attempt.html"
    return current.render(template, nav="webhooks", webhook_id=webhookId, attempt=found)
