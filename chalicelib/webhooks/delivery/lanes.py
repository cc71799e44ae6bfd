"""Delivery lanes: the SQS FIFO ``DeliveryQueue`` with message groups bounded per owner, and the
slow lanes on a FIFO queue of their own (``SlowDeliveryQueue``).

Every (event, webhook) delivery is one message (in a slow lane, an event's consecutive
deliveries may share one, below). SQS FIFO hands out the messages of a message
group in order and never one while another of the same group is in flight, while other groups
proceed in parallel (SQS Developer Guide, "FIFO queue message grouping"); Lambda runs at most one
invocation per group. So the groups are the unit of concurrency, and :func:`group_id` chooses
them to make delivery fair (Svix's per-endpoint throttling, Hookdeck's per-destination
concurrency):

* **Owner lanes** (``DeliveryQueue``). A webhook's deliveries go to one of its owner's
  ``DELIVERY_OWNER_LANES`` (4) groups, ``<ownerId>.<n>``, ``n`` its number among the owner's
  webhooks (``lane``, given at creation) modulo 4, so an owner's first 4 webhooks never share a
  lane: an owner with 40 webhooks holds at most 4 lane workers, however many of its receivers
  hang; each webhook stays in one group, so its attempts still run one at a time.
* **Slow lanes** (``SlowDeliveryQueue``, :func:`queue_url`). A webhook whose circuit breaker is
  open (its last attempt timed out, until one succeeds: ``breakerOpenedAt`` on the webhook) is
  delivered in one of ``DELIVERY_SLOW_LANES`` (4) groups shared by every such webhook,
  ``slow.<n>`` (:func:`slow_lane`: an owner's webhooks in turn), on a queue of their own with its
  own consumer: all timing-out endpoints together hold at most 4 workers, and neither their
  attempts nor their retries ever occupy the healthy lanes' queue. A queue's messages share its
  throughput (SQS FIFO quotas are per queue, and per-call costs grow with a queue's depth in the
  embedded moto of local runs), so a failing owner's backlog, retries included, waits where it
  only delays the other open-breaker webhooks.

:func:`enqueue` sends a queue's deliveries as up to :data:`PARALLEL_SENDS` sequences at once
(:func:`send_plan`), each holding whole message groups, so a 40-way fan-out over an owner's 4 lanes
is 4 calls side by side and every group keeps its order. In a slow lane, consecutive deliveries of one
event at one attempt number (an owner's fan-out to its open-breaker webhooks) travel as one
message of up to :data:`MAX_MESSAGE_DELIVERIES` (:func:`message_plan`), whose attempts the slow
lanes' consumer makes one after another, as it would make those consecutive messages: the slow
lanes' queue holds a fan-out's backlog in a tenth of the messages.

Which queue a delivery enters is decided when it is queued, from the breaker as the queuing code
read it (``Delivery.slow``): the outbox router and the Redeliver and Recover actions read the
webhook, a retry takes the breaker state of the failure that scheduled it. An attempt found in a
lane that does not match its webhook's breaker (queued before it opened or closed) is moved, not
sent (:func:`chalicelib.webhooks.delivery.attempt.attempt`): an owner lane sends only while the
breaker is closed and a slow lane only while it is open. Only an attempt in an owner lane opens
a breaker (its webhook's, and those of its :func:`lane_siblings`, whose owner-lane attempts wait
behind it in the same group) and only one in a slow lane closes it, and each webhook's attempts
are serialized within each kind of lane, so two attempts to one webhook never overlap and the
failure policy stays exact.

``MessageDeduplicationId`` is the delivery's ``webhook-id`` for attempt 1 (a replayed stream
batch enqueues nothing twice within SQS's 5-minute deduplication window; later replays are
absorbed by the attempt claim, :mod:`chalicelib.webhooks.delivery.attempt_log`),
``<webhook-id>.<attempt>`` for the retries, ``.<recovery id>`` or ``.<redelivery id>`` appended
for an attempt an owner asked for (and its retries), and ``.<hops>`` appended for a delivery moved
between the kinds of lane, so that each attempt and move enters once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from chalicelib.kernel.config import settings
from chalicelib.kernel.threads import ContextPool
from chalicelib.persistence import storage
from chalicelib.webhooks import signing
from chalicelib.webhooks.delivery.envelope import Delivery, Event

#: SendMessageBatch takes at most 10 entries (SQS API reference).
MAX_BATCH = 10
#: Deliveries one slow-lane message carries at most (:func:`message_plan`): its attempts run one
#: after another in one invocation of the slow lanes' consumer, so this many deadlines (10 s each,
#: spec §6) plus their calls bound the invocation (``cfn_functions.SLOW_DELIVERY_TIMEOUT_SECONDS``).
MAX_MESSAGE_DELIVERIES = 10
#: SendMessageBatch calls of one queue in flight at once (:func:`send_plan`): an event fanned out to
#: 40 webhooks over its owner's 4 lanes is 4 calls, sent together rather than each waiting for the one before.
PARALLEL_SENDS = 4


#: The threads of :func:`enqueue`'s concurrent sends.
_SENDERS = ContextPool(PARALLEL_SENDS, "lane-send")


class EnqueueFailed(Exception):
    """Some deliveries were not queued; ``failed`` are their indexes in the given sequence (the
    entries SQS refused and those left unsent after the first refusal)."""

    def __init__(self, failed: list[int]) -> None:
        super().__init__(f"{len(failed)} deliveries were not queued")
        self.failed = failed


def deduplication_id(delivery: Delivery) -> str:
    """``webhook-id`` for attempt 1, ``<webhook-id>.<attempt>`` after; an attempt a recovery queued
    appends ``.<recovery id>``, one a single redelivery queued (or its retry) ``.<redelivery id>``,
    and a move between owner and slow lanes ``.<hops>`` (SQS: at most 128 characters).

    A recovery's or a redelivery's attempt has the number of a retry that may have been queued,
    and dropped unsent, minutes before (the webhook was disabled meanwhile): SQS would drop the
    owner's message as that retry's duplicate within its 5-minute deduplication interval, so it
    gets an id of its own. The ``webhook-id`` header the receiver sees is the delivery's, whatever
    the deduplication id (:func:`chalicelib.webhooks.signing.message_id`).
    """
    base = signing.message_id(delivery.event.event_id, delivery.webhook_id)
    asked = delivery.recovery_id or delivery.redelivery_id
    suffix = (f".{asked}" if asked else "") + (f".{delivery.hops}" if delivery.hops else "")
    if suffix:
        return f"{base}.{delivery.attempt}{suffix}"
    return base if delivery.attempt == 1 else f"{base}.{delivery.attempt}"


def _slot(webhook_id: str, lanes: int) -> int:
    """The webhook's fixed lane number among ``lanes`` (SHA-256 of its id: spread evenly, stable everywhere)."""
    return int.from_bytes(hashlib.sha256(webhook_id.encode()).digest()[:8], "big") % lanes


