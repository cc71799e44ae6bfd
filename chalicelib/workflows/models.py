"""Response models of the cross-domain reads (spec §2 "Listing", "Profile")."""

from __future__ import annotations

from chalicelib.listings.models import Listing
from chalicelib.match_requests.models import MatchRequest
from chalicelib.match_requests.profile_policy import ProfileRequestPolicy
from chalicelib.profiles.models import PublicProfile


class ListingDetail(Listing):
    """``GET /v1/listings/{id}``: adds the caller's own match request (null when none)."""

    myRequest: MatchRequest | None = None


class ProfileDetail(PublicProfile):
    """``GET /v1/profiles/{userId}``: adds the request policy for the caller and the caller's request."""

    profileRequestPolicy: ProfileRequestPolicy
    myProfileRequest: MatchRequest | None = None
