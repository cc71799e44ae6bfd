"""Authentication: ``Authorization: Bearer <key>`` to a :class:`Caller`.

A per-process TTL cache (cachetools) keeps the DynamoDB reads per request at zero for a warm
key. Revocation (:mod:`chalicelib.auth.own_keys`) evicts the key from the cache of the process
that revoked it, so the next request there is refused; another warm process may keep accepting
it for up to ``AUTH_CACHE_TTL_SECONDS`` (docs/decisions.md "Keys and users"). A key's expiry
(``expiresAt``, set by a roll) is kept in the cache entry and checked on every hit, so an
expired key is refused at once everywhere.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from chalicelib.auth import keys, repository
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import MAX_ITEMS, Transaction, TransactionConflict

if TYPE_CHECKING:
    from cachetools import TTLCache

ADMIN_SCOPE = "admin"
#: ``lastUsedAt`` is written when the stored one is older than this (seconds): at most one write
#: per key and process per interval, not one per request (the "last used" column's granularity).
LAST_USED_SECONDS = 300


@dataclass(frozen=True)
class Caller:
    """The authenticated principal of a request."""

    #: Id of the user the key belongs to.
    user_id: str
    #: The key's scopes; ``"admin"`` grants the admin routes.
    scopes: frozenset[str] = frozenset()
    #: The key's SHA-256 (hex), naming its rate-limit bucket; empty for a Dashboard session.
    key_id: str = ""
    #: Unix seconds after which the key stops authenticating (a rolled key); ``None``: no expiry.
    expires_at: int | None = None
    #: ISO 8601 UTC before which Dashboard sessions opened with the key are ended (its user's last
    #: suspension); ``None``: never suspended.
    sessions_from: str | None = None

    @property
    def is_admin(self) -> bool:
        """True when the key carries the admin scope."""
        return ADMIN_SCOPE in self.scopes


_cache: TTLCache[str, Caller] | None = None
_cache_lock = threading.Lock()


def _key_cache() -> TTLCache[str, Caller]:
    global _cache
    if _cache is None:
        from cachetools import TTLCache  # with the first authenticated request, not at cold start

        _cache = TTLCache(maxsize=10_000, ttl=max(settings().AUTH_CACHE_TTL_SECONDS, 0.001))
    return _cache


def evict(key_hash: str) -> None:
    """Forget the cached result of one key (after revoking or rolling it in this process)."""
    with _cache_lock:
        _key_cache().pop(key_hash, None)


def clear_cache() -> None:
    """Forget every cached key (tests; after revoking keys in-process)."""
    global _cache
    with _cache_lock:
        _cache = None


def authenticate(authorization: str | None, require_admin: bool = False) -> Caller:
    """Resolve an ``Authorization`` header value to its :class:`Caller`.

    Parameters
    ----------
    authorization:
        The raw header value, ``"Bearer <key>"`` (scheme case-insensitive, RFC 6750 §2.1).
    require_admin:
        Demand the admin scope.

    Raises
    ------
    Unauthorized
        Missing header, wrong scheme, unknown (revoked) or expired key.
    Forbidden
        ``require_admin`` and the key lacks the admin scope.
    """
    token = bearer_token(authorization)
    if not token:
        raise errors.Unauthorized("Missing or malformed Authorization header; expected 'Bearer <API key>'")
    caller = _cached_caller(keys.hash_key(token), note_use=True)
    if caller is None:
        raise errors.Unauthorized("Invalid API key")
    if caller.expires_at is not None and caller.expires_at <= clock.epoch_seconds():
        raise errors.Unauthorized("This API key has expired (it was rolled)")
    if require_admin and not caller.is_admin:
        raise errors.Forbidden("This operation requires an administrator key")
    return caller


def bearer_token(authorization: str | None) -> str:
    """The API key of an ``Authorization: Bearer <key>`` header value (scheme case-insensitive,
    RFC 6750 §2.1); empty when the header is missing or has another form."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def key_alive(key_hash: str, opened_at: str) -> bool:
    """Whether a Dashboard session opened at ``opened_at`` (ISO 8601 UTC) with the key of SHA-256
    ``key_hash`` lives on: the key still authenticates (exists, not expired, not suspended),
    through the same per-process cache as :func:`authenticate` (a revoke evicts it in its
    process), and the session was opened after its user's last suspension (strictly).

    A Dashboard session asks this on every request, so revoking or rolling ("now") the key a
    session was opened with ends the session too, and a suspension ends it for good: a
    reinstatement gives the key back to the API, not to the browsers signed in before.
    """
    caller = _cached_caller(key_hash, note_use=False)
    if caller is None or (caller.sessions_from is not None and opened_at <= caller.sessions_from):
        return False
    return caller.expires_at is None or caller.expires_at > clock.epoch_seconds()


