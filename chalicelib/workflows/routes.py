"""Routes of the cross-domain use cases: listing detail and deletion, request decisions, profile detail.

They live here, above the domain packages, because each composes several of them; the other
routes of the same paths stay with their domain (e.g. ``PATCH /v1/listings/{listingId}`` in
:mod:`chalicelib.listings.routes`).
"""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The use cases' modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.edge import conditional
    from chalicelib.kernel import pagination
    from chalicelib.match_requests import models as request_models
    from chalicelib.workflows import listing_deletion, listing_detail, models, profile_detail, request_decisions

bp = Blueprint(__name__)
route = routes(bp)


@route(
    "/v1/listings/{listingId}", "GET", response=lambda: models.ListingDetail, tags=("listings",), operation_id="listings_detail",
    etag=True,
)
def listing(caller: Caller, listingId: str) -> conditional.Versioned:
    """Listing detail: owner profile, channels and the caller's own request (``myRequest``)."""
    return listing_detail.read_listing_detail(caller, listingId)


@route(
    "/v1/listings/{listingId}", "DELETE", response=lambda: pagination.Deleted, tags=("listings",), operation_id="listings_delete",
    conditional=True,
)
def delete_listing(caller: Caller, listingId: str, expected_version: int | None) -> pagination.Deleted:
    """Delete the caller's listing and reject its pending match requests.

    Each PENDING request becomes REJECTED with reason "listing deleted": the first 31 with the
    delete, any more within seconds after the answer. Conversations stay."""
    return listing_deletion.delete_listing(caller, listingId, expected_version)


@route("/v1/profiles/{userId}", "GET", response=lambda: models.ProfileDetail, tags=("profiles",), operation_id="profiles_detail", etag=True)
def profile(caller: Caller, userId: str) -> conditional.Versioned:
    """A profile with ``profileRequestPolicy`` for the caller, ``activeChannels`` and ``myProfileRequest``."""
    return profile_detail.read_profile(caller, userId)


@route(
    "/v1/match-requests/{requestId}/status", "PATCH", body=lambda: request_models.StatusChange,
    response=lambda: request_models.MatchRequest, tags=("requests",), operation_id="match_requests_decide",
)
def decide(caller: Caller, requestId: str, body: request_models.StatusChange) -> request_models.MatchRequest:
    """Accept or reject a PENDING request addressed to the caller; accepting opens a conversation."""
    return request_decisions.decide(caller, requestId, body)
