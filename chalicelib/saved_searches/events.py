"""The ``listing.matched`` webhook event: payload model, routing and outbox write.

Delivered to every active webhook of the saver subscribed to it (``routing.recipientId``),
signed and logged like every event. The ``data`` model, :class:`ListingMatched`, lives in the
event catalogue (:mod:`chalicelib.webhooks.catalogue`).
"""

from __future__ import annotations

from typing import Any

from chalicelib import outbox
from chalicelib.webhooks.catalogue import ListingMatched

__all__ = ["ListingMatched", "matched_event_op"]


def matched_event_op(data: ListingMatched, recipient_id: str) -> dict[str, Any]:
    """The outbox ``Put`` of one ``listing.matched`` event addressed to the saver ``recipient_id``."""
    routing = {"recipientId": recipient_id, "savedSearchId": data.savedSearchId, "listingId": data.listingId}
    return outbox.event_op(outbox.LISTING_MATCHED, data.model_dump(mode="json"), routing)