def _cached_caller(key_hash: str, note_use: bool) -> Caller | None:
    """The cached :class:`Caller` of ``key_hash``, else read (and cached); ``None`` for no such key.

    ``note_use``: on a read, also record the use (:func:`_note_use`; API calls, not session checks).
    """
    with _cache_lock:
        caller = _key_cache().get(key_hash)
    if caller is not None:
        return caller
    record = repository.get_key(key_hash)
    if record is None or record.get("suspended"):
        return None  # a suspended user's key answers as an unknown one
    expires_at = record.get("expiresAt")
    caller = Caller(user_id=record["userId"], scopes=frozenset(record["scopes"]), key_id=key_hash,
                    expires_at=None if expires_at is None else int(expires_at), sessions_from=record.get("sessionsFrom"))
    if note_use:
        _note_use(key_hash, record.get("lastUsedAt"))
    with _cache_lock:
        _key_cache()[key_hash] = caller
    return caller


def _note_use(key_hash: str, last_used_at: str | None) -> None:
    """Write ``lastUsedAt`` now unless the stored one is younger than :data:`LAST_USED_SECONDS`."""
    moment = clock.now()
    if last_used_at is not None and (moment - datetime.fromisoformat(last_used_at)).total_seconds() < LAST_USED_SECONDS:
        return
    repository.touch_key(key_hash, clock.iso(moment))


def suspend_user_keys(user_id: str, suspended: bool) -> int:
    """Suspend (or reinstate) every key of ``user_id`` in one transaction and evict them from this
    process's cache: a suspended key answers 401 as an unknown one, and a Dashboard session opened
    with it ends (:func:`key_alive`). Returns the number of keys changed."""
    records = repository.list_keys(user_id)
    if records:
        tx, now = Transaction(), clock.iso()
        for record in records:
            tx.add(record["keyHash"], repository.suspend_key_op(record["keyHash"], user_id, suspended, now))
        tx.commit()
    for record in records:
        evict(record["keyHash"])
    return len(records)


def delete_user_keys(user_id: str) -> int:
    """Delete every key of ``user_id`` and their counter (the account erasure), in transactions of
    at most 100 items, and evict them from this process's cache: each answers 401 as an unknown
    key from then on, and a Dashboard session opened with one ends (:func:`key_alive`). Another
    warm process may accept a key until its cache entry ends (``AUTH_CACHE_TTL_SECONDS``), as for
    a revoked key. Idempotent (a key deleted meanwhile by another call is read again and left
    out); returns the number of keys this call deleted.

    Raises
    ------
    Conflict
        Other calls kept deleting the same keys through :data:`_DELETE_ATTEMPTS` attempts.
    """
    deleted = 0
    for _ in range(_DELETE_ATTEMPTS):
        records = repository.list_keys(user_id)
        for record in records:
            evict(record["keyHash"])
        try:
            for start in range(0, len(records), MAX_ITEMS):
                tx = Transaction()
                for record in records[start:start + MAX_ITEMS]:
                    tx.add(record["keyHash"], repository.delete_key_op(record["keyHash"], user_id))
                tx.commit()
                deleted += len(records[start:start + MAX_ITEMS])
        except TransactionConflict:
            continue  # another call deleted some of them first: read what is left
        Transaction().add("count", repository.forget_key_count_op(user_id)).commit()
        return deleted
    raise errors.Contended("The keys kept changing while they were deleted; retry")


#: Attempts of :func:`delete_user_keys` when another call deletes the same keys at once.
_DELETE_ATTEMPTS = 3


def key_deletion_ops(user_id: str) -> tuple[list[TransactItem], list[str]]:
    """The transaction items that delete every key of ``user_id`` and their counter (one Query), for
    a transaction of the caller's, and the keys' hashes to :func:`evict` once it commits.

    A user holds at most ``chalicelib.auth.own_keys.MAX_KEYS`` keys, so the items fit one
    transaction beside a few others. Each key's delete is conditional on it still existing as the
    user's: a key deleted meanwhile makes the transaction fail (read again and retry).
    """
    records = repository.list_keys(user_id)
    ops = [repository.delete_key_op(r["keyHash"], user_id) for r in records]
    return [*ops, repository.forget_key_count_op(user_id)], [r["keyHash"] for r in records]
