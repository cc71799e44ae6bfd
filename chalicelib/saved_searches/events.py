"""Outbox events of saved searches: the ``listing.matched`` webhook event and the internal
``saved_search.deleted`` event.

``listing.matched`` is delivered to every active webhook of the saver subscribed to it
(``routing.recipientId``), signed and logged like every event. The ``data`` model,
:class:`ListingMatched`, lives in the event catalogue (:mod:`chalicelib.webhooks.catalogue`).
``saved_search.deleted`` is never delivered (it is not in the catalogue): the saved-search
stream consumer removes the deleted search's stored matches (:mod:`chalicelib.saved_searches.cleanup`).
"""

from __future__ import annotations

from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.webhooks.catalogue import ListingMatched

__all__ = ["ListingMatched", "deleted_event_op", "matched_event_op"]


def matched_event_op(data: ListingMatched, recipient_id: str) -> TransactItem:
    """The outbox ``Put`` of one ``listing.matched`` event addressed to the saver ``recipient_id``."""
    routing = {"recipientId": recipient_id, "savedSearchId": data.savedSearchId, "listingId": data.listingId}
    return outbox.event_op(outbox.LISTING_MATCHED, data.model_dump(mode="json"), routing)


def deleted_event_op(saved_search_id: str, owner_id: str) -> TransactItem:
    """The outbox ``Put`` of one ``saved_search.deleted`` event (data ``{savedSearchId, ownerId}``).

    Written in the transaction that deletes the search, and again by a match cleanup that
    stopped at its budget with matches left (the continuation).
    """
    return outbox.event_op(outbox.SAVED_SEARCH_DELETED, {"savedSearchId": saved_search_id, "ownerId": owner_id})
