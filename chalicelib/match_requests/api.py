"""The Requests table's published reads and builders, for the workflows that decide, withdraw or
erase requests across packages (decisions, listing deletion, blocking, account erasure).

Other packages import this module, never the repository (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.match_requests import events, repository
from chalicelib.match_requests.list_indexes import RequestList
from chalicelib.match_requests.records import RequestRecord
from chalicelib.match_requests.repository import (
    ERASED_REQUESTER,
    anonymize_requester_op,
    counter_ops,
    decide_op,
    forget_counter_ops,
    list_for_subject,
    pending_sent,
    read_bundle,
)
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.webhooks.events_api import service as webhook_events


def every_sent(user_id: str) -> list[RequestRecord]:
    """Every request ``user_id`` sent, any status, newest first (the account erasure's read)."""
    return repository.every_of(user_id, RequestList.SENT)


def every_received(user_id: str) -> list[RequestRecord]:
    """Every request ``user_id`` received, any status, newest first (the account erasure's read)."""
    return repository.every_of(user_id, RequestList.RECEIVED)


def withdraw_ops(requests: Sequence[RequestRecord]) -> list[TransactItem]:
    """Transaction items withdrawing PENDING ``requests`` of one requester: each deleted (conditional
    on PENDING) and taken out of its list counters
    (:func:`chalicelib.match_requests.repository.withdraw_op`)."""
    return [*(repository.withdraw_op(r) for r in requests), *repository.removal_counter_ops(requests)]


def forget_requester_in_event(request: RequestRecord) -> int:
    """Replace the requester's snapshot (``profile``) in the ``*.received`` event that announced
    ``request`` to its recipient, whose events API lists it for 30 days, by
    :data:`~chalicelib.match_requests.repository.ERASED_REQUESTER`, as
    :func:`~chalicelib.match_requests.repository.anonymize_requester_op` does on the request (the
    account erasure). Returns the events rewritten (0 once the event expired)."""
    return webhook_events.rewrite_data(
        request["recipientId"], events.event_type({**request, "status": "PENDING"}), request["createdAt"],
        ("requestId", request["requestId"]), {"profile": repository.ERASED_REQUESTER},
    )


__all__ = [
    "ERASED_REQUESTER",
    "anonymize_requester_op",
    "counter_ops",
    "decide_op",
    "every_received",
    "every_sent",
    "forget_counter_ops",
    "forget_requester_in_event",
    "list_for_subject",
    "pending_sent",
    "read_bundle",
    "withdraw_ops",
]
