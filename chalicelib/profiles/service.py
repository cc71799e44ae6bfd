"""Profile views: the public view of a user item (search items; the detail adds to it in
:mod:`chalicelib.workflows.profile_detail`)."""

from __future__ import annotations

from chalicelib.profiles.models import PublicProfile
from chalicelib.users.models import Recruiting
from chalicelib.users.records import UserRecord
from chalicelib.users.service import active_channels, summary_from_item


def public_profile(user: UserRecord) -> PublicProfile:
    """The public view of a user item: summary, recruiting information and active channels."""
    return PublicProfile(
        userId=user["userId"],
        **summary_from_item(user).model_dump(),
        recruiting=Recruiting.model_validate(user.get("recruiting") or {}),
        activeChannels=active_channels(user),
        createdAt=user["createdAt"],
        updatedAt=user["updatedAt"],
    )
