"""Request routes: send match and profile requests, list them, read one (decisions open conversations:
:mod:`chalicelib.workflows.routes`)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.match_requests import models, service

bp = Blueprint(__name__)
route = routes(bp, tags=("requests",))


@route(
    "/v1/match-requests", "POST", body=lambda: models.MatchRequestCreate, response=lambda: models.MatchRequest, status=201,
    rules=("Every key in `channels` must be connected by the caller (`PUT /v1/me/channels/{key}`).",),
)
def create_match_request(caller: Caller, body: models.MatchRequestCreate) -> models.MatchRequest:
    """Send a match request about an ACTIVE listing (one per requester and listing)."""
    return service.create_match_request(caller, body)


@route(
    "/v1/profile-requests", "POST", body=lambda: models.ProfileRequestCreate, response=lambda: models.MatchRequest, status=201,
    rules=("`channel` must be one of the user's `activeChannels` and connected by the caller.",),
)
def create_profile_request(caller: Caller, body: models.ProfileRequestCreate) -> models.MatchRequest:
    """Send a profile request through one of the user's active channels (one per requester and user)."""
    return service.create_profile_request(caller, body)


@route("/v1/match-requests/mine", "GET", query=lambda: models.RequestListQuery, response=lambda: models.RequestPage)
def mine(caller: Caller, query: models.RequestListQuery) -> models.RequestPage:
    """The caller's sent requests with their status; ``subjectType=PROFILE|LISTING`` narrows them."""
    return service.list_sent(caller, query)


@route("/v1/match-requests/incoming", "GET", query=lambda: models.RequestListQuery, response=lambda: models.RequestPage)
def incoming(caller: Caller, query: models.RequestListQuery) -> models.RequestPage:
    """Requests addressed to the caller (about their listings or their profile)."""
    return service.list_received(caller, query)


@route("/v1/match-requests/listing/{listingId}", "GET", query=lambda: models.ListingRequestQuery, response=lambda: models.RequestPage)
def for_listing(caller: Caller, listingId: str, query: models.ListingRequestQuery) -> models.RequestPage:
    """Incoming requests for one of the caller's listings (owner only)."""
    return service.list_for_listing(caller, listingId, query)


@route("/v1/match-requests/{requestId}", "GET", response=lambda: models.MatchRequest)
def get_request(caller: Caller, requestId: str) -> models.MatchRequest:
    """One request, for its requester or recipient."""
    return service.get_request(caller, requestId)
