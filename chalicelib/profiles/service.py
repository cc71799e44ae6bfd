"""Profile views: the public view of a user item (search items; the detail adds to it in
:mod:`chalicelib.workflows.profile_detail`)."""

from __future__ import annotations

from typing import Any

from chalicelib.profiles.models import PublicProfile
from chalicelib.users.records import UserRecord
from chalicelib.users.service import active_channels, summary_fields


def public_profile_fields(user: UserRecord) -> dict[str, Any]:
    """The fields of :class:`PublicProfile` for a user item as plain data, for a model that holds
    many profiles to validate in one pass (a search page validated by one ``ProfilePage``, not a
    model per profile and per part of it; as :func:`chalicelib.listings.service.view_fields`)."""
    return {
        "userId": user["userId"],
        **summary_fields(user),
        "recruiting": user.get("recruiting") or {},
        "activeChannels": active_channels(user),
        "createdAt": user["createdAt"],
        "updatedAt": user["updatedAt"],
    }


def public_profile(user: UserRecord) -> PublicProfile:
    """The public view of a user item: summary, recruiting information and active channels."""
    return PublicProfile.model_validate(public_profile_fields(user))
