"""Webhooks pages: list and add, one webhook's settings, actions and delivery log."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from chalice.app import Response

from chalicelib.dashboard.web import Page, field_errors, page, page_status
from chalicelib.edge.http import parse_model
from chalicelib.kernel import clock, errors
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first page that uses them, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.dashboard import charts, samples
    from chalicelib.webhooks import catalogue, models, service, signing

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
    "rotated": "Secret rotated.",
}

#: The settings form's fields in page order (the first invalid one is focused).
FIELDS = ["name", "url", "events"]

#: "Recover failed deliveries" choices: label -> hours back from now (Svix's recover offers such periods).
RECOVER_PERIODS = {"1 hour": 1, "6 hours": 6, "24 hours": 24, "3 days": 72, "7 days": 168, "30 days": 720}

#: Delivery log "Outcome" filter values -> ``success`` filter.
OUTCOMES = {"": None, "succeeded": True, "failed": False}
#: The delivery log's "Period" choices: value -> hours back from now ("": the whole log, 30 days).
PERIODS = {"": None, "1h": 1, "24h": 24, "7d": 24 * 7}
#: An event id as this service issues them (``evt_`` and a ULID); anything else is refused.
_EVENT_ID = re.compile(r"^evt_[0-9A-Za-z_-]{1,100}$")


def _form_values(current: Page) -> dict[str, object]:
    events = [e for e in current.form().get("events", []) if e]
    return {"name": current.field("name") or None, "url": current.field("url").strip(), "events": events or None}


def _settings_form(current: Page) -> models.WebhookCreate:
    return parse_model(models.WebhookCreate, _form_values(current))


def _refused_form(current: Page, exc: errors.DomainError, template: str, **context: Any) -> Response:
    """A refused settings form shown again (400) with its values and each error tied to its field;
    the first invalid field is focused (``autofocus``). Nothing was changed, so a reload is harmless."""
    found, first = field_errors(exc, FIELDS)
    values = _form_values(current)
    return current.render(template, page_status(exc), nav="webhooks", supported_events=catalogue.SUPPORTED_EVENTS,
                          default_events=catalogue.DEFAULT_EVENTS, errors=found, first_invalid=first,
                          error_message=exc.message, values=values, **context)


@page("/dashboard/webhooks")
def webhooks(current: Page) -> Response:
    """Every webhook of the signed-in user, and the "Add webhook" form."""
    return current.render(
        "webhooks.html",
        nav="webhooks",
        webhooks=service.overview(current.caller),
        supported_events=catalogue.SUPPORTED_EVENTS,
        default_events=catalogue.DEFAULT_EVENTS,
        notice=NOTICES.get(current.query("done")),
    )


@page("/dashboard/webhooks", "POST")
def add_webhook(current: Page) -> Response:
    """Register a webhook with the API's rules (validation, SSRF checks)."""
    try:
        created = service.create_webhook(current.caller, _settings_form(current))
    except errors.RuleViolation as exc:
        return _refused_form(current, exc, "webhooks.html", webhooks=service.overview(current.caller))
    return current.redirect(f"/webhooks/{created.id}?done=created")


def _webhook_page(current: Page, webhook_id: str, status: int = 200, **extra: Any) -> Response:
    item = service.get_webhook(current.caller, webhook_id)
    outcome = current.query("outcome")
    event = current.query("event")
    if outcome not in OUTCOMES:
        raise errors.RuleViolation.for_field("outcome", "must be succeeded or failed")
    if event and event not in catalogue.SUPPORTED_EVENTS:
        raise errors.RuleViolation.for_field("event", "is not an event type of the catalog")
    period = current.query("period")
    if period not in PERIODS:
        raise errors.RuleViolation.for_field("period", "must be 1h, 24h or 7d")
    event_id = current.query("event_id").strip()
    if event_id and not _EVENT_ID.fullmatch(event_id):
        raise errors.RuleViolation.for_field("event_id", "must be an event id such as evt_01J9ZK7Q2Y4V8W3X5N6M7P8R9S")
    hours = PERIODS[period]
    since = clock.now() - timedelta(hours=hours) if hours else None
    rotated = current.take_flash("webhook-rotated")
    if rotated and rotated.get("webhookId") != webhook_id:
        rotated = None
    context: dict[str, Any] = {
        "nav": "webhooks",
        "webhook": item,
        "overview": next((w for w in service.overview(current.caller) if w.id == webhook_id), None),
        "attempts": service.filtered_attempts(current.caller, webhook_id, LOG_SIZE, OUTCOMES[outcome], event or None,
                                              event_id or None, since),
        "filters": {"outcome": outcome, "event": event, "period": period, "event_id": event_id},
        "supported_events": catalogue.SUPPORTED_EVENTS,
        "default_events": catalogue.DEFAULT_EVENTS,
        "overlap_hours": signing.PREVIOUS_SECRET_HOURS,
        "notice": _notice(current),
        "rotated": rotated,
        "retries": [] if item.active else service.scheduled_retries(current.caller, webhook_id),
        "recover_periods": RECOVER_PERIODS,
        "recovery": service.last_recovery(current.caller, webhook_id),
        "health": _health(current, webhook_id),
        **extra,
    }
    return current.render("webhook.html", status, **context)


