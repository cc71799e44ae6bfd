"""Authentication: ``Authorization: Bearer <key>`` to a :class:`Caller`.

A per-process TTL cache (cachetools) keeps the DynamoDB reads per request at zero for a warm
key; the cost is that a revoked key keeps working for up to ``AUTH_CACHE_TTL_SECONDS``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from cachetools import TTLCache

from chalicelib import errors
from chalicelib.auth import keys, repository
from chalicelib.config import settings

ADMIN_SCOPE = "admin"


@dataclass(frozen=True)
class Caller:
    """The authenticated principal of a request.

    Attributes
    ----------
    user_id:
        Id of the user the key belongs to.
    scopes:
        The key's scopes; ``"admin"`` grants the admin routes.
    key_id:
        The key's SHA-256 (hex), naming its rate-limit bucket; empty for a Dashboard session.
    """

    user_id: str
    scopes: frozenset[str] = frozenset()
    key_id: str = ""

    @property
    def is_admin(self) -> bool:
        """True when the key carries the admin scope."""
        return ADMIN_SCOPE in self.scopes


_cache: TTLCache[str, Caller] | None = None
_cache_lock = threading.Lock()


def _key_cache() -> TTLCache[str, Caller]:
    global _cache
    if _cache is None:
        _cache = TTLCache(maxsize=10_000, ttl=max(settings().AUTH_CACHE_TTL_SECONDS, 0.001))
    return _cache


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
    UnauthorizedError
        Missing header, wrong scheme, or unknown key.
    ForbiddenError
        ``require_admin`` and the key lacks the admin scope.
    """
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise errors.UnauthorizedError("Missing or malformed Authorization header; expected 'Bearer <API key>'")
    key_hash = keys.hash_key(token)
    with _cache_lock:
        caller = _key_cache().get(key_hash)
    if caller is None:
        record = repository.get_key(key_hash)
        if record is None:
            raise errors.UnauthorizedError("Invalid API key")
        caller = Caller(user_id=record["userId"], scopes=frozenset(record["scopes"]), key_id=key_hash)
        with _cache_lock:
            _key_cache()[key_hash] = caller
    if require_admin and not caller.is_admin:
        raise errors.ForbiddenError("This operation requires an administrator key")
    return caller
