"""Profile routes: sourcing search (profile detail spans domains: :mod:`chalicelib.workflows.routes`)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports
from chalicelib.telemetry import metrics

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.profiles import models
    from chalicelib.profiles import search as profile_search

bp = Blueprint(__name__)
route = routes(bp, tags=("profiles",))


@route("/v1/profiles/search", "GET", query=lambda: models.ProfileSearchQuery, response=lambda: models.ProfilePage)
def search(caller: Caller, query: models.ProfileSearchQuery) -> models.ProfilePage:
    """Search profiles with sourcing filters (q, country, minVerifiedLevel, skills, openToWork, seniority, remote, channel)."""
    with metrics.search_page("profiles"):
        return profile_search.search_profiles(query, caller.user_id)
