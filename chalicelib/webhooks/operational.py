"""The operational webhook events: ``webhook.disabled`` and ``webhook.enabled`` outbox items.

Each is written in the same transaction as the change it announces (the update that sets
``active`` false when the failure policy switches a webhook off, or true when its owner
switches it on again), addressed to the webhook's owner (``routing.recipientId``), so it is
always listed by the events API and delivered to the owner's *other* active webhooks that name
it in their ``events`` (:mod:`chalicelib.webhooks.delivery.recipients`). The ``data`` models
are the catalogue's (:class:`~chalicelib.webhooks.catalogue.WebhookDisabled`,
:class:`~chalicelib.webhooks.catalogue.WebhookEnabled`).
"""

from __future__ import annotations

from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.webhooks.catalogue import WebhookDisabled, WebhookEnabled
from chalicelib.webhooks.records import WebhookRecord


def _routing(webhook: WebhookRecord) -> dict[str, str]:
    return {"recipientId": webhook["ownerId"], "webhookId": webhook["webhookId"]}


def disabled_event_op(
    webhook: WebhookRecord, disabled_reason: str, fail_count: int, last_failure: str | None, disabled_at: str
) -> TransactItem:
    """The outbox ``Put`` of ``webhook.disabled`` for ``webhook`` (as read before the change).

    Parameters
    ----------
    webhook:
        The webhook being switched off (its id, owner, name and url are announced).
    disabled_reason:
        The ``disabledReason`` the same update stores.
    fail_count:
        The consecutive failures that reached the limit.
    last_failure:
        The last failure's outcome (``HTTP 503``, ``timeout: ...``), or ``None``.
    disabled_at:
        ISO 8601 UTC of the change (the ``disabledAt`` the same update stores).
    """
    data = WebhookDisabled(
        webhookId=webhook["webhookId"], name=webhook.get("name") or "", url=webhook["url"], disabledReason=disabled_reason,
        failCount=fail_count, lastFailure=last_failure, disabledAt=disabled_at,
    )
    return outbox.event_op(outbox.WEBHOOK_DISABLED, data.model_dump(mode="json"), _routing(webhook))


def enabled_event_op(webhook: WebhookRecord, enabled_at: str) -> TransactItem:
    """The outbox ``Put`` of ``webhook.enabled`` for ``webhook`` (as read before the change);
    ``enabled_at``: ISO 8601 UTC of the change."""
    data = WebhookEnabled(webhookId=webhook["webhookId"], name=webhook.get("name") or "", url=webhook["url"], enabledAt=enabled_at)
    return outbox.event_op(outbox.WEBHOOK_ENABLED, data.model_dump(mode="json"), _routing(webhook))