def slow_lane(delivery: Delivery, lanes: int) -> int:
    """The number of ``delivery``'s webhook among ``lanes`` slow lanes (0 .. ``lanes`` - 1).

    Its ``lane`` (its number among its owner's webhooks) offset by a hash of its owner: one
    owner's webhooks fill the slow lanes in turn (40 of them: 10 to each of 4; a hash of each
    webhook id spreads them unevenly, and the fullest slow lane drains last), while different
    owners start at different lanes. A webhook without a ``lane`` number (or a message without an
    owner) by a hash of its id. Fixed per webhook, so its slow attempts stay serialized in one lane.
    """
    if delivery.owner_id and delivery.lane is not None:
        return (_slot(delivery.owner_id, lanes) + delivery.lane) % lanes
    return _slot(delivery.webhook_id, lanes)


def owner_lane(owner_id: str, webhook_id: str, lane: int | None) -> str:
    """The owner lane (``MessageGroupId`` on ``DeliveryQueue``) of a webhook: ``<ownerId>.<n>``, ``n`` its
    ``lane`` number (a hash of its id without one) modulo ``DELIVERY_OWNER_LANES``."""
    lanes = settings().DELIVERY_OWNER_LANES
    number = lane if lane is not None else _slot(webhook_id, lanes)
    return f"{owner_id}.{number % lanes}"


def host_of(url: str) -> str:
    """The host name of a webhook URL, lower case (``""`` when it has none)."""
    return (urlsplit(url).hostname or "").lower()