def _health(current: Page, webhook_id: str) -> dict[str, Any]:
    """The delivery-health charts (inline SVG) and their series, for the webhook page."""
    health = service.delivery_health(current.caller, webhook_id, clock.now())
    return {
        "hourly": health.hourly, "daily": health.daily,
        "hourly_svg": charts.bar_chart("chart-hourly", "Delivery attempts per hour, last 24 hours (UTC)", health.hourly,
                                       lambda t: f"{t:%H}:00", every=4),
        "daily_svg": charts.bar_chart("chart-daily", "Delivery attempts per day, last 7 days (UTC)", health.daily,
                                      lambda t: f"{t:%a %d}"),
        "hourly_rate": charts.rate_text(health.hourly), "daily_rate": charts.rate_text(health.daily),
    }


def _notice(current: Page) -> str | None:
    if current.query("done") == "recovered":
        queued = current.query("queued", "")
        # Only a count the recover could have queued: a crafted link shows no notice, not its text.
        if not (re.fullmatch(r"0|[1-9][0-9]{0,2}", queued) and int(queued) <= service.RECOVER_LIMIT):
            return None
        more = "" if current.query("complete") == "1" else " The recover stopped at its bound; run it again for older failures."
        return f"Recovery queued: {queued} failed deliveries will be sent again, each as a new attempt with the same webhook-id.{more}"
    return NOTICES.get(current.query("done"))


@page("/dashboard/webhooks/{webhookId}")
def webhook(current: Page, webhookId: str) -> Response:
    """One webhook: settings form, actions and its delivery log (filtered by ``outcome`` and ``event``)."""
    return _webhook_page(current, webhookId)


@page("/dashboard/webhooks/{webhookId}", "POST")
def save_webhook(current: Page, webhookId: str) -> Response:
    """Save name, url and events (the API's validation and SSRF rules)."""
    try:
        service.update_webhook(current.caller, webhookId, _settings_form(current))
    except errors.RuleViolation as exc:
        found, first = field_errors(exc, FIELDS)
        return _webhook_page(current, webhookId, page_status(exc), errors=found, first_invalid=first, error_message=exc.message,
                             values=_form_values(current))
    return current.redirect(f"/webhooks/{webhookId}?done=saved")


def _confirm(current: Page, webhook_id: str, action: str, heading: str, button: str, explanation: str) -> Response:
    item = service.get_webhook(current.caller, webhook_id)  # 404 for an unknown or foreign id
    return current.render("confirm.html", nav="webhooks", heading=heading, explanation=explanation, button=button,
                          action=f"{current.root}/webhooks/{webhook_id}/{action}", back=f"{current.root}/webhooks/{webhook_id}",
                          subject=item.name, danger=True)


@page("/dashboard/webhooks/{webhookId}/delete")
def confirm_delete_webhook(current: Page, webhookId: str) -> Response:
    """Confirmation page of "Delete webhook" (works without JavaScript)."""
    return _confirm(current, webhookId, "delete", "Delete this webhook?", "Delete webhook",
                    "Deliveries stop at once and its delivery log is no longer shown. This cannot be undone.")


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


@page("/dashboard/webhooks/{webhookId}/rotate")
def confirm_rotate_secret(current: Page, webhookId: str) -> Response:
    """Confirmation page of "Rotate secret"."""
    return _confirm(current, webhookId, "rotate", "Rotate the signing secret?", "Rotate secret",
                    f"A new secret signs every delivery from now on; the current one keeps verifying for "
                    f"{signing.PREVIOUS_SECRET_HOURS} hours, so update your receiver within that time.")


