"""The one shape of every transaction that writes a request: the request, its guard, its counters, its event.

Creating a match request, creating a profile request and deciding either kind all commit one
TransactWriteItems (:class:`chalicelib.persistence.transactions.Transaction`) holding, under these names:

* ``request``: the request item itself (a new ``Put`` or the PENDING-conditioned decision);
* the guard, when the write depends on its subject (``listing``: ACTIVE or still existing;
  ``profile``: the target's policy still admits the requester), from
  :func:`chalicelib.listings.api.count_request_op` and friends, built by the owner of the table;
* ``counters.N``: the list counters moved by the status change
  (:func:`chalicelib.match_requests.repository.counter_ops`), so every list ``total`` stays exact;
* ``event``: the outbox event announcing the request in its new status
  (:func:`chalicelib.match_requests.events.request_event_op`), so no change is ever announced
  without being written, nor written without being announced.

:func:`request_write` is where that rule lives; callers add what only they need (the
conversation a decision opens) and map a failed item (``TransactionConflict.failed(name)``)
to their own error.
"""

from __future__ import annotations

from typing import NamedTuple

from chalicelib.listings.records import ListingRecord
from chalicelib.match_requests import repository
from chalicelib.match_requests.events import request_event_op
from chalicelib.match_requests.models import RequestStatus
from chalicelib.match_requests.records import RequestRecord
from chalicelib.persistence.transactions import Transaction, TransactItem


class Guard(NamedTuple):
    """A condition on the request's subject, added to the transaction under ``name`` (``listing``, ``profile``)."""

    name: str
    op: TransactItem


def request_write(
    request_op: TransactItem,
    written: RequestRecord,
    before: RequestStatus | None,
    guard: Guard | None = None,
    listing: ListingRecord | None = None,
) -> Transaction:
    """The transaction writing one request: request item, guard, list counters and outbox event.

    Parameters
    ----------
    request_op:
        The repository's transaction item of the request (``repository.put_new_op`` for a new
        request, ``repository.decide_op`` for a decision); named ``request``.
    written:
        The request as this transaction leaves it (its new ``status``; ``respondedAt`` and
        ``reason`` for decisions): the counters move it into ``written["status"]`` and the
        event announces it.
    before:
        Its status before the write, ``None`` for a new request.
    guard:
        The condition on the subject, or ``None`` (a decision about a profile request).
    listing:
        The listing item of a LISTING request (the event's title and webhook ids at event time).

    Returns
    -------
    Transaction
        Not committed yet: the caller may add items, then commits and maps a
        ``TransactionConflict`` by name (``request`` or the guard's name).
    """
    tx = Transaction().add("request", request_op)
    if guard is not None:
        tx.add(guard.name, guard.op)
    tx.add_all("counters", repository.counter_ops([(written, before, written["status"])]))
    tx.add("event", request_event_op(written, listing))
    return tx
