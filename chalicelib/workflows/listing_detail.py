"""Listing detail (``GET /v1/listings/{id}``): the listing, its owner and the caller's match request.

After the listing read, one BatchGetItem reads the owner and the caller's request (its id is
derived, see :mod:`chalicelib.match_requests.ids`).
"""

from __future__ import annotations

from chalicelib.auth.service import Caller
from chalicelib.edge.conditional import Versioned
from chalicelib.kernel import errors
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.service import get_visible, to_model
from chalicelib.match_requests import api as match_requests
from chalicelib.match_requests import ids
from chalicelib.match_requests.models import MatchRequest
from chalicelib.match_requests.service import to_model as request_model
from chalicelib.users.records import UserRecord
from chalicelib.workflows.models import ListingDetail


def owner_and_my_request(listing: ListingRecord, caller_id: str) -> tuple[UserRecord | None, MatchRequest | None]:
    """A listing's owner item and the caller's match request about it, in one BatchGetItem
    (which also reads whether a block stands between the caller and the owner).

    Parameters
    ----------
    listing:
        The listing item (``ownerId``, ``listingId``).
    caller_id:
        The caller's user id.

    Returns
    -------
    tuple
        The owner's user item (``None`` when the user is gone) and the caller's request
        (always ``None`` for the owner: no requests to one's own listing).

    Raises
    ------
    NotFound
        A block stands between the caller and the owner (the listing answers as a missing one).
    """
    owner_id, listing_id = listing["ownerId"], listing["listingId"]
    request_id = ids.request_id(SubjectType.LISTING, caller_id, listing_id) if caller_id != owner_id else None
    pairs = [(caller_id, owner_id)] if caller_id != owner_id else []
    bundle = match_requests.read_bundle(request_ids=[request_id] if request_id else [], user_ids=[owner_id], block_pairs=pairs)
    if pairs and bundle.blocks(caller_id, owner_id):
        raise errors.NotFound(f"Listing '{listing_id}' not found")
    mine = bundle.requests.get(request_id) if request_id else None
    return bundle.users.get(owner_id), (request_model(mine) if mine else None)


def get_listing_detail(caller: Caller, listing_id: str) -> ListingDetail:
    """Listing detail with the owner summary and the caller's match request (``myRequest``).

    Raises
    ------
    NotFound
        No such listing, or another user's listing that is not ACTIVE.
    """
    detail: ListingDetail = read_listing_detail(caller, listing_id).result
    return detail


def read_listing_detail(caller: Caller, listing_id: str) -> Versioned:
    """As :func:`get_listing_detail`, with the listing's ``version`` (its ETag, :mod:`chalicelib.edge.conditional`).

    Raises
    ------
    NotFound
        No such listing, another user's listing that is not ACTIVE, or one whose owner and the
        caller have a block between them.
    """
    item = get_visible(caller, listing_id)
    owner, my_request = owner_and_my_request(item, caller.user_id)
    owner_view = caller.user_id == item["ownerId"]
    detail = ListingDetail(**to_model(item, owner, owner_view=owner_view).model_dump(), myRequest=my_request)
    return Versioned(detail, int(item["version"]))
