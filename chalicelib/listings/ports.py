"""What the listing rules (:mod:`chalicelib.listings.service`) need from storage and from other domains.

Each port is a :class:`typing.Protocol` holding only the functions the service calls, with their
signatures; the real modules satisfy them (mypy checks :data:`chalicelib.listings.service.DEFAULT_PORTS`),
and the unit tests give the service in-memory fakes instead (``tests/unit/fakes/listings.py``,
through :func:`chalicelib.listings.service.use_ports`). The pattern: docs/testing.md, "Ports and fakes".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from chalicelib.listings.records import ListingRecord
from chalicelib.listings.status import Transition
from chalicelib.listings.status_history import StatusEntry
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.users.records import UserRecord
from chalicelib.webhooks.records import WebhookRecord


class ListingsRepository(Protocol):
    """The Listings table as the listing rules use it (:mod:`chalicelib.listings.repository`)."""

    def pending_attributes(self, listing_id: str, submitted_at: str) -> dict[str, str]:
        """``pendingQueue`` and ``pendingSort`` of a listing submitted at ``submitted_at`` (ISO 8601 UTC)."""
        ...

    def get(self, listing_id: str, consistent: bool = False) -> ListingRecord | None:
        """The listing, or ``None``."""
        ...

    def create(self, item: ListingRecord, extra_ops: Sequence[TransactItem]) -> None:
        """Write a new listing, +1 on its owner's counter and ``extra_ops`` in one transaction."""
        ...

    def resubmit(self, read: ListingRecord, updated: ListingRecord, extra_ops: Sequence[TransactItem]) -> list[StatusEntry]:
        """Write ``updated``'s new content as PENDING at version + 1 if the listing is still as ``read``;
        returns the ``statusHistory`` as written. Raises ``TransactionConflict`` otherwise."""
        ...

    def rebind(self, updated: ListingRecord, expected_version: int, extra_ops: Sequence[TransactItem]) -> None:
        """Write ``updated``'s ``channels``, ``webhookIds`` and ``updatedAt`` at version + 1 if the stored
        version is ``expected_version``. Raises ``TransactionConflict`` otherwise."""
        ...

    def transition(
        self, listing: ListingRecord, change: Transition, updated_at: str, reason: str | None = None,
        version: int | None = None, extra: Sequence[TransactItem] = (),
    ) -> ListingRecord:
        """Apply a status change; returns the listing as written. Raises ``ConditionFailed``."""
        ...

    def owner_page(self, owner_id: str, size: int, after: str | None = None, skip: int = 0) -> tuple[list[ListingRecord], str | None]:
        """One page of the owner's listings, newest first, and the sort key to continue after."""
        ...

    def owner_page_matching(
        self, owner_id: str, size: int, keep: Callable[[ListingRecord], bool], after: str | None = None
    ) -> tuple[list[ListingRecord], str | None]:
        """The next ``size`` of the owner's listings ``keep`` accepts, and where to continue."""
        ...

    def owner_total(self, owner_id: str) -> int:
        """The exact number of the owner's listings."""
        ...

    def owner_with_total(self, owner_id: str) -> tuple[UserRecord | None, int]:
        """The owner's user record (``None`` when gone) and the exact number of their listings."""
        ...


class UserDirectory(Protocol):
    """The users a listing names (:mod:`chalicelib.users`)."""

    def get_user(self, user_id: str) -> UserRecord | None:
        """The user record, or ``None``."""
        ...

    def not_suspended_op(self, user_id: str) -> TransactItem:
        """Transaction ``ConditionCheck`` that holds while the user exists and is not suspended."""
        ...


class WebhookDirectory(Protocol):
    """The webhooks a listing names (:mod:`chalicelib.webhooks`)."""

    def get_many(self, webhook_ids: Sequence[str]) -> dict[str, WebhookRecord]:
        """Webhook records by id; missing ids are absent."""
        ...


class BlockDirectory(Protocol):
    """Blocks as the listing rules read them (:mod:`chalicelib.blocks.api`)."""

    def hidden_from(self, user_id: str) -> frozenset[str]:
        """The users ``user_id`` blocked or was blocked by."""
        ...


@dataclass(frozen=True)
class Ports:
    """Everything outside its own rules that :mod:`chalicelib.listings.service` calls."""

    repository: ListingsRepository
    users: UserDirectory
    webhooks: WebhookDirectory
    blocks: BlockDirectory
