"""Which webhooks receive an event (spec §6 "Event kinds"; DESIGN §2 "Webhooks").

* an event addressed to one webhook (``targetWebhookId``, e.g. the Dashboard's test event):
  that webhook only, when it exists, is active and is owned by ``routing.recipientId`` (when
  given); a ``test`` event goes to it whatever its subscriptions;

* ``match_request.*``: the webhooks bound to the listing through ``webhookIds`` (the
  listing's ids at event time, ``routing.webhookIds``) that the listing owner
  (``routing.recipientId``) owns;
* ``message.new``: every webhook of the recipient (``routing.recipientId``), never one of
  the sender (``routing.senderId``);
* ``profile_request.*``: every webhook of the profile owner (``routing.recipientId``);
* ``webhook.*`` (operational): every webhook of the owner (``routing.recipientId``) except the one
  the event is about (``routing.webhookId``).

In every case only active webhooks subscribed to the event, registered before the event
happened, receive it (a webhook without stored ``events`` subscribes to
:data:`~chalicelib.webhooks.catalogue.DEFAULT_EVENTS`). Other events (e.g. the internal ``listing.submitted``) go nowhere. An
event without a recipient goes nowhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from chalicelib.persistence.outbox import MESSAGE_NEW, WEBHOOK_DISABLED, WEBHOOK_ENABLED
from chalicelib.webhooks import repository
from chalicelib.webhooks.catalogue import DEFAULT_EVENTS, SUPPORTED_EVENTS
from chalicelib.webhooks.delivery.envelope import Event
from chalicelib.webhooks.records import WebhookRecord


class WebhookDirectory:
    """Webhook reads for one batch: each id or owner is read once, and every caller gets the
    same item object for the same webhook id."""

    def __init__(self) -> None:
        self._by_id: dict[str, WebhookRecord | None] = {}
        self._by_owner: dict[str, list[str]] = {}

    def by_ids(self, webhook_ids: Iterable[str]) -> list[WebhookRecord]:
        """The existing webhooks among ``webhook_ids`` (one BatchGetItem for the unread ones)."""
        wanted = [str(i) for i in dict.fromkeys(webhook_ids)]
        missing = [i for i in wanted if i not in self._by_id]
        if missing:
            found = repository.get_many(missing)
            for webhook_id in missing:
                self._by_id[webhook_id] = found.get(webhook_id)
        return [item for i in wanted if (item := self._by_id[i]) is not None]

    def by_owner(self, owner_id: str) -> list[WebhookRecord]:
        """Every webhook of ``owner_id`` (one Query on ``byOwner``)."""
        if owner_id not in self._by_owner:
            items = repository.list_by_owner(owner_id)
            for item in items:
                self._by_id.setdefault(item["webhookId"], item)
            self._by_owner[owner_id] = [item["webhookId"] for item in items]
        return self.by_ids(self._by_owner[owner_id])


def subscribed(webhook: WebhookRecord, event_type: str) -> bool:
    """True when ``webhook`` is active and subscribed to ``event_type`` (no stored events: the default ones)."""
    events = webhook.get("events") or DEFAULT_EVENTS
    return bool(webhook.get("active")) and event_type in events


def recipients(event: Event, directory: WebhookDirectory) -> list[WebhookRecord]:
    """The webhook items ``event`` is delivered to (possibly none).

    Parameters
    ----------
    event:
        An outbox event with its ``routing``.
    directory:
        The batch's webhook reads.
    """
    if event.type not in SUPPORTED_EVENTS:
        return []
    if event.target_webhook_id is not None:
        return _addressed(event, directory)
    recipient = event.routing.get("recipientId")
    if not recipient:
        return []
    if event.type == MESSAGE_NEW and recipient == event.routing.get("senderId"):
        return []
    if event.type.startswith("match_request."):
        candidates = directory.by_ids(event.routing.get("webhookIds") or [])  # bound to the listing
    elif event.type in (WEBHOOK_DISABLED, WEBHOOK_ENABLED):  # never the webhook the event is about
        about = event.routing.get("webhookId")
        candidates = [w for w in directory.by_owner(str(recipient)) if w["webhookId"] != about]
    else:
        candidates = directory.by_owner(str(recipient))  # message.new, profile_request.*
    return [w for w in candidates if w.get("ownerId") == recipient and subscribed(w, event.type) and existed_at(w, event)]


def existed_at(webhook: WebhookRecord, event: Event) -> bool:
    """False when ``webhook`` was registered after ``event`` happened (``createdAt`` later than the
    event's; both are fixed-width ISO 8601 UTC strings, so string order is time order).

    The stream is read a moment after the change (and a replayed batch much later), so without
    this a webhook registered in between would get events from before it existed.
    """
    return str(webhook.get("createdAt") or "") <= event.created_at


def _addressed(event: Event, directory: WebhookDirectory) -> list[WebhookRecord]:
    """The one webhook an addressed event names, if it still exists, is active, belongs to the
    event's recipient (when the event names one) and, unless ``test``, subscribes to the event."""
    recipient = event.routing.get("recipientId")
    found = directory.by_ids([str(event.target_webhook_id)])
    return [
        w
        for w in found
        if (not recipient or w.get("ownerId") == recipient)
        and bool(w.get("active"))
        and (event.test or subscribed(w, event.type))
    ]
