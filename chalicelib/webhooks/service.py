"""Webhook rules for the API (spec §2 "Webhook", §4, §5; DESIGN §2 "Webhooks").

* Any user may register any number of webhooks (spec §5.5, §8: unlimited).
* The URL must pass the address rules (:mod:`chalicelib.webhooks.addresses`) at registration;
  they are checked again at every delivery.
* A user sees, deletes and reads the delivery log of its own webhooks only; someone else's
  id is NOT_FOUND, as is an unknown one (no existence oracle).

The rules reach storage and delivery through :data:`DEFAULT_PORTS` (:mod:`chalicelib.webhooks.ports`);
the unit tests replace them with :func:`use_ports`.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime, timedelta
from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.kernel.pagination import Deleted, PageQuery
from chalicelib.kernel.ports import Seam
from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import Transaction
from chalicelib.webhooks import addresses, operational, repository, signing
from chalicelib.webhooks.catalogue import DEFAULT_EVENTS, SUPPORTED_EVENTS
from chalicelib.webhooks.delivery import attempt_log, lanes, redelivery
from chalicelib.webhooks.delivery.envelope import Delivery
from chalicelib.webhooks.delivery.records import AttemptEntry, AttemptRecord
from chalicelib.webhooks.models import (
    DeliveryAttempt,
    DeliveryHealth,
    DeliveryPage,
    HealthBucket,
    HealthSeries,
    LoggedAttempt,
    RecoverResult,
    RecoveryReport,
    ScheduledRetry,
    SecretRotated,
    Webhook,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookOverview,
)
from chalicelib.webhooks.ports import Ports
from chalicelib.webhooks.records import WebhookEdit, WebhookRecord

#: Seconds a registration may spend resolving the URL's host.
REGISTRATION_RESOLVE_SECONDS = 5.0

#: The real repository, log, redelivery and commit; mypy checks here that each module satisfies its port.
DEFAULT_PORTS = Ports(repository=repository, attempt_log=attempt_log, redelivery=redelivery, commit=Transaction.commit)
_seam = Seam(DEFAULT_PORTS)
#: ``use_ports(replacement)``: the service reads and writes through ``replacement``; returns the
#: ports it replaced (:meth:`chalicelib.kernel.ports.Seam.use`).
use_ports = _seam.use


def _created_view(item: WebhookRecord) -> WebhookCreated:
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


def to_model(item: WebhookRecord) -> Webhook:
    """The API view of a webhook item (with ``failCount``)."""
    return Webhook(**_created_view(item).model_dump(), failCount=int(item.get("failCount") or 0))


def check_url(url: str) -> None:
    """Apply the address rules to ``url`` at registration.

    Raises
    ------
    RuleViolation
        ``details`` field ``url``: not https (unless the stage allows http), malformed, an
        unresolvable host, or a host with any private, loopback, link-local, CGNAT,
        unique-local, IPv4-mapped, unspecified, multicast or reserved address.
    """
    try:
        addresses.allowed_target(url, settings().ALLOW_INSECURE_WEBHOOKS, REGISTRATION_RESOLVE_SECONDS)
    except addresses.UrlRejected as exc:
        raise errors.RuleViolation.for_field("url", str(exc), f"Invalid url: {exc}") from exc


def create_webhook(caller: Caller, body: WebhookCreate) -> WebhookCreated:
    """Register a webhook for the caller: active, ``failCount`` 0, a new ``whsec_`` secret.

    Raises
    ------
    RuleViolation
        A URL that breaks the address rules (field ``url``); unknown events are rejected by
        the body model (field ``events``).
    """
    check_url(body.url)
    now = clock.iso()
    item: WebhookRecord = {
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
        "lane": _seam.ports.repository.next_lane_number(caller.user_id),  # the owner's lanes in turn
    }
    _seam.ports.repository.create(item)
    return _created_view(item)


def list_webhooks(caller: Caller) -> WebhookList:
    """Every webhook of the caller, newest first, with ``failCount`` and ``secret``."""
    return WebhookList(webhooks=[to_model(item) for item in _seam.ports.repository.list_by_owner(caller.user_id)])


def require_own(caller: Caller, webhook_id: str) -> WebhookRecord:
    """The caller's webhook ``webhook_id``.

    Raises
    ------
    NotFound
        Unknown, or someone else's.
    """
    item = _seam.ports.repository.get(webhook_id)
    if item is None or item.get("ownerId") != caller.user_id:
        raise errors.NotFound(f"Webhook '{webhook_id}' not found")
    return item


def delete_webhook(caller: Caller, webhook_id: str) -> Deleted:
    """Delete the caller's webhook; deliveries to it stop, pending retries are dropped.

    Listings that name it in ``webhookIds`` keep the id; it simply matches nothing.

    Raises
    ------
    NotFound
        Unknown, or someone else's.
    """
    if not _seam.ports.repository.delete_owned(webhook_id, caller.user_id):
        raise errors.NotFound(f"Webhook '{webhook_id}' not found")
    return Deleted(id=webhook_id)


def forget_lane_counter_op(owner_id: str) -> TransactItem:
    """Transaction ``Delete`` of the owner's webhook lane counter (the account erasure, after
    :func:`delete_webhook` of each of their webhooks)."""
    return _seam.ports.repository.forget_lane_counter_op(owner_id)


def list_deliveries(caller: Caller, webhook_id: str, query: PageQuery) -> DeliveryPage:
    """The delivery log of the caller's webhook, newest first, one page read from the log's key order.

    The log lists the attempts of the last :data:`~chalicelib.webhooks.delivery.attempt_log.RETENTION_DAYS`
    UTC days and today; ``total`` is exact (the log's day counters). A page reads its
    ``pageSize + 1`` attempts (plus the ``(page - 1) x pageSize`` before it for ``page=N`` without a
    cursor), the webhook and the counter: three DynamoDB calls whatever the log's length.

    Raises
    ------
    NotFound
        Unknown, or someone else's webhook.
    RuleViolation
        ``cursor`` edited or of another query (another webhook, page size), field ``cursor``.
    """
    require_own(caller, webhook_id)
    position = query.position_in("webhook.deliveries", webhook_id)
    moment = clock.now()
    skip = 0 if position.key is not None else position.offset
    page = _seam.ports.attempt_log.attempts_page(webhook_id, moment, position.page_size, after=position.key, skip=skip)
    total = _seam.ports.attempt_log.count_attempts(webhook_id, moment)
    last = page.attempts[-1]["deliveryKey"] if page.attempts else None
    return DeliveryPage(
        deliveries=[attempt_model(item) for item in page.attempts],
        total=total,
        page=position.page,
        pageSize=position.page_size,
        nextCursor=position.next_cursor(page.more, last),
    )


def redeliver(caller: Caller, webhook_id: str, event_id: str) -> Delivery:
    """Queue one more attempt of delivering ``event_id`` to the caller's webhook (same ``webhook-id``).

    The attempt runs in the webhook's lane under the failure policy: nothing is sent while the
    webhook is inactive (see :mod:`chalicelib.webhooks.delivery.redelivery`).

    Returns
    -------
    Delivery
        The queued attempt (its ``attempt`` number).

    Raises
    ------
    NotFound
        Unknown webhook, someone else's, or no delivery of ``event_id`` to it.
    """
    webhook = require_own(caller, webhook_id)
    try:
        return _seam.ports.redelivery.redeliver(
            webhook_id, event_id, caller.user_id, webhook.get("lane"), bool(webhook.get("breakerOpenedAt"))
        )
    except redelivery.UnknownDelivery as exc:
        raise errors.NotFound(f"No delivery of event '{event_id}' to webhook '{webhook_id}'") from exc


def attempt_model(item: AttemptEntry) -> DeliveryAttempt:
    """The API view of a logged attempt (``GET /v1/webhooks/{id}/deliveries``, the events API, the Dashboard)."""
    # Every field but ``id`` has the stored attribute's name; absent optional attributes are ``None``.
    return DeliveryAttempt.model_validate({**item, "id": item["deliveryId"]})


# --- Dashboard operations (spec §4 note 1: editing, toggling and secret regeneration are not API
# operations; the Dashboard calls these, with the same rules as the API's create) -------------


def _owned_or_404(item: WebhookRecord | None, webhook_id: str) -> WebhookRecord:
    if item is None:
        raise errors.NotFound(f"Webhook '{webhook_id}' not found")
    return item


def update_webhook(caller: Caller, webhook_id: str, body: WebhookCreate) -> Webhook:
    """Change name, url and events of the caller's webhook (the same validation and SSRF rules as
    registration); the secret, active state and ``failCount`` are kept.

    Raises
    ------
    RuleViolation
        A URL that breaks the address rules (field ``url``).
    NotFound
        Unknown, or someone else's.
    """
    require_own(caller, webhook_id)  # 404 before resolving a URL for someone else's id
    check_url(body.url)
    changes: WebhookEdit = {"name": body.name, "url": body.url, "events": body.events, "updatedAt": clock.iso()}
    return to_model(_owned_or_404(_seam.ports.repository.update_owned(webhook_id, caller.user_id, changes), webhook_id))


def set_active(caller: Caller, webhook_id: str, active: bool) -> Webhook:
    """Enable or disable the caller's webhook.

    Enabling sets ``failCount`` to 0, so deliveries resume with the next event and it takes five
    new consecutive failures to switch it off again (spec §8). Events that happened while it was
    inactive are not replayed (they were skipped, as spec §3 says for inactive webhooks; the
    events API lists them). Enabling an inactive webhook writes ``webhook.enabled`` in the same
    transaction; enabling an active one only resets ``failCount`` (no event).

    Raises
    ------
    NotFound
        Unknown, or someone else's.
    """
    now = clock.iso()
    if active:
        current = require_own(caller, webhook_id)
        if not current.get("active"):
            event = operational.enabled_event_op(current, now)
            if _seam.ports.repository.enable_inactive_owned(webhook_id, caller.user_id, now, event):
                return to_model(_owned_or_404(_seam.ports.repository.get(webhook_id, consistent=True), webhook_id))
        # Active already (or enabled meanwhile by another request): reset failCount, no event.
    switch = _seam.ports.repository.enable_owned if active else _seam.ports.repository.disable_owned
    item = switch(webhook_id, caller.user_id, now)
    return to_model(_owned_or_404(item, webhook_id))


def rotate_secret(caller: Caller, webhook_id: str) -> SecretRotated:
    """Give the caller's webhook a new secret; the old one keeps verifying for
    :data:`~chalicelib.webhooks.signing.PREVIOUS_SECRET_HOURS` hours (deliveries carry a
    Standard Webhooks signature for each; ``X-Webhook-Signature`` uses the new one only).

    Raises
    ------
    NotFound
        Unknown, or someone else's.
    Conflict
        Rotated concurrently by another request (retry).
    """
    item = require_own(caller, webhook_id)
    moment = clock.now()
    expires = clock.iso(moment + timedelta(hours=signing.PREVIOUS_SECRET_HOURS))
    new = signing.new_secret()
    updated = _seam.ports.repository.rotate_owned(webhook_id, caller.user_id, str(item["secret"]), new, expires, clock.iso(moment))
    if updated is None:
        raise errors.Conflict("The secret was changed by another request; reload and try again")
    return SecretRotated(webhook=to_model(updated), secret=new, previousSecretExpiresAt=expires)


def overview(caller: Caller) -> list[WebhookOverview]:
    """Every webhook of the caller, newest first, each with its last logged attempt (one Query for
    the list plus one single-item Query per webhook: the cost grows with the answer)."""
    views = []
    for item in _seam.ports.repository.list_by_owner(caller.user_id):
        last = _seam.ports.attempt_log.newest_attempts(item["webhookId"], 1)
        previous_expiry = item.get("previousSecretExpiresAt")
        if previous_expiry and signing.previous_if_valid(item.get("previousSecret"), previous_expiry, clock.now()) is None:
            previous_expiry = None  # the window is over
        views.append(
            WebhookOverview(
                **to_model(item).model_dump(),
                previousSecretExpiresAt=previous_expiry,
                lastDelivery=attempt_model(last[0]) if last else None,
                disabledAt=None if item.get("active") else item.get("disabledAt"),
                disabledReason=None if item.get("active") else item.get("disabledReason"),
                lastFailure=None if item.get("active") else item.get("lastFailure"),
            )
        )
    return views


def get_webhook(caller: Caller, webhook_id: str) -> Webhook:
    """The caller's webhook.

    Raises
    ------
    NotFound
        Unknown, or someone else's.
    """
    return to_model(require_own(caller, webhook_id))


def _logged_model(item: AttemptRecord) -> LoggedAttempt:
    token = base64.urlsafe_b64encode(str(item["deliveryKey"]).encode()).decode().rstrip("=")
    headers = item.get("requestHeaders")
    return LoggedAttempt(**attempt_model(item).model_dump(), token=token, requestBody=item.get("requestBody"),
                         requestHeaders={str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else None)


def get_attempt(caller: Caller, webhook_id: str, token: str) -> LoggedAttempt:
    """One logged attempt of the caller's webhook by the ``token`` of :func:`newest_attempts`.

    Raises
    ------
    NotFound
        Unknown or someone else's webhook; a token that names no logged attempt.
    """
    require_own(caller, webhook_id)
    try:
        key = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("utf-8")
    except (binascii.Error, ValueError) as exc:
        raise errors.NotFound("Delivery attempt not found") from exc
    item = _seam.ports.attempt_log.get_logged(webhook_id, key)
    if item is None:
        raise errors.NotFound("Delivery attempt not found")
    return _logged_model(item)


def send_test_event(caller: Caller, webhook_id: str, event_type: str, data: dict[str, Any]) -> str:
    """Queue a test event of ``event_type`` for the caller's webhook only.

    The event goes through the normal outbox (so it is delivered, signed, retried and logged
    exactly like a real one) with ``targetWebhookId`` (only this webhook receives it) and
    ``test: true`` (the envelope says so, spec §6).

    Parameters
    ----------
    data:
        The event's ``data``: a realistic sample of the type's payload model (the Dashboard
        builds it with :mod:`chalicelib.dashboard.samples`).

    Returns
    -------
    str
        The new event's id (``evt_...``).

    Raises
    ------
    NotFound
        Unknown, or someone else's webhook.
    RuleViolation
        ``eventType`` unknown, or not one the webhook subscribes to.
    Conflict
        The webhook is inactive (inactive webhooks receive nothing; enable it first).
    """
    item = require_own(caller, webhook_id)
    if event_type not in SUPPORTED_EVENTS:
        raise errors.RuleViolation.for_field("eventType", f"must be one of {', '.join(SUPPORTED_EVENTS)}")
    if event_type not in (item.get("events") or DEFAULT_EVENTS):
        raise errors.RuleViolation.for_field("eventType", f"the webhook is not subscribed to {event_type}")
    if not item.get("active"):
        raise errors.Conflict("The webhook is inactive; enable it before sending a test event")
    op = outbox.event_op(event_type, data, {"recipientId": caller.user_id}, target_webhook_id=webhook_id, test=True)
    _seam.ports.commit(Transaction().add("event", op))
    return outbox.event_id_of(op)


#: Most failed deliveries one "Recover failed deliveries" queues (each is one SQS message in the
#: webhook's lane); the log read behind it examines at most ``attempt_log.SCAN_BUDGET`` entries.
RECOVER_LIMIT = 100


def filtered_attempts(caller: Caller, webhook_id: str, limit: int, success: bool | None = None,
                      event: str | None = None, event_id: str | None = None,
                      since: datetime | None = None) -> list[LoggedAttempt]:
    """The ``limit`` newest logged attempts of the caller's webhook with that outcome, event type and
    event id, at or after ``since`` (``None``: any), newest first
    (:func:`chalicelib.webhooks.delivery.attempt_log.filtered_attempts`).

    Raises
    ------
    NotFound
        Unknown, or someone else's webhook.
    """
    require_own(caller, webhook_id)
    if success is None and not event and not event_id and since is None:
        return [_logged_model(item) for item in _seam.ports.attempt_log.newest_attempts(webhook_id, limit)]
    found = _seam.ports.attempt_log.filtered_attempts(webhook_id, clock.now(), limit, success=success, event=event, event_id=event_id,
                                          since=clock.iso(since) if since is not None else None)
    return [_logged_model(item) for item in found.attempts]


def recover_failed(caller: Caller, webhook_id: str, since: datetime) -> RecoverResult:
    """Re-send every delivery to the caller's webhook that failed since ``since`` (Svix's "recover"):
    each event whose newest attempt logged at or after ``since`` failed gets one more attempt, queued
    in the webhook's lane with the same ``webhook-id`` and the next attempt number, oldest first.
    Each is sent once (no retry after it) and counted on the webhook's recovery record as sent or
    not sent (the webhook inactive when its turn came): :func:`last_recovery` reports them.

    Bounded: at most :data:`RECOVER_LIMIT` deliveries, from at most ``attempt_log.SCAN_BUDGET`` log
    entries; ``complete`` says whether everything since ``since`` was covered (if not, recover again
    from a later time, or after these have run).

    Raises
    ------
    NotFound
        Unknown, or someone else's webhook.
    Conflict
        The webhook is inactive (nothing would be sent: enable it first).
    """
    item = require_own(caller, webhook_id)
    if not item.get("active"):
        raise errors.Conflict("The webhook is inactive; enable it first, then recover its failed deliveries")
    failed = _seam.ports.attempt_log.failed_since(webhook_id, clock.iso(since), RECOVER_LIMIT)
    recovery_id = clock.new_id("rcv")

    def record(planned: list[Delivery]) -> None:  # before the first attempt can run, so each is counted
        _seam.ports.repository.start_recovery(webhook_id, recovery_id, clock.iso(), len(planned))

    try:
        queued = _seam.ports.redelivery.redeliver_many(webhook_id, failed.event_ids, caller.user_id, item.get("lane"), recovery_id, record,
                                                       slow=bool(item.get("breakerOpenedAt")))
    except lanes.EnqueueFailed as exc:  # never queued: never sent
        _seam.ports.repository.count_recovery(webhook_id, recovery_id, sent=False, amount=len(exc.failed))
        raise
    return RecoverResult(queued=len(queued), complete=failed.complete)


def last_recovery(caller: Caller, webhook_id: str) -> RecoveryReport | None:
    """The latest "Recover failed deliveries" of the caller's webhook and how its attempts went
    (``None``: never recovered); one GetItem.

    Raises
    ------
    NotFound
        Unknown, or someone else's webhook.
    """
    item = require_own(caller, webhook_id)
    if not item.get("recoveryId"):
        return None
    return RecoveryReport(at=str(item.get("recoveryAt") or ""), queued=int(item.get("recoveryQueued") or 0),
                          sent=int(item.get("recoverySent") or 0), notSent=int(item.get("recoveryNotSent") or 0))


def scheduled_retries(caller: Caller, webhook_id: str, limit: int = 100) -> list[ScheduledRetry]:
    """Failed deliveries among the ``limit`` newest attempts whose retry is still scheduled (its
    ``nextAttemptAt`` is in the future and no later attempt is logged): what enabling the webhook
    lets through when due (a retry due while it is inactive is dropped).

    Raises
    ------
    NotFound
        Unknown, or someone else's webhook.
    """
    require_own(caller, webhook_id)
    now = clock.iso()
    seen: set[str] = set()
    pending = []
    for entry in _seam.ports.attempt_log.newest_attempts(webhook_id, limit):
        if entry["eventId"] in seen:
            continue
        seen.add(entry["eventId"])
        due = entry.get("nextAttemptAt")
        if not entry["success"] and due and due > now:
            pending.append(ScheduledRetry(eventId=entry["eventId"], event=entry["event"], nextAttemptAt=due))
    return sorted(pending, key=lambda retry: retry.nextAttemptAt)


def delivery_health(caller: Caller, webhook_id: str, now: datetime) -> DeliveryHealth:
    """Attempts to the caller's webhook by outcome: per hour over the 24 hours up to ``now`` (the
    current hour last) and per UTC day over the 7 days up to ``now`` (today last).

    Costs one GetItem (ownership) and one Query of at most 168 hourly stats items
    (:func:`chalicelib.webhooks.delivery.attempt_log.hourly_outcomes`), whatever the number of attempts.

    Raises
    ------
    NotFound
        Unknown, or someone else's webhook.
    """
    require_own(caller, webhook_id)
    hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    today = hour.replace(hour=0)
    first_day = today - timedelta(days=attempt_log.HEALTH_DAYS - 1)
    counts = _seam.ports.attempt_log.hourly_outcomes(webhook_id, first_day, hour)

    def bucket(start: datetime, hours: int) -> HealthBucket:
        keys = [f"{start + timedelta(hours=h):%Y-%m-%dT%H}" for h in range(hours)]
        found = [counts.get(k, (0, 0)) for k in keys]
        return HealthBucket(start=clock.iso(start), succeeded=sum(f[0] for f in found), failed=sum(f[1] for f in found))

    hourly = [bucket(hour - timedelta(hours=back), 1) for back in range(23, -1, -1)]
    daily = [bucket(first_day + timedelta(days=d), 24) for d in range(attempt_log.HEALTH_DAYS)]
    return DeliveryHealth(hourly=HealthSeries(buckets=hourly), daily=HealthSeries(buckets=daily))