def lane_siblings(timed_out: Mapping[str, Any], held_lane: str, webhooks: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ids of the webhooks whose breaker opens with that of ``timed_out``: its owner's other
    active webhooks with a closed breaker, in the owner lane ``held_lane`` (the lane whose message the
    timed-out attempt holds) and on the same host (:func:`host_of` of ``url``).

    Their attempts in ``held_lane`` cannot be running (SQS FIFO hands out one message of a group
    at a time, and the timed-out attempt holds it) and their slow-lane attempts start only once
    their breaker is open, so opening it here never lets two attempts to one webhook overlap.

    Parameters
    ----------
    timed_out:
        The Webhooks item of the webhook whose attempt in ``held_lane`` timed out.
    held_lane:
        That attempt's ``MessageGroupId`` (:func:`group_id`).
    webhooks:
        Webhooks items of the same owner (``ownerId``, ``webhookId``, ``url``, ``lane``, ``active``).

    Returns
    -------
    list[str]
        ``webhookId`` values, in the given order.
    """
    host = host_of(str(timed_out.get("url") or ""))
    owner_id = str(timed_out.get("ownerId") or "")
    return [
        str(w["webhookId"])
        for w in webhooks
        if w.get("webhookId") != timed_out.get("webhookId") and str(w.get("ownerId") or "") == owner_id
        and w.get("active") and not w.get("breakerOpenedAt")
        and owner_lane(owner_id, str(w["webhookId"]), w.get("lane")) == held_lane
        and host_of(str(w.get("url") or "")) == host != ""
    ]


def group_id(delivery: Delivery) -> str:
    """The ``MessageGroupId`` of ``delivery``: ``slow.<n>`` while its webhook's breaker is open
    (:func:`slow_lane`), else its :func:`owner_lane`; a message without an owner (queued by an
    earlier version) keeps the webhook's own lane."""
    if delivery.slow:
        return f"slow.{slow_lane(delivery, settings().DELIVERY_SLOW_LANES)}"
    if not delivery.owner_id:
        return delivery.webhook_id
    return owner_lane(delivery.owner_id, delivery.webhook_id, delivery.lane)


def shares_message(earlier: Delivery, later: Delivery) -> bool:
    """Whether ``later`` may travel in the slow-lane message of ``earlier`` (:func:`message_plan`):
    both in the same slow lane, the same event, attempt number and move count, neither asked for by
    a recovery or a redelivery (their deduplication ids and counts are their own), and another webhook.
    """
    return (
        earlier.slow and later.slow and group_id(earlier) == group_id(later)
        and earlier.event.event_id == later.event.event_id and earlier.attempt == later.attempt
        and earlier.hops == later.hops and earlier.webhook_id != later.webhook_id
        and not (earlier.recovery_id or earlier.redelivery_id or later.recovery_id or later.redelivery_id)
    )


def message_plan(deliveries: Sequence[Delivery], sequence: Sequence[int]) -> list[list[int]]:
    """The messages of ``sequence`` (indexes into ``deliveries``, in their order): each delivery
    joins the newest message of its message group when :func:`shares_message` allows it and that
    message holds fewer than :data:`MAX_MESSAGE_DELIVERIES`, else starts a message of its own.

    Only the group's newest message grows, so every group's deliveries keep their order, and a
    delivery of another webhook queued between two of an event's deliveries in a slow lane (another
    owner's) keeps its turn between them. Owner lanes never share messages (their attempts may open
    lane siblings' breakers, which assumes one attempt per message).

    Returns
    -------
    list[list[int]]
        Messages in the order of their first delivery, each a non-empty list of indexes; together
        exactly ``sequence``.
    """
    messages: list[list[int]] = []
    newest: dict[str, list[int]] = {}  # group -> its newest message
    for index in sequence:
        group = group_id(deliveries[index])
        message = newest.get(group)
        if (message is not None and len(message) < MAX_MESSAGE_DELIVERIES
                and shares_message(deliveries[message[-1]], deliveries[index])):
            message.append(index)
            continue
        newest[group] = [index]
        messages.append(newest[group])
    return messages


def message_deduplication_id(members: Sequence[Delivery]) -> str:
    """The ``MessageDeduplicationId`` of a lane message carrying ``members``: the first one's
    :func:`deduplication_id`, and for a shared message ``+`` and 16 hex digits of a SHA-256 of
    every member's webhook id (a replayed stream batch that forms the same message enters once; a
    differently formed one is absorbed by the attempt claims)."""
    first = deduplication_id(members[0])
    if len(members) == 1:
        return first
    digest = hashlib.sha256(",".join(m.webhook_id for m in members).encode()).hexdigest()[:16]
    return f"{first}+{digest}"


def to_message(delivery: Delivery, others: Sequence[Delivery] = ()) -> str:
    """The JSON body of a lane (or retry) message: the whole event, so no outbox read is needed.

    With ``others`` (deliveries :func:`shares_message` lets travel with ``delivery``), the body
    lists every member's ``webhookId``, ``ownerId`` and ``lane`` under ``webhooks``, in order,
    and none at the top: a reader of single deliveries (:func:`from_message`, a worker of an
    earlier version) refuses it as malformed and it returns, rather than being taken for its
    first member alone.
    """
    event = delivery.event
    body: dict[str, Any] = {
        "webhookId": delivery.webhook_id,
        "attempt": delivery.attempt,
        "eventId": event.event_id,
        "type": event.type,
        "createdAt": event.created_at,
        "data": event.data,
        "test": event.test,
        "ownerId": delivery.owner_id,
        "lane": delivery.lane,
        "slow": delivery.slow,
        "hops": delivery.hops,
    }
    if event.request_id:
        body["requestId"] = event.request_id
    if delivery.recovery_id:
        body["recoveryId"] = delivery.recovery_id
    if delivery.redelivery_id:
        body["redeliveryId"] = delivery.redelivery_id
    if others:
        for key in ("webhookId", "ownerId", "lane"):
            del body[key]
        body["webhooks"] = [{"webhookId": d.webhook_id, "ownerId": d.owner_id, "lane": d.lane} for d in (delivery, *others)]
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def from_message(body: str) -> Delivery:
    """Parse a message body written by :func:`to_message`.

    Raises
    ------
    ValueError, KeyError, TypeError
        A malformed message (reported failed; it ends in the dead-letter queue).
    """
    raw: dict[str, Any] = json.loads(body)
    event = Event(
        event_id=str(raw["eventId"]),
        type=str(raw["type"]),
        created_at=str(raw["createdAt"]),
        data=dict(raw["data"]),
        routing={},
        test=bool(raw.get("test", False)),
        request_id=str(raw["requestId"]) if raw.get("requestId") else None,
    )
    attempt = int(raw["attempt"])
    if attempt < 1:
        raise ValueError(f"attempt must be >= 1, got {attempt}")
    recovery, redelivery = raw.get("recoveryId"), raw.get("redeliveryId")
    return Delivery(
        event=event, webhook_id=str(raw["webhookId"]), attempt=attempt, owner_id=str(raw.get("ownerId") or ""),
        lane=int(raw["lane"]) if raw.get("lane") is not None else None, slow=bool(raw.get("slow", False)),
        hops=int(raw.get("hops") or 0), recovery_id=str(recovery) if recovery else None,
        redelivery_id=str(redelivery) if redelivery else None,
    )


def from_messages(body: str) -> list[Delivery]:
    """Every delivery of a lane message body (:func:`to_message`), in order: one, or the members
    listed under ``webhooks``.

    Raises
    ------
    ValueError, KeyError, TypeError
        A malformed message (reported failed; it ends in the dead-letter queue).
    """
    raw: dict[str, Any] = json.loads(body)
    members = raw.pop("webhooks", None)
    if members is None:
        return [from_message(body)]
    if not isinstance(members, list) or not members:
        raise ValueError("webhooks must be a non-empty list")
    return [from_message(json.dumps({**raw, **member})) for member in members]


def owners_in_turn(deliveries: Sequence[Delivery]) -> list[int]:
    """The indexes of ``deliveries`` with their owners taking turns: the first delivery of each
    owner (in order of first appearance), then the second of each, and so on.

    Each owner's deliveries keep their relative order, so every webhook's (and every owner
    lane's) messages are sent in the given order; only different owners' deliveries are
    interleaved, and SQS FIFO orders messages within a message group only. A stream batch
    queued in this order puts another owner's delivery at most one entry per owner of the batch
    behind an owner fanning one event out to many webhooks, not behind all of that owner's
    SendMessageBatch calls (round-robin between owners: fair queuing of the router's sends). A
    delivery without an owner (a message of an earlier version) counts as the owner of its
    webhook alone.

    Parameters
    ----------
    deliveries:
        Deliveries in the order they must keep per owner (a stream batch's, record by record).

    Returns
    -------
    list[int]
        A permutation of ``range(len(deliveries))``.
    """
    turns: dict[str, deque[int]] = {}
    for index, delivery in enumerate(deliveries):
        turns.setdefault(delivery.owner_id or delivery.webhook_id, deque()).append(index)
    order: list[int] = []
    waiting = list(turns.values())
    while waiting:
        order += [queued.popleft() for queued in waiting]
        waiting = [queued for queued in waiting if queued]
    return order


def queue_url(delivery: Delivery) -> str:
    """The URL of the FIFO queue ``delivery`` enters: ``DELIVERY_SLOW_QUEUE_URL`` while its
    webhook's breaker is open (``delivery.slow``), else ``DELIVERY_QUEUE_URL``."""
    config = settings()
    return config.DELIVERY_SLOW_QUEUE_URL if delivery.slow else config.DELIVERY_QUEUE_URL


def send_plan(deliveries: Sequence[Delivery], indexes: Sequence[int]) -> list[list[int]]:
    """Split one queue's deliveries (``indexes`` into ``deliveries``, in their order) into at most
    :data:`PARALLEL_SENDS` sequences that may be sent at the same time.

    Every message group (:func:`group_id`) lies wholly in one sequence, and each sequence keeps the
    given order, so sending the sequences concurrently (each in batches of :data:`MAX_BATCH`
    messages, one after another) keeps every group's order: SQS FIFO orders messages within a
    group only. There are as many sequences as batches of 10 messages (:func:`message_plan`) would
    be needed (one for up to 10), within the bound; each group goes to the sequence holding the
    fewest deliveries so far (groups in order of first appearance), so an event fanned out to 40
    webhooks over 4 owner lanes is 4 calls of 10 at once (over 4 slow lanes: one call of 4 messages).

    Returns
    -------
    list[list[int]]
        Non-empty sequences of indexes; together exactly ``indexes``.
    """
    groups: dict[str, list[int]] = {}
    for index in indexes:
        groups.setdefault(group_id(deliveries[index]), []).append(index)
    messages = len(message_plan(deliveries, indexes))
    count = max(1, min(PARALLEL_SENDS, math.ceil(messages / MAX_BATCH), len(groups)))
    plan: list[list[int]] = [[] for _ in range(count)]
    for members in groups.values():
        min(plan, key=len).extend(members)
    for sequence in plan:
        sequence.sort()  # back to the given order (a group's members already are)
    return [sequence for sequence in plan if sequence]


def _send_sequence(sqs: Any, url: str, deliveries: Sequence[Delivery], sequence: list[int]) -> list[int]:
    """Send ``sequence`` (indexes into ``deliveries``) to ``url`` as its :func:`message_plan`, in
    batches of 10 messages, in order; after a refused entry nothing more of it is sent. Returns the
    indexes refused (every member of a refused message) or left unsent."""
    messages = message_plan(deliveries, sequence)
    failed: list[int] = []
    for start in range(0, len(messages), MAX_BATCH):
        if failed:
            return failed + [i for message in messages[start:] for i in message]
        chunk = {str(message[0]): message for message in messages[start : start + MAX_BATCH]}
        entries = [
            {
                "Id": entry_id,
                "MessageBody": to_message(deliveries[message[0]], [deliveries[i] for i in message[1:]]),
                "MessageGroupId": group_id(deliveries[message[0]]),
                "MessageDeduplicationId": message_deduplication_id([deliveries[i] for i in message]),
            }
            for entry_id, message in chunk.items()
        ]
        refused = sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed", [])
        failed += [i for f in refused for i in chunk[str(f["Id"])]]
    return failed


def enqueue(deliveries: Sequence[Delivery]) -> None:
    """Put ``deliveries`` into their lanes (:func:`group_id`) on their queues (:func:`queue_url`).

    The healthy lanes' deliveries are sent before the slow lanes'. A queue's deliveries are sent
    as :func:`send_plan` splits them: its sequences at the same time (at most
    :data:`PARALLEL_SENDS` calls in flight), each in the given order in batches of 10, so every
    message group's messages are sent in the given order (SQS FIFO orders within a group only).

    Raises
    ------
    EnqueueFailed
        Some deliveries were not queued: ``failed`` holds the indexes (in ``deliveries``) of the
        entries SQS refused and, of the sequence each was in, every delivery after it (a sequence
        sends nothing more after a refusal, so no message overtakes a refused one of its group),
        and every delivery of a queue not reached (none is sent after a queue had a refusal);
        every other delivery was queued.
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        SQS refusing a call, or unreachable (raised once every sequence of the queue has ended;
        what they sent stays queued).
    """
    sqs = storage.client("sqs")
    by_queue: dict[str, list[int]] = {}
    for index, delivery in enumerate(deliveries):
        by_queue.setdefault(queue_url(delivery), []).append(index)
    healthy = settings().DELIVERY_QUEUE_URL
    failed: list[int] = []
    for url in sorted(by_queue, key=lambda u: u != healthy):
        if failed:  # after a refusal nothing more is sent: the caller reports the rest
            failed += by_queue[url]
            continue
        for unsent in _SENDERS.map(functools.partial(_send_sequence, sqs, url, deliveries), send_plan(deliveries, by_queue[url])):
            failed += unsent
    if failed:
        raise EnqueueFailed(sorted(set(failed)))
