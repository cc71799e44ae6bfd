"""Profile routes: sourcing search (profile detail spans domains: :mod:`chalicelib.workflows.routes`)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.http import route
from chalicelib.profiles.models import ProfilePage, ProfileSearchQuery
from chalicelib.profiles.search import search_profiles

bp = Blueprint(__name__)
TAGS = ("profiles",)


@route(bp, "/v1/profiles/search", "GET", query=ProfileSearchQuery, response=ProfilePage, tags=TAGS)
def search(caller: Caller, query: ProfileSearchQuery) -> ProfilePage:
    """Search profiles with sourcing filters (q, country, minVerifiedLevel, skills, openToWork, seniority, remote, channel)."""
    return search_profiles(query)
