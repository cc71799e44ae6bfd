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

from chalicelib.kernel.threads import ContextPool
from chalicelib.persistence.outbox import MESSAGE_NEW, WEBHOOK_DISABLED, WEBHOOK_ENABLED
from chalicelib.webhooks import repository
from chalicelib.webhooks.catalogue import DEFAULT_EVENTS, SUPPORTED_EVENTS
from chalicelib.webhooks.delivery.envelope import Event
from chalicelib.webhooks.records import WebhookRecord

#: Owners' webhook lists a batch reads at once (:meth:`WebhookDirectory.by_owners`): a stream batch of
#: the router names up to its batch size (100) of recipients, each one Query; read one after another
#: they made every event of the batch wait for the sum of their round trips.
OWNER_READS_PARALLEL = 8


#: The threads of :meth:`WebhookDirectory.by_owners` (a Lambda's warm invocations reuse them).
_READERS = ContextPool(OWNER_READS_PARALLEL, "webhook-owners")


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

    def by_owners(self, owner_ids: Iterable[str]) -> None:
        """Read the webhooks of every unread owner among ``owner_ids`` at once (one Query on
        ``byOwner`` each, up to :data:`OWNER_READS_PARALLEL` in flight): the batch's later
        :meth:`by_owner` calls answer from what was read. A failed read raises here; an owner whose
        read failed is read again by :meth:`by_owner`.

        Raises
        ------
        botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
            A Query failed (the first failure; every read is awaited first).
        """
        wanted = [o for o in dict.fromkeys(str(i) for i in owner_ids) if o not in self._by_owner]
        if len(wanted) <= 1:
            for owner_id in wanted:
                self.by_owner(owner_id)
            return
        futures = [_READERS.submit(repository.list_by_owner, o) for o in wanted]
        results = [(o, f.exception() or f.result()) for o, f in zip(wanted, futures, strict=True)]
        for owner_id, found in results:
            if not isinstance(found, BaseException):
                self._remember(owner_id, found)
        failure = next((found for _, found in results if isinstance(found, BaseException)), None)
        if failure is not None:
            raise failure

    def _remember(self, owner_id: str, items: list[WebhookRecord]) -> None:
        for item in items:
            self._by_id.setdefault(item["webhookId"], item)
        self._by_owner[owner_id] = [item["webhookId"] for item in items]

    def by_owner(self, owner_id: str) -> list[WebhookRecord]:
        """Every webhook of ``owner_id`` (one Query on ``byOwner``)."""
        if owner_id not in self._by_owner:
            self._remember(owner_id, repository.list_by_owner(owner_id))
        return self.by_ids(self._by_owner[owner_id])


def owner_read(event: Event) -> str | None:
    """The owner whose webhooks :func:`recipients` lists for ``event`` (one Query), or ``None`` when it
    reads none (an addressed event, ``match_request.*``: by id; no recipient; a message to oneself)."""
    recipient = event.routing.get("recipientId")
    if event.type not in SUPPORTED_EVENTS or event.target_webhook_id is not None or not recipient:
        return None
    if event.type.startswith("match_request.") or (event.type == MESSAGE_NEW and recipient == event.routing.get("senderId")):
        return None
    return str(recipient)


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
    owner = owner_read(event)
    if recipient and event.type.startswith("match_request."):
        candidates = directory.by_ids(event.routing.get("webhookIds") or [])  # bound to the listing
    elif owner is None:  # no recipient, or a message to oneself
        return []
    elif event.type in (WEBHOOK_DISABLED, WEBHOOK_ENABLED):  # never the webhook the event is about
        about = event.routing.get("webhookId")
        candidates = [w for w in directory.by_owner(owner) if w["webhookId"] != about]
    else:
        candidates = directory.by_owner(owner)  # message.new, profile_request.*
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