@page("/dashboard/webhooks/{webhookId}/rotate", "POST")
def rotate_secret(current: Page, webhookId: str) -> Response:
    """New secret, carried once to the webhook's page by the session's flash (Post/Redirect/Get: a
    reload of that page shows the webhook, never rotates again); the old one verifies for 24 h more."""
    rotated = service.rotate_secret(current.caller, webhookId)
    current.put_flash("webhook-rotated", {"webhookId": webhookId, "secret": rotated.secret,
                                          "previousSecretExpiresAt": rotated.previousSecretExpiresAt})
    return current.redirect(f"/webhooks/{webhookId}?done=rotated")


@page("/dashboard/webhooks/{webhookId}/test", "POST")
def send_test_event(current: Page, webhookId: str) -> Response:
    """Queue a test event of the chosen type to this webhook only."""
    event_type = current.field("event_type")
    data = samples.sample_data(event_type, current.caller.user_id) if event_type in samples.DATA_MODELS else {}
    service.send_test_event(current.caller, webhookId, event_type, data)
    return current.redirect(f"/webhooks/{webhookId}?done=test-sent")


@page("/dashboard/webhooks/{webhookId}/redeliver", "POST")
def redeliver(current: Page, webhookId: str) -> Response:
    """Queue one more attempt of a logged delivery (same event, same webhook-id).

    An ``event_id`` that is not an event id (empty, blank, too long for a key) is a 400 page, before any read.
    """
    event_id = current.field("event_id").strip()
    if not _EVENT_ID.fullmatch(event_id):
        raise errors.RuleViolation.for_field("event_id", "must be an event id such as evt_01J9ZK7Q2Y4V8W3X5N6M7P8R9S")
    service.redeliver(current.caller, webhookId, event_id)
    return current.redirect(f"/webhooks/{webhookId}?done=redelivered")


@page("/dashboard/webhooks/{webhookId}/recover", "POST")
def recover(current: Page, webhookId: str) -> Response:
    """Re-send every delivery that failed since the chosen period (field ``since``, a label of
    :data:`RECOVER_PERIODS`), each as a new attempt with its webhook-id, in the webhook's lane."""
    service.get_webhook(current.caller, webhookId)  # someone else's id is 404 whatever the form says
    hours = RECOVER_PERIODS.get(current.field("since"))
    if hours is None:
        raise errors.RuleViolation.for_field("since", f"choose one of: {', '.join(RECOVER_PERIODS)}")
    result = service.recover_failed(current.caller, webhookId, clock.now() - timedelta(hours=hours))
    return current.redirect(f"/webhooks/{webhookId}?done=recovered&queued={result.queued}&complete={int(result.complete)}")


@page("/dashboard/webhooks/{webhookId}/attempts/{token}")
def attempt(current: Page, webhookId: str, token: str) -> Response:
    """One attempt's request headers and body and its response excerpt, JSON bodies indented (an htmx
    fragment, or a page without JS)."""
    found = service.get_attempt(current.caller, webhookId, token)
    template = "attempt_fragment.html" if current.request.headers.get("hx-request") else "attempt.html"
    return current.render(template, nav="webhooks", webhook_id=webhookId, attempt=found,
                          request_body=pretty_json(found.requestBody), response_body=pretty_json(found.responseBody))


def pretty_json(text: str | None) -> str | None:
    """``text`` indented (2 spaces, keys in their order) when it is JSON, else as it is (``None`` stays)."""
    if not text:
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:  # not JSON (or a response cut at 4 KiB): shown as received
        return text


@page("/dashboard/event-catalog")
def event_catalog(current: Page) -> Response:
    """Every webhook event type with its description, recipients, JSON schema and an example payload,
    from the one event registry (:data:`chalicelib.webhooks.catalogue.EVENT_TYPES`) that the OpenAPI
    document's ``webhooks`` section is generated from."""
    import json

    entries = []
    for name, entry in catalogue.EVENT_TYPES.items():
        model = catalogue.envelope_model(name)
        example = {"event": name, "timestamp": clock.iso(), "test": False, "data": samples.sample_data(name, "usr_01EXAMPLE")}
        model.model_validate(example)  # the example is a valid delivery body by the schema shown beside it
        entries.append({
            "name": name,
            "anchor": name.replace(".", "-"),
            "summary": entry.summary,
            "recipients": entry.recipients,
            "schema": json.dumps(model.model_json_schema(), indent=2),
            "example": json.dumps(example, indent=2),
        })
    return current.render("event_catalog.html", nav="events", title="Event catalog", events=entries)
