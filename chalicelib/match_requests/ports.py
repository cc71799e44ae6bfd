"""What the request rules (:mod:`chalicelib.match_requests.service`) need from storage.

Each port is a :class:`typing.Protocol` holding only the functions the service calls, with their
signatures; the real modules satisfy them (mypy checks :data:`chalicelib.match_requests.service.DEFAULT_PORTS`),
and the unit tests give the service in-memory fakes instead (``tests/unit/fakes/match_requests.py``,
through :func:`chalicelib.match_requests.service.use_ports`). The pattern: docs/testing.md, "Ports and fakes".

A new request is one transaction whose items other packages build (the listing's or profile's
guard, the block check, the quota counter): the service commits it through :attr:`Ports.commit`,
so a fake decides which named item's condition fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from chalicelib.listings.records import ListingRecord
from chalicelib.match_requests.list_indexes import ListQuery
from chalicelib.match_requests.records import RequestRecord
from chalicelib.match_requests.repository import Bundle
from chalicelib.persistence.transactions import Transaction, TransactItem


class RequestsRepository(Protocol):
    """The Requests table as the request rules use it (:mod:`chalicelib.match_requests.repository`)."""

    def get(self, request_id: str) -> RequestRecord | None:
        """The request, or ``None``."""
        ...

    def put_new_op(self, item: RequestRecord) -> TransactItem:
        """The transaction item writing a new request; its condition fails when the id exists."""
        ...

    def list_page(
        self, query: ListQuery, size: int, after: str | None = None, skip: int = 0
    ) -> tuple[list[RequestRecord], str | None]:
        """One page of a request list, newest first, and the sort key to continue after."""
        ...

    def list_total(self, query: ListQuery) -> int:
        """The exact size of a request list."""
        ...

    def listing_with_total(self, listing_id: str, query: ListQuery) -> tuple[ListingRecord | None, int]:
        """The listing (``None``: gone) and the exact size of list ``query``."""
        ...

    def read_bundle(
        self, request_ids: Sequence[str] = (), user_ids: Sequence[str] = (), listing_ids: Sequence[str] = (),
    ) -> Bundle:
        """Requests, users and listings by id in one read."""
        ...


@dataclass(frozen=True)
class Ports:
    """Everything outside its own rules that :mod:`chalicelib.match_requests.service` calls."""

    repository: RequestsRepository
    #: Writes a transaction's items at once (``Transaction.commit``); raises ``TransactionConflict``
    #: naming the items whose condition failed.
    commit: Callable[[Transaction], None]
