"""In-memory listings port (:class:`chalicelib.listings.ports.ListingsRepository`) and webhook directory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from chalicelib.listings import owner_list, status, status_history
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.status import Transition
from chalicelib.listings.status_history import StatusEntry
from chalicelib.persistence.storage import ConditionFailed, TransactionConflict
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.users.records import UserRecord
from chalicelib.webhooks.records import WebhookRecord
from tests.unit.fakes.people import FakeUsers


def _conflict() -> TransactionConflict:
    return TransactionConflict(["ConditionalCheckFailed"], ["listing"])


class FakeListings:
    """Listings by id with the real repository's write conditions; ``extra_ops`` of every
    committed write are kept in :attr:`committed_ops` (the outbox events a rule wrote)."""

    def __init__(self, users: FakeUsers) -> None:
        self.items: dict[str, ListingRecord] = {}
        self.committed_ops: list[TransactItem] = []
        self._users = users

    def pending_attributes(self, listing_id: str, submitted_at: str) -> dict[str, str]:
        """The review queue's attributes (one queue: ordering is the real repository's business)."""
        return {"pendingQueue": "0", "pendingSort": f"{submitted_at}#{listing_id}"}

    def get(self, listing_id: str, consistent: bool = False) -> ListingRecord | None:
        """A copy of the stored listing, or ``None``."""
        item = self.items.get(listing_id)
        return cast(ListingRecord, dict(item)) if item is not None else None

    def create(self, item: ListingRecord, extra_ops: Sequence[TransactItem]) -> None:
        """Store ``item`` unless its id is taken (``TransactionConflict``)."""
        if item["listingId"] in self.items:
            raise _conflict()
        self.items[item["listingId"]] = item
        self.committed_ops.extend(extra_ops)

    def resubmit(self, read: ListingRecord, updated: ListingRecord, extra_ops: Sequence[TransactItem]) -> list[StatusEntry]:
        """Store ``updated`` as PENDING if the listing's version and status are still ``read``'s."""
        stored = self.items.get(read["listingId"])
        if stored is None or stored["version"] != read["version"] or stored["status"] != read["status"]:
            raise _conflict()
        history = status_history.appended(list(read.get("statusHistory") or []),
                                          status_history.entry(status.target(Transition.SUBMIT), updated["updatedAt"]))
        self.items[read["listingId"]] = {**updated, "statusHistory": history}
        self.committed_ops.extend(extra_ops)
        return history

    def rebind(self, updated: ListingRecord, expected_version: int, extra_ops: Sequence[TransactItem]) -> None:
        """Store ``updated``'s bindings at ``expected_version + 1`` if the stored version is ``expected_version``."""
        stored = self.items.get(updated["listingId"])
        if stored is None or stored["version"] != expected_version:
            raise _conflict()
        self.items[updated["listingId"]] = {**stored, "channels": updated["channels"], "webhookIds": updated["webhookIds"],
                                            "updatedAt": updated["updatedAt"], "version": expected_version + 1}
        self.committed_ops.extend(extra_ops)

    def transition(
        self, listing: ListingRecord, change: Transition, updated_at: str, reason: str | None = None,
        version: int | None = None, extra: Sequence[TransactItem] = (),
    ) -> ListingRecord:
        """Apply ``change`` if the status ``listing`` was read in is still stored and ``change`` starts from it
        (and the version is ``version``), else ``ConditionFailed``."""
        stored = self.items.get(listing["listingId"])
        if (stored is None or stored["status"] != listing["status"] or not status.may_start(change, stored["status"])
                or (version is not None and stored["version"] != version)):
            raise ConditionFailed("The conditional request failed")
        written: ListingRecord = {**stored, "status": status.target(change), "updatedAt": updated_at, "version": stored["version"] + 1,
                                  "statusHistory": status_history.appended(list(stored.get("statusHistory") or []),
                                                                           status_history.entry(status.target(change), updated_at, reason))}
        self.items[listing["listingId"]] = written
        self.committed_ops.extend(extra)
        return written

    def _owned(self, owner_id: str) -> list[ListingRecord]:
        return sorted((i for i in self.items.values() if i["ownerId"] == owner_id), key=owner_list.sort_key, reverse=True)

    def owner_page(self, owner_id: str, size: int, after: str | None = None, skip: int = 0) -> tuple[list[ListingRecord], str | None]:
        """The owner's listings newest first, after the sort key ``after``, ``skip`` passed over."""
        rest = [i for i in self._owned(owner_id) if after is None or owner_list.sort_key(i) < after][skip:]
        page = rest[:size]
        return page, (owner_list.sort_key(page[-1]) if len(rest) > size else None)

    def owner_page_matching(
        self, owner_id: str, size: int, keep: Callable[[ListingRecord], bool], after: str | None = None
    ) -> tuple[list[ListingRecord], str | None]:
        """As :meth:`owner_page` over the listings ``keep`` accepts (no read budget)."""
        rest = [i for i in self._owned(owner_id) if (after is None or owner_list.sort_key(i) < after) and keep(i)]
        page = rest[:size]
        return page, (owner_list.sort_key(page[-1]) if len(rest) > size else None)

    def owner_total(self, owner_id: str) -> int:
        """The number of the owner's listings."""
        return len(self._owned(owner_id))

    def owner_with_total(self, owner_id: str) -> tuple[UserRecord | None, int]:
        """The owner's record and the number of their listings."""
        return self._users.get_user(owner_id), self.owner_total(owner_id)


class FakeWebhooks:
    """The webhook directory port (``get_many``) over a dict of records."""

    def __init__(self, *webhooks: WebhookRecord) -> None:
        self.webhooks: dict[str, WebhookRecord] = {w["webhookId"]: w for w in webhooks}

    def get_many(self, webhook_ids: Sequence[str]) -> dict[str, WebhookRecord]:
        """The records of the known ids among ``webhook_ids``."""
        return {i: self.webhooks[i] for i in webhook_ids if i in self.webhooks}
