"""Routes of users: ``/v1/me``, ``/v1/me/channels`` and the admin user routes."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.channels import ChannelKey
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.edge import conditional
    from chalicelib.kernel import pagination
    from chalicelib.users import models, service

bp = Blueprint(__name__)
route = routes(bp)


@route(
    "/v1/admin/users", "POST", auth="admin", body=lambda: models.AdminUserCreate, response=lambda: models.CreatedUser, status=201,
    tags=("admin",),
)
def create_user(caller: Caller, body: models.AdminUserCreate) -> models.CreatedUser:
    """Create a user with its first API key (shown once)."""
    return service.create_user(body, actor_id=caller.user_id)


@route("/v1/admin/users", "GET", auth="admin", query=lambda: models.AdminUserQuery, response=lambda: models.AdminUserPage, tags=("admin",))
def list_users(caller: Caller, query: models.AdminUserQuery) -> models.AdminUserPage:
    """Users by display name: ``q`` (name prefix), ``id``, ``country`` and ``verifiedLevel`` filters."""
    return service.list_users(caller.user_id, query)


@route(
    "/v1/admin/users/{userId}", "PATCH", auth="admin", body=lambda: models.AdminUserPatch, response=lambda: models.Profile,
    tags=("admin",), conditional=True,
)
def patch_user(caller: Caller, userId: str, body: models.AdminUserPatch, expected_version: int | None) -> models.Profile:
    """Set a user's verification level."""
    return service.set_verified_level(userId, body.verifiedLevel, expected_version, actor_id=caller.user_id)


@route("/v1/me", "GET", response=lambda: models.Profile, tags=("profiles",), etag=True)
def me(caller: Caller) -> conditional.Versioned:
    """The caller's own profile."""
    return service.read_me(caller)


@route("/v1/me/profile", "PATCH", body=lambda: models.ProfilePatch, response=lambda: models.Profile, tags=("profiles",), conditional=True)
def patch_profile(caller: Caller, body: models.ProfilePatch, expected_version: int | None) -> models.Profile:
    """Update the caller's profile (any subset of its fields)."""
    return service.update_profile(caller, body, expected_version)


@route("/v1/me/channels", "GET", response=lambda: models.ChannelList, tags=("channels",))
def list_channels(caller: Caller) -> models.ChannelList:
    """The caller's connected channels."""
    return service.list_channels(caller)


@route(
    "/v1/me/channels/{key}", "PUT", body=lambda: models.ChannelConnect, response=lambda: models.Channel, tags=("channels",),
    path_types={"key": ChannelKey},
)
def connect_channel(caller: Caller, key: str, body: models.ChannelConnect) -> models.Channel:
    """Connect a channel (or change its handle)."""
    return service.connect_channel(caller, key, body.handle)


@route("/v1/me/channels/{key}", "DELETE", response=lambda: pagination.Deleted, tags=("channels",), path_types={"key": ChannelKey})
def disconnect_channel(caller: Caller, key: str) -> pagination.Deleted:
    """Disconnect a channel; answers ``{id: <key>, deleted: true}``."""
    service.disconnect_channel(caller, key)
    return pagination.Deleted(id=key)
