"""Listing routes: create, search, mine, update, status (detail and delete span domains: :mod:`chalicelib.workflows.routes`)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import query_params, routes
from chalicelib.kernel.lazy_imports import lazy_imports
from chalicelib.telemetry import metrics

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.kernel import pagination
    from chalicelib.listings import models, service
    from chalicelib.listings.search import parameters
    from chalicelib.listings.search import query as search_query
    from chalicelib.listings.search import service as search_service

bp = Blueprint(__name__)
route = routes(bp, tags=("listings",))

#: Rules of listing bodies beyond their JSON Schema (they depend on the category, the caller's
#: channels and webhooks); the service answers them with 400 VALIDATION_ERROR.
LISTING_RULES = (
    "`roleKey` must be a role of the category `categoryKey` (`GET /v1/categories/{key}`).",
    "`meta` holds the category's fields for the role: every field required for the role, no field the role may "
    "not set, each value in its field's `encoding`, at most its `maxLength` characters (rich text: after sanitizing) "
    "and, for numbers, within its `minimum` and `maximum`; a location without `<key>_lat`/`<key>_lng` must be geocodable.",
    "Every key in `channels` must be connected by the caller (`PUT /v1/me/channels/{key}`).",
    "Every id in `webhookIds` must name one of the caller's webhooks.",
)


@route("/v1/listings", "POST", body=lambda: models.ListingCreate, response=lambda: models.Listing, status=201, rules=LISTING_RULES)
def create_listing(caller: Caller, body: models.ListingCreate) -> models.Listing:
    """Create a listing; it starts PENDING and awaits administrator approval."""
    return service.create_listing(caller, body)


@route(
    "/v1/listings/search", "GET", query=lambda: parameters.ListingSearchQuery, response=lambda: models.ListingPage,
    extra_parameters=lambda: parameters.meta_parameters(),
    rules=(
        "`role` must be a role of `category` when both are given.",
        "A `meta.*` filter must name a filterable field of `category` (without `category`: of some category, "
        "with the same type in every category that has it), and its value must be an option of that field.",
        "`meta.<key>_lat` and `meta.<key>_lng` go together, on one location field per search; `radiusKm` needs them.",
        "A number or integer filter's value must be one the field may hold: within the field's `minimum` and `maximum` "
        "(`GET /v1/categories/{key}`) and, as a listing stores it (28 significant digits, no leading or trailing zeros), "
        "at most 100 characters long.",
    ),
)
def search(caller: Caller, query: parameters.ListingSearchQuery) -> models.ListingPage:
    """Search ACTIVE listings; by relevance with `q`, nearest first with a geo filter, else newest first.

    `q`: every word must match a word of the title or a text field, case and accents ignored: the same
    Snowball stem in the category's language (`engineers` finds `engineering`), a word one typo from it
    (5 letters or more, never the first letter), or, for the last word, a word it starts (search as you
    type). Non-final stop words (`in`, `the`, ...) are ignored.

    With `q` (and no geo filter) results are ranked by relevance over every match unless `sort=newest`:
    fewer typo corrections first, then BM25F (field boosts: title 3, other text 1.5, description 1,
    place name 3), ties newest first; each result carries `score`. `total` is exact, or a lower bound
    with `totalRelation: "gte"`.
    """
    with metrics.search_page("listings"):
        return search_service.search_listings(search_query.parse_search(query_params(bp.current_request), query), caller.user_id)


@route("/v1/listings/mine", "GET", query=lambda: pagination.PageQuery, response=lambda: models.MyListingPage)
def mine(caller: Caller, query: pagination.PageQuery) -> models.MyListingPage:
    """The caller's listings with their statuses, newest first."""
    return service.list_my_listings(caller, query)


@route(
    "/v1/listings/{listingId}", "PATCH", body=lambda: models.ListingUpdate, response=lambda: models.Listing, conditional=True,
    rules=LISTING_RULES[1:],
)
def update(caller: Caller, listingId: str, body: models.ListingUpdate, expected_version: int | None) -> models.Listing:
    """Update meta, channels or webhookIds; only a change of meta returns the listing to PENDING.

    A change of `meta` sends the listing back to PENDING for re-review (spec §3 state table). A PATCH
    of only `channels` and/or `webhookIds` (or of meta values equal to the stored ones) keeps its
    status: an ACTIVE listing stays ACTIVE and searchable, and a webhook bound this way receives the
    listing's next `match_request.*` events.
    """
    return service.update_listing(caller, listingId, body, expected_version)


@route(
    "/v1/listings/{listingId}/status", "PATCH", body=lambda: models.ListingStatusChange, response=lambda: models.Listing,
    conditional=True,
)
def change_status(caller: Caller, listingId: str, body: models.ListingStatusChange, expected_version: int | None) -> models.Listing:
    """Pause (``{"status": "PAUSED"}``) an ACTIVE listing or resume (``"ACTIVE"``) a PAUSED one."""
    return service.change_status(caller, listingId, body, expected_version)
