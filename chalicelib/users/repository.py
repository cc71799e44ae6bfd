"""Users table: one item per user holding the profile and the connected channels.

Item shape: :class:`~chalicelib.users.records.UserRecord` (what every read returns and
:func:`put_user_op` takes).
``country`` is left out when unset, so the ``adminByCountry`` index stays sparse. ``version`` starts
at 1 and every write increments it (records from before it existed count as version 0); it is
the profile's ``ETag`` (:mod:`chalicelib.edge.conditional`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.kernel.text import fold
from chalicelib.persistence import batch_reads, storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.search import keyset
from chalicelib.users.records import UserRecord, record

#: Shards of the ``bySearchShard`` index, which operator commands walk shard by shard
#: (:func:`iter_shard`; profile search reads the SearchIndex table); 8 shards spread the writes.
SEARCH_SHARDS = 8


def search_shard(user_id: str) -> str:
    """The ``searchShard`` of a user: ``S0``..``S7`` from a stable hash of the id."""
    return f"S{int(hashlib.sha256(user_id.encode()).hexdigest(), 16) % SEARCH_SHARDS}"


def _table() -> str:
    return settings().USERS_TABLE


#: The one partition of the administrators' unfiltered user list (``adminByName``).
ADMIN_ALL = "all"


def _user_of_name_key(_partition: str, name_key: str) -> dict[str, str]:
    return {"userId": name_key.rsplit("#", 1)[1]}


#: The administrators' user lists (``GET /v1/admin/users``), by the filters given (country,
#: verification level): each sorted by ``nameKey`` = ``<folded displayName>#<userId>``, so a
#: display-name prefix is a key condition and a page is one Query of ``pageSize + 1`` items.
ADMIN_LISTS: dict[tuple[bool, bool], keyset.ListIndex] = {
    (False, False): keyset.ListIndex("adminByName", "adminAll", "nameKey", _user_of_name_key),
    (True, False): keyset.ListIndex("adminByCountry", "country", "nameKey", _user_of_name_key),
    (False, True): keyset.ListIndex("adminByLevel", "adminLevel", "nameKey", _user_of_name_key),
    (True, True): keyset.ListIndex("adminByCountryLevel", "adminCountryLevel", "nameKey", _user_of_name_key),
}


def name_prefix(text: str) -> str:
    """The ``nameKey`` prefix of the display names starting with ``text`` (case and accents folded)."""
    return fold(text)


def admin_list_attributes(user_id: str, display_name: str, country: str | None, level: int) -> dict[str, str]:
    """The attributes that file a user in the administrators' lists (:data:`ADMIN_LISTS`).

    Written with every change of ``displayName``, ``country`` or ``verifiedLevel``:
    ``nameKey``, ``adminAll``, ``adminLevel`` (``L<level>``) and, when the user has a country,
    ``adminCountryLevel`` (``<country>|L<level>``; absent otherwise, so that list stays sparse).
    """
    attributes = {"nameKey": f"{name_prefix(display_name)}#{user_id}", "adminAll": ADMIN_ALL, "adminLevel": f"L{level}"}
    if country:
        attributes["adminCountryLevel"] = f"{country}|L{level}"
    return attributes


def admin_page(
    country: str | None, level: int | None, prefix: str | None, size: int, after: str | None = None
) -> tuple[list[UserRecord], bool]:
    """One page of the administrators' user list, by display name (one Query of ``size + 1`` items).

    Parameters
    ----------
    country, level:
        Filters (``None``: any); each combination is its own index partition.
    prefix:
        Only display names starting with it (folded, :func:`name_prefix`); ``None``: all.
    size, after:
        Users per page (1..100); ``nameKey`` of the previous page's last user (a cursor's position).

    Returns
    -------
    tuple
        The page's records and whether more follow; a foreign ``after`` raises ``RuleViolation``
        (field ``cursor``) as :func:`chalicelib.search.keyset.read_page` does.
    """
    index = ADMIN_LISTS[(country is not None, level is not None)]
    partition = {
        (False, False): ADMIN_ALL, (True, False): country, (False, True): f"L{level}", (True, True): f"{country}|L{level}",
    }[(country is not None, level is not None)]
    found = keyset.read_page(_table(), index, str(partition), size, after=after, descending=False,
                             prefix=name_prefix(prefix) if prefix else None)
    return [record(i) for i in found.items], found.more


#: ``SET`` clause incrementing ``version`` (``:zero``/``:one`` in :data:`_BUMP_VALUES`).
_BUMP = "version = if_not_exists(version, :zero) + :one"
_BUMP_VALUES = {":zero": {"N": "0"}, ":one": {"N": "1"}}


def version_of(user: UserRecord) -> int:
    """The ``version`` of a user item (0 for records written before versions existed)."""
    return int(user.get("version", 0))


def get_user(user_id: str, consistent: bool = False) -> UserRecord | None:
    """The user record, or ``None`` (``consistent``: a strongly consistent read)."""
    item = storage.get(_table(), {"userId": user_id}, consistent=consistent)
    return record(item) if item is not None else None


def get_users(user_ids: Sequence[str]) -> dict[str, UserRecord]:
    """User records by id (BatchGetItem); unknown ids are absent from the result."""
    return {u["userId"]: record(u) for u in storage.batch_get(_table(), [{"userId": i} for i in user_ids])}


def read_part(user_ids: Sequence[str]) -> batch_reads.Part[UserRecord]:
    """The users ``user_ids`` (duplicates dropped) as one part of a shared BatchGetItem, by ``userId``."""
    return batch_reads.Part(_table(), [{"userId": i} for i in dict.fromkeys(user_ids)], _user_id, record)


def _user_id(item: Mapping[str, Any]) -> str:
    return str(item["userId"])


def admits_profile_request_op(user_id: str, requester_level: int, channel: str) -> TransactItem:
    """Transaction ``ConditionCheck`` on the requested user of a profile request.

    Holds when the user exists, is neither being erased nor suspended, accepts requests, requires at most
    ``requester_level`` and still has ``channel`` connected (missing policy attributes mean the
    defaults: accepting, level 0): what the request service checked on its read, re-checked at commit.
    """
    return storage.tx_check(
        _table(),
        {"userId": user_id},
        "attribute_exists(userId) AND attribute_not_exists(erasure) AND attribute_not_exists(suspendedAt)"
        " AND (attribute_not_exists(#rp.acceptingRequests) OR #rp.acceptingRequests = :yes)"
        " AND (attribute_not_exists(#rp.minVerifiedLevel) OR #rp.minVerifiedLevel <= :level)"
        " AND attribute_exists(#chs.#ch)",
        ExpressionAttributeNames={"#rp": "requestPolicy", "#chs": "channels", "#ch": channel},
        ExpressionAttributeValues=storage.values(yes=True, level=requester_level),
    )


def put_user_op(user: UserRecord) -> TransactItem:
    """A transaction ``Put`` creating ``user``; fails if the id exists."""
    return storage.tx_put(_table(), user, condition="attribute_not_exists(userId)")


def set_channel(user_id: str, key: str, handle: str, connected_at: str) -> UserRecord | None:
    """Connect channel ``key`` (replacing its handle); the new user record, or ``None`` when the user is gone."""
    try:
        return record(storage.update(
            _table(), {"userId": user_id},
            f"SET channels.#k = :c, updatedAt = :u, {_BUMP}",
            condition="attribute_exists(userId)",
            ExpressionAttributeNames={"#k": key},
            ExpressionAttributeValues={
                **storage.values(c={"handle": handle, "connectedAt": connected_at}, u=connected_at), **_BUMP_VALUES
            },
        ))
    except storage.ConditionFailed:
        return None


def remove_channel(user_id: str, key: str, updated_at: str) -> bool:
    """Disconnect channel ``key``; return False when it was not connected."""
    try:
        storage.update(
            _table(), {"userId": user_id},
            f"REMOVE channels.#k SET updatedAt = :u, {_BUMP}",
            condition="attribute_exists(channels.#k)",
            ExpressionAttributeNames={"#k": key},
            ExpressionAttributeValues={**storage.values(u=updated_at), **_BUMP_VALUES},
        )
    except storage.ConditionFailed:
        return False
    return True


def iter_shard(shard: str) -> Iterator[UserRecord]:
    """Every user of one ``searchShard``, page after page of the ``bySearchShard`` index (Query,
    1 MB pages; for operator commands such as ``scripts/admin_users_backfill.py``, never a request)."""
    for item in storage.query_pages(_table(), IndexName="bySearchShard", KeyConditionExpression="searchShard = :s",
                                    ExpressionAttributeValues=storage.values(s=shard)):
        yield record(item)


def set_admin_list_attributes(user: UserRecord, listed: Mapping[str, str]) -> bool:
    """Write the administrators' list attributes ``listed`` (:func:`admin_list_attributes`) onto
    ``user``, removing ``adminCountryLevel`` when ``listed`` has none; conditional on the display
    name, level and country read (a change in between wrote them itself). ``version`` is left
    alone: the profile does not change. Returns False when the condition failed."""
    names = {"#dn": "displayName", "#lv": "verifiedLevel", "#c": "country"}
    vals: dict[str, Any] = {**storage.values(**listed), ":dn": storage.to_value(user["displayName"]),
                            ":lv": storage.to_value(int(user["verifiedLevel"]))}
    condition = "#dn = :dn AND #lv = :lv AND "
    if user.get("country"):
        condition += "#c = :c"
        vals[":c"] = storage.to_value(user["country"])
    else:
        condition += "attribute_not_exists(#c)"
    expression = "SET " + ", ".join(f"{name} = :{name}" for name in listed)
    if "adminCountryLevel" not in listed:
        expression += " REMOVE adminCountryLevel"
    try:
        storage.update(_table(), {"userId": user["userId"]}, expression, condition=condition,
                       ExpressionAttributeNames=names, ExpressionAttributeValues=vals)
    except storage.ConditionFailed:
        return False
    return True


def set_level_op(
    user_id: str, level: int, updated_at: str, expected_version: int, listed: Mapping[str, str]
) -> TransactItem:
    """Transaction ``Update`` setting ``verifiedLevel`` and the list attributes ``listed``
    (:func:`admin_list_attributes`; ``updatedAt``, ``version`` + 1).

    Conditional on the user existing at ``expected_version`` (0: a record from before versions,
    without the attribute).
    """
    condition = "attribute_exists(userId) AND (version = :expected" + (
        " OR attribute_not_exists(version))" if expected_version == 0 else ")"
    )
    vals: dict[str, Any] = {**storage.values(level=level, u=updated_at, **listed), **_BUMP_VALUES}
    vals[":expected"] = storage.to_value(expected_version)
    sets = "".join(f", {name} = :{name}" for name in listed)
    removes = "" if "adminCountryLevel" in listed else " REMOVE adminCountryLevel"
    return storage.tx_update(
        _table(), {"userId": user_id}, f"SET verifiedLevel = :level, updatedAt = :u, {_BUMP}{sets}{removes}",
        condition=condition, ExpressionAttributeValues=vals,
    )


def suspend_op(user_id: str, suspended_at: str, admin_id: str, webhook_ids: Sequence[str]) -> TransactItem:
    """Transaction ``Update`` marking the user suspended (``suspendedAt``, ``suspendedBy`` and the
    webhooks the suspension disables, ``suspendedWebhooks``; ``version`` + 1, so the profile index
    files the profile out); fails when the user is missing or suspended already."""
    return storage.tx_update(
        _table(), {"userId": user_id}, f"SET suspendedAt = :at, suspendedBy = :by, suspendedWebhooks = :hooks, {_BUMP}",
        condition="attribute_exists(userId) AND attribute_not_exists(suspendedAt)",
        ExpressionAttributeValues={**storage.values(at=suspended_at, by=admin_id, hooks=list(webhook_ids)), **_BUMP_VALUES},
    )


def not_suspended_op(user_id: str) -> TransactItem:
    """Transaction ``ConditionCheck`` that holds while the user exists and is not suspended (an
    approval of their listing: a suspended account publishes nothing)."""
    return storage.tx_check(_table(), {"userId": user_id}, "attribute_exists(userId) AND attribute_not_exists(suspendedAt)")


def reinstate_op(user_id: str) -> TransactItem:
    """Transaction ``Update`` lifting a suspension (``version`` + 1, so the profile index files the
    profile again); fails when the user is not suspended."""
    return storage.tx_update(
        _table(), {"userId": user_id}, f"SET {_BUMP} REMOVE suspendedAt, suspendedBy, suspendedWebhooks",
        condition="attribute_exists(suspendedAt)", ExpressionAttributeValues=_BUMP_VALUES,
    )


def erasure_op(user_id: str, step: str, requested_at: str, first: bool = False) -> TransactItem:
    """Transaction ``Update`` recording on the user item where their account erasure stands
    (``erasure``: ``{step, requestedAt}``), for the administrators' list.

    ``first``: the erasure starts now (the condition also fails when one runs already, so of two
    concurrent starts one commits); otherwise only the user item must still exist.
    """
    condition = "attribute_exists(userId)" + (" AND attribute_not_exists(erasure)" if first else "")
    return storage.tx_update(
        _table(), {"userId": user_id}, "SET erasure = :e", condition=condition,
        ExpressionAttributeValues=storage.values(e={"step": step, "requestedAt": requested_at}),
    )


def delete_user_op(user_id: str) -> TransactItem:
    """Transaction ``Delete`` of the user item (profile and channels; the account erasure's last
    step); conditional on an erasure running. The Users stream's REMOVE takes the profile out of
    profile search (:mod:`chalicelib.profiles.handlers`)."""
    return storage.tx_delete(_table(), {"userId": user_id}, condition="attribute_exists(erasure)")


class VersionMismatch(Exception):
    """The user exists but is not at the version a conditional write required."""


def patch_user(
    user_id: str, sets: dict[str, Any], removes: Sequence[str] = (), expected_version: int | None = None
) -> UserRecord | None:
    """Set and remove attributes by dotted path (``"recruiting.headline"``) in one UpdateItem.

    Nested paths merge into the existing maps (``socialLinks``, ``recruiting``,
    ``requestPolicy``) instead of replacing them; ``version`` is incremented. The write is
    conditional on a change: when every attribute of ``sets`` (but ``updatedAt``) already holds
    its value and every one of ``removes`` is absent, nothing is written, so the version and
    ``updatedAt`` stay and another client's ``If-Match`` still holds. Returns the item as stored
    after the call, or ``None`` when the user does not exist.

    Raises
    ------
    VersionMismatch
        ``expected_version`` is given and the stored version differs (nothing is written).
    """
    names: dict[str, str] = {}

    def path(dotted: str) -> str:
        parts = []
        for segment in dotted.split("."):
            placeholder = f"#p{len(names)}"
            names[placeholder] = segment
            parts.append(placeholder)
        return ".".join(parts)

    vals = {f":v{i}": storage.to_value(v) for i, v in enumerate(sets.values())}
    vals.update(_BUMP_VALUES)
    expression = "SET " + ", ".join([*(f"{path(p)} = :v{i}" for i, p in enumerate(sets)), _BUMP])
    if removes:
        expression += " REMOVE " + ", ".join(path(p) for p in removes)
    changes = [term for i, p in enumerate(sets) if p != "updatedAt"
               for term in (f"attribute_not_exists({path(p)})", f"{path(p)} <> :v{i}")]
    changes += [f"attribute_exists({path(p)})" for p in removes]
    if not changes:  # nothing asked but the time: nothing to write
        return _unchanged(user_id, expected_version)
    # One pair of parentheses, only around several terms (DynamoDB refuses redundant ones).
    condition = "attribute_exists(userId) AND " + (f"({' OR '.join(changes)})" if len(changes) > 1 else changes[0])
    if expected_version is not None:
        # Records from before versions existed are version 0 and have no attribute.
        condition += " AND (version = :expected" + (" OR attribute_not_exists(version))" if expected_version == 0 else ")")
        vals[":expected"] = storage.to_value(expected_version)
    try:
        return record(storage.update(
            _table(), {"userId": user_id}, expression, condition=condition,
            ExpressionAttributeNames=names, ExpressionAttributeValues=vals,
        ))
    except storage.ConditionFailed:
        return _unchanged(user_id, expected_version)


def _unchanged(user_id: str, expected_version: int | None) -> UserRecord | None:
    """The user as stored when :func:`patch_user` wrote nothing: ``None`` when gone.

    Raises
    ------
    VersionMismatch
        ``expected_version`` is given and the stored version differs.
    """
    current = get_user(user_id, consistent=True)
    if current is not None and expected_version is not None and version_of(current) != expected_version:
        raise VersionMismatch(user_id)
    return current
