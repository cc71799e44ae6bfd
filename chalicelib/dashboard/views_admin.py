"""Administrator pages: users (create with a first key, set verification level) and the approvals queue."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.channels import ChannelKey
from chalicelib.dashboard.web import Page, page
from chalicelib.http import parse_model
from chalicelib.users import service as users
from chalicelib.users.models import MAX_VERIFIED_LEVEL, AdminUserCreate, AdminUserPatch, CreatedUser, Profile

NOTICES = {
    "approved": "Listing approved: it is ACTIVE and searchable.",
    "rejected": "Listing rejected with your reason.",
}
LEVELS = list(range(MAX_VERIFIED_LEVEL + 1))


def _users_page(current: Page, status: int = 200, created: CreatedUser | None = None, updated: Profile | None = None) -> Response:
    return current.render("users.html", status, nav="users", levels=LEVELS, channel_keys=[c.value for c in ChannelKey],
                          created=created, updated=updated)


@page("/dashboard/admin/users", access="admin")
def users_page(current: Page) -> Response:
    """The "Create user" and "Set verification level" forms."""
    return _users_page(current)


@page("/dashboard/admin/users", "POST", access="admin")
def create_user(current: Page) -> Response:
    """Create a user and show its first API key once."""
    channels = {key.value: current.field(f"channel_{key.value}").strip() for key in ChannelKey}
    body = parse_model(AdminUserCreate, {
        "displayName": current.field("display_name"),
        "country": current.field("country").strip() or None,
        "verifiedLevel": current.field("verified_level") or "0",
        "channels": {k: v for k, v in channels.items() if v},
        "admin": current.field("admin") == "on",
    })
    return _users_page(current, 201, created=users.create_user(body))


@page("/dashboard/admin/users/verification", "POST", access="admin")
def set_verification(current: Page) -> Response:
    """Set a user's verification level (the API's ``PATCH /v1/admin/users/{userId}`` rule)."""
    body = parse_model(AdminUserPatch, {"verifiedLevel": current.field("verified_level")})
    return _users_page(current, updated=users.set_verified_level(current.field("user_id").strip(), body.verifiedLevel))
