"""Named transactions: how services write several items atomically without touching storage.

A service collects the items that repositories build (``*_op`` functions) under names and
commits them as one TransactWriteItems; when a condition fails it asks which item by name::

    tx = Transaction()
    tx.add("request", repository.put_new_op(item))
    tx.add("listing", listings.count_request_op(listing_id))
    tx.add("event", request_event_op(item, listing))
    try:
        tx.commit()
    except TransactionConflict as exc:
        if exc.failed("request"): ...

An item on another package's table comes from that package's published functions (above,
:func:`chalicelib.listings.api.count_request_op`): the owner of a table builds every item that
touches it, and the transaction only combines them by name (docs/architecture.md, "Table
ownership").

Lasting contention surfaces as :class:`chalicelib.persistence.storage.Contention`, already the API's 409.
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.persistence import storage
from chalicelib.persistence.storage import ConditionFailed as ConditionFailed
from chalicelib.persistence.storage import TransactionConflict as TransactionConflict
from chalicelib.persistence.transact_items import TransactItem as TransactItem

#: DynamoDB's limit of items per TransactWriteItems (AWS docs, "TransactWriteItems").
MAX_ITEMS = 100


class Transaction:
    """An ordered set of named transaction items, committed at once by :meth:`commit`."""

    def __init__(self) -> None:
        self._items: list[tuple[str, TransactItem]] = []

    def add(self, name: str, op: TransactItem) -> Transaction:
        """Add ``op`` (a repository's transaction item) under ``name``; returns the transaction.

        Raises
        ------
        ValueError
            ``name`` is taken already, or the transaction holds :data:`MAX_ITEMS` items.
        """
        if any(n == name for n, _ in self._items):
            raise ValueError(f"transaction item {name!r} added twice")
        if len(self._items) >= MAX_ITEMS:
            raise ValueError(f"a transaction holds at most {MAX_ITEMS} items")
        self._items.append((name, op))
        return self

    def add_all(self, name: str, ops: Sequence[TransactItem]) -> Transaction:
        """Add the items of one repository change that no caller tells apart: ``name.0``, ``name.1``, ...

        Raises
        ------
        ValueError
            As :meth:`add`.
        """
        for index, op in enumerate(ops):
            self.add(f"{name}.{index}", op)
        return self

    def items(self) -> list[tuple[str, TransactItem]]:
        """The named items in the order they were added: what :meth:`commit` writes."""
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def commit(self) -> None:
        """Write every item in one TransactWriteItems.

        Raises
        ------
        TransactionConflict
            A condition failed; ``failed(name)`` tells which item's.
        chalicelib.persistence.storage.Contention
            Concurrent transactions kept cancelling this one (the API's 409).
        """
        try:
            storage.transact([op for _, op in self._items])
        except TransactionConflict as exc:
            raise exc.named([n for n, _ in self._items]) from exc
