"""In-memory requests port (:class:`chalicelib.match_requests.ports.RequestsRepository`) and its commit."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.listings.records import ListingRecord
from chalicelib.match_requests import list_indexes
from chalicelib.match_requests.list_indexes import ListQuery
from chalicelib.match_requests.records import RequestRecord
from chalicelib.match_requests.repository import Bundle
from chalicelib.persistence import storage
from chalicelib.persistence.storage import TransactionConflict
from chalicelib.persistence.transactions import Transaction, TransactItem
from tests.unit.fakes.people import FakeBlocks, FakeUsers

#: The table name of the fake's own request items (``put_new_op``), so :meth:`FakeRequests.commit` finds them.
TABLE = "fake-requests"


class FakeRequests:
    """Requests, listings and blocks in dicts; :meth:`commit` writes a transaction's new request
    unless its id exists (the real ``attribute_not_exists`` condition) or a name in :attr:`refuse`
    is among its items (the condition another table's owner would check: a block, a guard, a quota).
    Every committed transaction's item names are kept in :attr:`committed`."""

    def __init__(self, users: FakeUsers, *listings: ListingRecord) -> None:
        self.users = users
        self.listings: dict[str, ListingRecord] = {x["listingId"]: x for x in listings}
        self.requests: dict[str, RequestRecord] = {}
        self.refuse: set[str] = set()
        #: The block directory the listing rules read (``hidden_from``), for owner-only reads.
        self.blocks = FakeBlocks()
        self.committed: list[list[str]] = []
        self._staged: dict[str, RequestRecord] = {}

    def get(self, request_id: str) -> RequestRecord | None:
        """The request, or ``None``."""
        return self.requests.get(request_id)

    def put_new_op(self, item: RequestRecord) -> TransactItem:
        """A ``Put`` of the request's id on the fake's table; the request waits for :meth:`commit`."""
        self._staged[item["requestId"]] = item
        return storage.tx_put(TABLE, {"requestId": item["requestId"]}, condition="attribute_not_exists(requestId)")

    def commit(self, tx: Transaction) -> None:
        """Write ``tx``'s new request, or raise ``TransactionConflict`` naming the items that failed."""
        failed = [name for name, op in tx.items() if name in self.refuse or self._exists(op)]
        if failed:
            names = [name for name, _ in tx.items()]
            raise TransactionConflict(["ConditionalCheckFailed" if n in failed else "None" for n in names], names)
        for _, op in tx.items():
            if "Put" in op and op["Put"]["TableName"] == TABLE:
                request_id = str(op["Put"]["Item"]["requestId"]["S"])
                self.requests[request_id] = self._staged.pop(request_id)
        self.committed.append([name for name, _ in tx.items()])

    def _exists(self, op: TransactItem) -> bool:
        return "Put" in op and op["Put"]["TableName"] == TABLE and str(op["Put"]["Item"]["requestId"]["S"]) in self.requests

    def _listed(self, query: ListQuery) -> list[RequestRecord]:
        owner = list_indexes.OWNER_ATTRIBUTE[query.kind]
        found = [r for r in self.requests.values() if r[owner] == query.owner  # type: ignore[literal-required]
                 and query.subject_type in (None, r["subjectType"]) and query.status in (None, r["status"])]
        return sorted(found, key=list_indexes.newest, reverse=True)

    def list_page(
        self, query: ListQuery, size: int, after: str | None = None, skip: int = 0
    ) -> tuple[list[RequestRecord], str | None]:
        """The list's requests newest first, after the sort key ``after``, ``skip`` passed over."""
        rest = [r for r in self._listed(query) if after is None or list_indexes.newest(r) < after][skip:]
        page = rest[:size]
        return page, (list_indexes.newest(page[-1]) if len(rest) > size else None)

    def list_total(self, query: ListQuery) -> int:
        """The number of requests in the list."""
        return len(self._listed(query))

    def listing_with_total(self, listing_id: str, query: ListQuery) -> tuple[ListingRecord | None, int]:
        """The listing and the size of list ``query``."""
        return self.listings.get(listing_id), self.list_total(query)

    def read_bundle(
        self, request_ids: Sequence[str] = (), user_ids: Sequence[str] = (), listing_ids: Sequence[str] = (),
    ) -> Bundle:
        """The known ones among the ids asked for (no blocks: :attr:`refuse` stands in for them)."""
        return Bundle(requests={i: self.requests[i] for i in request_ids if i in self.requests},
                      users=self.users.get_users(user_ids),
                      listings={i: self.listings[i] for i in listing_ids if i in self.listings})
