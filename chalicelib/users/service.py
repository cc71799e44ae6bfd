"""User rules: creating users and keys, profiles, channels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from chalicelib.audit import api as audit
from chalicelib.audit.records import AuditAction
from chalicelib.auth import api as auth
from chalicelib.auth import keys
from chalicelib.auth.service import ADMIN_SCOPE, Caller
from chalicelib.edge.conditional import ANY_VERSION, Versioned, check_version
from chalicelib.kernel import clock, errors
from chalicelib.kernel.channels import CHANNEL_KEYS
from chalicelib.kernel.text import fold
from chalicelib.persistence.transactions import Transaction, TransactionConflict
from chalicelib.users import repository
from chalicelib.users.models import (
    AdminUser,
    AdminUserCreate,
    AdminUserPage,
    AdminUserQuery,
    Channel,
    ChannelList,
    CreatedUser,
    Profile,
    ProfilePatch,
    ProfileSummary,
    Recruiting,
    RequestPolicy,
)
from chalicelib.users.records import UserRecord


def active_channels(user: UserRecord) -> list[str]:
    """The keys of the channels ``user`` has connected, sorted."""
    return sorted((user.get("channels") or {}).keys())


def require_connected(user: UserRecord, channels: Sequence[str], field: str) -> list[str]:
    """The channels ``user`` offers, de-duplicated in their order, if ``user`` has connected every one.

    The one check that a listing owner or a requester offers only channels they connected.

    Parameters
    ----------
    user:
        The offering user's item (``channels``).
    channels:
        Channel keys as the request body gives them.
    field:
        The body field the error names (``channels``, or ``channel`` for a profile request).

    Returns
    -------
    list[str]
        ``channels`` without repeats, first occurrence first.

    Raises
    ------
    RuleViolation
        Some channels are not connected by ``user`` (``details`` names ``field`` and lists them).
    """
    offered = list(dict.fromkeys(channels))
    connected = set(active_channels(user))
    missing = [c for c in offered if c not in connected]
    if missing:
        raise errors.RuleViolation.for_field(
            field,
            f"not connected by you: {', '.join(missing)} (connect a channel to your account before offering it)",
            "Channels must be connected by you before you offer them",
        )
    return offered


def summary_fields(user: UserRecord | Mapping[str, Any]) -> dict[str, Any]:
    """The summary's fields of a user item as plain data (``socialLinks`` a dict), for a model that
    holds them to validate in one pass (:func:`summary_from_item`; a listing's owner summary)."""
    return {"displayName": user.get("displayName", ""), "verifiedLevel": int(user.get("verifiedLevel", 0)),
            "country": user.get("country"), "socialLinks": user.get("socialLinks") or {}}


def summary_from_item(user: UserRecord | Mapping[str, Any]) -> ProfileSummary:
    """The requester summary (displayName, verifiedLevel, country, socialLinks) of a user item, or
    of the summary a request stored (``profile``; unset values were left out when it was written)."""
    return ProfileSummary.model_validate(summary_fields(user))


def profile_from_item(user: UserRecord) -> Profile:
    """The full own-profile view of a user item."""
    return Profile(
        userId=user["userId"],
        **summary_from_item(user).model_dump(),
        recruiting=Recruiting.model_validate(user.get("recruiting") or {}),
        requestPolicy=RequestPolicy.model_validate(user.get("requestPolicy") or {}),
        activeChannels=active_channels(user),
        createdAt=user["createdAt"],
        updatedAt=user["updatedAt"],
    )


#: Read-and-write attempts of a change that rewrites the administrators' list attributes, which
#: combine fields one change does not carry (a country change needs the stored level).
_LIST_ATTEMPTS = 3


def require_user(user_id: str, consistent: bool = False) -> UserRecord:
    """The user item of ``user_id`` (``consistent``: a strongly consistent read).

    Raises
    ------
    NotFound
        No such user.
    """
    user = repository.get_user(user_id, consistent=consistent)
    if user is None:
        raise errors.NotFound(f"User '{user_id}' not found")
    return user


def create_user(body: AdminUserCreate, api_key: str | None = None, actor_id: str | None = None) -> CreatedUser:
    """Create a user and its first API key in one transaction.

    Parameters
    ----------
    body:
        Profile basics, channels and whether the key is an admin key.
    api_key:
        Use this key instead of a random one (the local bootstrap's ``ADMIN_API_KEY``).
    actor_id:
        The administrator creating the user: the transaction also writes the audit entries
        ``user.create`` and, for an admin key, ``admin_key.create``. ``None`` for the operator's
        own tools (the local bootstrap, ``scripts/create_admin_key.py``), which act outside the
        service and record nothing.

    Raises
    ------
    Conflict
        ``api_key`` is already registered.
    """
    now = clock.iso()
    user_id = clock.new_id("usr")
    api_key = api_key or keys.new_api_key()
    user: UserRecord = {
        "userId": user_id,
        "displayName": body.displayName,
        "country": body.country,
        "verifiedLevel": body.verifiedLevel,
        "socialLinks": {},
        "recruiting": Recruiting().model_dump(),
        "requestPolicy": RequestPolicy().model_dump(),
        "channels": {k.value: {"handle": h, "connectedAt": now} for k, h in body.channels.items()},
        "searchShard": repository.search_shard(user_id),
        "version": 1,
        "createdAt": now,
        "updatedAt": now,
    }
    listed = repository.admin_list_attributes(user_id, body.displayName, body.country, body.verifiedLevel)
    scopes = [ADMIN_SCOPE] if body.admin else []
    tx = Transaction().add("user", repository.put_user_op(cast(UserRecord, {**user, **listed})))
    key = keys.key_record(user_id, api_key, scopes, now)
    tx.add("key", auth.put_key_op(key))
    tx.add("key count", auth.count_key_op(user_id))
    if actor_id is not None:
        tx.add("audit", audit.entry_op(actor_id, AuditAction.USER_CREATE, user_id,
                                       {"admin": body.admin, "verifiedLevel": body.verifiedLevel}))
        if body.admin:
            tx.add("audit_key", audit.entry_op(actor_id, AuditAction.ADMIN_KEY_CREATE, user_id,
                                               {"keyId": key["keyId"], "via": "user.create"}))
    try:
        tx.commit()
    except TransactionConflict as exc:
        raise errors.Conflict("That API key is already registered") from exc
    return CreatedUser(userId=user_id, apiKey=api_key, profile=profile_from_item(user))


def set_verified_level(user_id: str, level: int | None, expected_version: int | None = None, *, actor_id: str) -> Profile:
    """Set a user's verification level (admin); ``None``, or the level the user has, leaves the
    user unchanged (nothing is written or audited).

    ``expected_version`` (``If-Match``) applies the change only to that profile version, atomically.
    The change and its audit entry (``user.verification_level`` by ``actor_id``) are one
    transaction, conditional on the version read first (the administrators' list attributes,
    :func:`repository.admin_list_attributes`, combine the level with the stored country).

    Raises
    ------
    NotFound
        No such user.
    PreconditionFailed
        The profile is not at ``expected_version`` (412).
    Conflict
        The profile changed between the read and the write :data:`_LIST_ATTEMPTS` times.
    """
    if level is None:
        current = require_user(user_id)
        check_version(repository.version_of(current), expected_version)
        return profile_from_item(current)
    required = None if expected_version == ANY_VERSION else expected_version
    for _ in range(_LIST_ATTEMPTS):
        current = require_user(user_id, consistent=True)
        version = repository.version_of(current)
        check_version(version, required)
        if int(current["verifiedLevel"]) == level:  # nothing to change: no write, no audit entry, the version stays
            return profile_from_item(current)
        listed = repository.admin_list_attributes(user_id, current["displayName"], current.get("country"), level)
        now = clock.iso()
        tx = Transaction().add("user", repository.set_level_op(user_id, level, now, version, listed))
        tx.add("audit", audit.entry_op(actor_id, AuditAction.USER_VERIFICATION_LEVEL, user_id, {"verifiedLevel": level}))
        try:
            tx.commit()
        except TransactionConflict:
            continue  # changed or deleted since the read: read again (the If-Match check is then a 412)
        written = cast(UserRecord, {**current, **listed, "verifiedLevel": level, "updatedAt": now, "version": version + 1})
        return profile_from_item(written)
    raise errors.Contended("The profile kept changing meanwhile; try again")


def _patch(user_id: str, sets: dict[str, Any], removes: list[str], expected_version: int | None) -> UserRecord | None:
    """:func:`repository.patch_user` with ``If-Match`` semantics (``ANY_VERSION`` only needs the user to exist)."""
    required = None if expected_version == ANY_VERSION else expected_version
    try:
        return repository.patch_user(user_id, sets, removes, expected_version=required)
    except repository.VersionMismatch as exc:
        raise errors.PreconditionFailed("The profile changed meanwhile; read it again") from exc


def read_me(caller: Caller) -> Versioned:
    """The caller's own profile with its ``version`` (its ETag).

    Raises
    ------
    NotFound
        The caller's user record no longer exists.
    """
    user = require_user(caller.user_id)
    return Versioned(profile_from_item(user), repository.version_of(user))


#: Profile objects a PATCH merges field by field instead of replacing.
MERGED_OBJECTS = ("socialLinks", "recruiting", "requestPolicy")


def update_profile(caller: Caller, patch: ProfilePatch, expected_version: int | None = None) -> Profile:
    """Apply the fields present in ``patch`` to the caller's profile in one UpdateItem.

    ``displayName`` and ``country`` are replaced (``country: null`` clears it).
    ``socialLinks``, ``recruiting`` and ``requestPolicy`` are merged key by key, as JSON Merge
    Patch (RFC 7396) does: keys left out keep their values, a ``null`` value clears that key
    (e.g. ``{"socialLinks": {"x": null}}`` removes the X link), lists are replaced whole;
    ``socialLinks: null`` clears every link.

    ``expected_version`` (``If-Match``) applies the patch only to that profile version, atomically.

    Raises
    ------
    NotFound
        The caller's user record no longer exists.
    PreconditionFailed
        The profile is not at ``expected_version`` (412).
    """
    sets: dict[str, Any] = {}
    removes: list[str] = []
    for name, value in patch.model_dump(exclude_unset=True, mode="json").items():
        if name in MERGED_OBJECTS and value is not None:
            for key, inner in value.items():
                if inner is None:
                    removes.append(f"{name}.{key}")
                else:
                    sets[f"{name}.{key}"] = inner
        elif value is not None:
            sets[name] = value
        elif name == "socialLinks":
            sets[name] = {}
        else:
            removes.append(name)  # country: null
    sets["updatedAt"] = clock.iso()
    if "displayName" in patch.model_fields_set or "country" in patch.model_fields_set:
        return profile_from_item(_patch_listed(caller.user_id, sets, removes, expected_version))
    user = _patch(caller.user_id, sets, removes, expected_version)
    if user is None:
        raise errors.NotFound("Your user record no longer exists")
    return profile_from_item(user)


def _patch_listed(user_id: str, sets: dict[str, Any], removes: list[str], expected_version: int | None) -> UserRecord:
    """:func:`_patch` of a change of ``displayName`` or ``country``: with the administrators' list
    attributes recomputed from the stored level, conditional on the version read first.

    Raises
    ------
    NotFound
        The user record no longer exists.
    PreconditionFailed
        The profile is not at ``expected_version``.
    Conflict
        The profile changed between the read and the write :data:`_LIST_ATTEMPTS` times.
    """
    required = None if expected_version == ANY_VERSION else expected_version
    for _ in range(_LIST_ATTEMPTS):
        current = repository.get_user(user_id, consistent=True)
        if current is None:
            raise errors.NotFound("Your user record no longer exists")
        version = repository.version_of(current)
        check_version(version, required)
        country = None if "country" in removes else sets.get("country", current.get("country"))
        listed = repository.admin_list_attributes(
            user_id, sets.get("displayName", current["displayName"]), country, int(current["verifiedLevel"])
        )
        extra_removes = [] if "adminCountryLevel" in listed else ["adminCountryLevel"]
        try:
            user = repository.patch_user(user_id, {**sets, **listed}, [*removes, *extra_removes], expected_version=version)
        except repository.VersionMismatch:
            continue
        if user is None:
            raise errors.NotFound("Your user record no longer exists")
        return user
    raise errors.Contended("The profile kept changing meanwhile; try again")


def list_channels(caller: Caller) -> ChannelList:
    """The caller's connected channels, sorted by key."""
    user = require_user(caller.user_id)
    channels = user.get("channels") or {}
    return ChannelList(channels=[Channel(key=k, **channels[k]) for k in sorted(channels)])


def _check_channel_key(key: str) -> None:
    if key not in CHANNEL_KEYS:
        raise errors.RuleViolation.for_field(
            "key", f"unknown channel; use one of {', '.join(sorted(CHANNEL_KEYS))}", f"Unknown channel '{key}'"
        )


def connect_channel(caller: Caller, key: str, handle: str) -> Channel:
    """Connect (or re-point) channel ``key`` with ``handle``.

    Raises
    ------
    RuleViolation
        ``key`` is not a supported channel (``details`` names ``key``).
    """
    _check_channel_key(key)
    now = clock.iso()
    if repository.set_channel(caller.user_id, key, handle, now) is None:
        raise errors.NotFound("Your user record no longer exists")
    return Channel(key=key, handle=handle, connectedAt=now)


def disconnect_channel(caller: Caller, key: str) -> None:
    """Disconnect channel ``key``.

    Raises
    ------
    RuleViolation
        Unknown channel key.
    NotFound
        The channel is not connected.
    """
    _check_channel_key(key)
    if not repository.remove_channel(caller.user_id, key, clock.iso()):
        raise errors.NotFound(f"Channel '{key}' is not connected")


#: The cursor scope's route of the administrators' user list (API and Dashboard).
ADMIN_LIST_ROUTE = "users.admin_list"


def list_users(caller_id: str, query: AdminUserQuery) -> AdminUserPage:
    """One page of users for administrators, by display name (folded), then id.

    ``id`` reads that one user (one GetItem) and applies the other filters to it; otherwise the
    list of the ``country``/``verifiedLevel`` combination is read from its index, ``q`` as a
    key condition on the name (one Query of ``pageSize + 1`` items, whatever the users' number).

    Parameters
    ----------
    caller_id:
        The administrator reading (the cursor is bound to them).
    query:
        Filters and paging.

    Raises
    ------
    RuleViolation
        ``cursor`` is malformed, edited, or from another query (``details`` names ``cursor``).
    """
    position = query.page_query().position(f"{ADMIN_LIST_ROUTE}|{caller_id}|{query.filters_text()}")
    if query.id is not None:
        user = repository.get_user(query.id) if position.page == 1 else None
        found = [user] if user is not None and _passes_filters(user, query) else []
        return AdminUserPage(users=[_admin_view(u) for u in found], pageSize=query.pageSize, nextCursor=None)
    records, more = repository.admin_page(query.country, query.verifiedLevel, query.q, position.page_size, after=position.key)
    last = str(records[-1].get("nameKey", "")) if records else None
    return AdminUserPage(users=[_admin_view(u) for u in records], pageSize=query.pageSize,
                         nextCursor=position.next_cursor(more and bool(last), last))


def _admin_view(user: UserRecord) -> AdminUser:
    return AdminUser(**profile_from_item(user).model_dump(), suspendedAt=user.get("suspendedAt"), erasure=user.get("erasure"))


def _passes_filters(user: UserRecord, query: AdminUserQuery) -> bool:
    """Whether ``user`` passes the filters of ``query`` other than ``id``."""
    return ((query.country is None or user.get("country") == query.country)
            and (query.verifiedLevel is None or int(user["verifiedLevel"]) == query.verifiedLevel)
            and (query.q is None or fold(user["displayName"]).startswith(fold(query.q))))
