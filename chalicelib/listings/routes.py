"""Listing routes: create, search, mine, update, status (detail and delete span domains: :mod:`chalicelib.workflows.routes`)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.http import query_params, route
from chalicelib.listings import service
from chalicelib.listings.models import (
    Listing,
    ListingCreate,
    ListingPage,
    ListingStatusChange,
    ListingUpdate,
    MyListingPage,
)
from chalicelib.listings.search.query import parse_search
from chalicelib.listings.search.service import search_listings
from chalicelib.pagination import PageQuery

bp = Blueprint(__name__)
TAGS = ("listings",)


@route(bp, "/v1/listings", "POST", body=ListingCreate, response=Listing, status=201, tags=TAGS)
def create_listing(caller: Caller, body: ListingCreate) -> Listing:
    """Create a listing; it starts PENDING and awaits administrator approval."""
    return service.create_listing(caller, body)


@route(
    bp, "/v1/listings/search", "GET", response=ListingPage, tags=TAGS,
    extra_query=("q", "category", "role", "meta.<key>", "meta.<key>_min", "meta.<key>_max",
                 "meta.<key>_lat", "meta.<key>_lng", "radiusKm", "page", "pageSize", "cursor"),
)
def search(caller: Caller) -> ListingPage:
    """Search ACTIVE listings; nearest first with a geo filter, else newest first."""
    return search_listings(parse_search(query_params(bp.current_request)))


@route(bp, "/v1/listings/mine", "GET", query=PageQuery, response=MyListingPage, tags=TAGS)
def mine(caller: Caller, query: PageQuery) -> MyListingPage:
    """The caller's listings with their statuses, newest first."""
    return service.list_my_listings(caller, query)


@route(bp, "/v1/listings/{listingId}", "PATCH", body=ListingUpdate, response=Listing, tags=TAGS, conditional=True)
def update(caller: Caller, listingId: str, body: ListingUpdate, expected_version: int | None) -> Listing:
    """Update meta, channels or webhookIds; the listing goes back to PENDING for re-review."""
    return service.update_listing(caller, listingId, body, expected_version)


@route(
    bp, "/v1/listings/{listingId}/status", "PATCH", body=ListingStatusChange, response=Listing, tags=TAGS, conditional=True
)
def change_status(caller: Caller, listingId: str, body: ListingStatusChange, expected_version: int | None) -> Listing:
    """Pause (``{"status": "PAUSED"}``) an ACTIVE listing or resume (``"ACTIVE"``) a PAUSED one."""
    return service.change_status(caller, listingId, body, expected_version)
