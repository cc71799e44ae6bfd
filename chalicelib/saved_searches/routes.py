"""Saved-search routes: save, list, read, delete, and the matches of one."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.kernel import pagination
    from chalicelib.saved_searches import models, service

bp = Blueprint(__name__)
route = routes(bp, tags=("saved-searches",))


@route(
    "/v1/saved-searches", "POST", body=lambda: models.SavedSearchCreate, response=lambda: models.SavedSearch, status=201,
    error_statuses=(409,),
    rules=(
        "`query` holds parameters of `GET /v1/listings/search` (not `page`, `pageSize` or `cursor`), each valid "
        "as that operation's parameter of the same name, and together valid as its rules say.",
        "With `alerts`, a geo filter needs `radiusKm`.",
    ),
)
def create_saved_search(caller: Caller, body: models.SavedSearchCreate) -> models.SavedSearch:
    """Save a listing search; with ``alerts``, new matches are sent as ``listing.matched`` webhook events."""
    return service.create_saved_search(caller, body)


@route("/v1/saved-searches", "GET", query=lambda: pagination.PageQuery, response=lambda: models.SavedSearchPage)
def list_saved_searches(caller: Caller, query: pagination.PageQuery) -> models.SavedSearchPage:
    """The caller's saved searches, newest first."""
    return service.list_saved_searches(caller, query)


@route("/v1/saved-searches/{savedSearchId}", "GET", response=lambda: models.SavedSearch)
def get_saved_search(caller: Caller, savedSearchId: str) -> models.SavedSearch:
    """One of the caller's saved searches."""
    return service.get_saved_search(caller, savedSearchId)


@route("/v1/saved-searches/{savedSearchId}", "DELETE", response=lambda: pagination.Deleted)
def delete_saved_search(caller: Caller, savedSearchId: str) -> pagination.Deleted:
    """Delete one of the caller's saved searches; it is matched no more."""
    return service.delete_saved_search(caller, savedSearchId)


@route(
    "/v1/saved-searches/{savedSearchId}/matches", "GET", query=lambda: pagination.PageQuery,
    response=lambda: models.SavedSearchMatchPage,
)
def list_matches(caller: Caller, savedSearchId: str, query: pagination.PageQuery) -> models.SavedSearchMatchPage:
    """Listings that matched since the search was saved and are still ACTIVE, newest first."""
    return service.list_matches(caller, savedSearchId, query)
