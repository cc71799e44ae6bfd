"""Profile routes: sourcing search and profile detail."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.conditional import Versioned
from chalicelib.http import route
from chalicelib.profiles.models import ProfileDetail, ProfilePage, ProfileSearchQuery
from chalicelib.profiles.search import search_profiles
from chalicelib.profiles.service import read_profile

bp = Blueprint(__name__)
TAGS = ("profiles",)


@route(bp, "/v1/profiles/search", "GET", query=ProfileSearchQuery, response=ProfilePage, tags=TAGS)
def search(caller: Caller, query: ProfileSearchQuery) -> ProfilePage:
    """Search profiles with sourcing filters (q, country, minVerifiedLevel, skills, openToWork, seniority, remote, channel)."""
    return search_profiles(query)


@route(bp, "/v1/profiles/{userId}", "GET", response=ProfileDetail, tags=TAGS, etag=True)
def detail(caller: Caller, userId: str) -> Versioned:
    """A profile with ``profileRequestPolicy`` for the caller, ``activeChannels`` and ``myProfileRequest``."""
    return read_profile(caller, userId)
