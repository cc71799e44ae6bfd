"""Routes of users: ``/v1/me``, ``/v1/me/channels`` and the admin user routes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.channels import ChannelKey
from chalicelib.http import route
from chalicelib.lazy import lazy_import

# The domain's modules load with the first request of one of these routes, not at cold start.
if TYPE_CHECKING:
    from chalicelib import pagination
    from chalicelib.conditional import Versioned
    from chalicelib.pagination import Deleted
    from chalicelib.users import models, service
    from chalicelib.users.models import (
        AdminUserCreate,
        AdminUserPatch,
        Channel,
        ChannelConnect,
        ChannelList,
        CreatedUser,
        Profile,
        ProfilePatch,
    )
else:
    pagination = lazy_import("chalicelib.pagination")
    models = lazy_import("chalicelib.users.models")
    service = lazy_import("chalicelib.users.service")

bp = Blueprint(__name__)


@route(
    bp, "/v1/admin/users", "POST", auth="admin", body=lambda: models.AdminUserCreate, response=lambda: models.CreatedUser,
    status=201, tags=("admin",),
)
def create_user(caller: Caller, body: AdminUserCreate) -> CreatedUser:
    """Create a user with its first API key (shown once)."""
    return service.create_user(body)


@route(
    bp, "/v1/admin/users/{userId}", "PATCH", auth="admin", body=lambda: models.AdminUserPatch, response=lambda: models.Profile,
    tags=("admin",),
    conditional=True,
)
def patch_user(caller: Caller, userId: str, body: AdminUserPatch, expected_version: int | None) -> Profile:
    """Set a user's verification level."""
    return service.set_verified_level(userId, body.verifiedLevel, expected_version)


@route(bp, "/v1/me", "GET", response=lambda: models.Profile, tags=("profiles",), etag=True)
def me(caller: Caller) -> Versioned:
    """The caller's own profile."""
    return service.read_me(caller)


@route(
    bp, "/v1/me/profile", "PATCH", body=lambda: models.ProfilePatch, response=lambda: models.Profile, tags=("profiles",),
    conditional=True,
)
def patch_profile(caller: Caller, body: ProfilePatch, expected_version: int | None) -> Profile:
    """Update the caller's profile (any subset of its fields)."""
    return service.update_profile(caller, body, expected_version)


@route(bp, "/v1/me/channels", "GET", response=lambda: models.ChannelList, tags=("channels",))
def list_channels(caller: Caller) -> ChannelList:
    """The caller's connected channels."""
    return service.list_channels(caller)


@route(
    bp, "/v1/me/channels/{key}", "PUT", body=lambda: models.ChannelConnect, response=lambda: models.Channel, tags=("channels",),
    path_types={"key": ChannelKey},
)
def connect_channel(caller: Caller, key: str, body: ChannelConnect) -> Channel:
    """Connect a channel (or change its handle)."""
    return service.connect_channel(caller, key, body.handle)


@route(
    bp, "/v1/me/channels/{key}", "DELETE", response=lambda: pagination.Deleted, tags=("channels",), path_types={"key": ChannelKey}
)
def disconnect_channel(caller: Caller, key: str) -> Deleted:
    """Disconnect a channel; answers ``{id: <key>, deleted: true}``."""
    service.disconnect_channel(caller, key)
    return pagination.Deleted(id=key)
