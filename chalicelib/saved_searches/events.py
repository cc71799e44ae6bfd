"""The ``listing.matched`` webhook event: payload model, routing and outbox write.

Delivered to every active webhook of the saver subscribed to it (``routing.recipientId``),
signed and logged like every event. ``EVENT_DATA_MODELS`` maps the type to its ``data`` model
(the event catalogue reads it, as the other domains' maps).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib import outbox
from chalicelib.model_base import Model


class ListingMatched(Model):
    """``listing.matched`` data: a newly ACTIVE listing matches one of the recipient's saved searches.

    ``distanceKm``: great-circle km from the saved search's geo center, rounded to 0.01 (null
    without a geo filter); ``matchedAt``: ISO 8601 UTC.
    """

    savedSearchId: str
    savedSearchName: str
    listingId: str
    listingTitle: str
    categoryKey: str
    roleKey: str
    distanceKm: float | None = None
    matchedAt: str


#: The ``data`` model of the saved-search events.
EVENT_DATA_MODELS: dict[str, type[BaseModel]] = {outbox.LISTING_MATCHED: ListingMatched}


def matched_event_op(data: ListingMatched, recipient_id: str) -> dict[str, Any]:
    """The outbox ``Put`` of one ``listing.matched`` event addressed to the saver ``recipient_id``."""
    routing = {"recipientId": recipient_id, "savedSearchId": data.savedSearchId, "listingId": data.listingId}
    return outbox.event_op(outbox.LISTING_MATCHED, data.model_dump(mode="json"), routing)
