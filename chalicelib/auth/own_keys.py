"""A user's own API keys: list, create, revoke and roll (Stripe's "Roll key").

* Keys are stored as their SHA-256 only (:mod:`chalicelib.auth.keys`); a new key's secret is
  returned once, to be shown once.
* A key is named to its owner by its ``keyId``: 16 random hex characters drawn when the key is
  made (:func:`chalicelib.auth.keys.new_key_id`), independent of the key and its hash, so a
  listed, exported or audited id lets nobody check a guessed key offline. A key made before
  keys had ids gets one, once, the first time its owner's keys are listed (:func:`list_keys`).
* Revoke deletes the key's item and evicts it from this process's key cache: the next request
  with it is refused (401) here; another warm process may accept it until its cache entry ends
  (``AUTH_CACHE_TTL_SECONDS``, docs/decisions.md "Keys and users").
* Roll creates a new key with the old one's scopes and gives the old one an expiry (``now`` deletes
  it, as revoke does) in one transaction; the expiry is checked on every request, cached or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from chalicelib.audit import api as audit
from chalicelib.audit.records import AuditAction
from chalicelib.auth import keys, repository, service
from chalicelib.auth.records import ApiKeyRecord
from chalicelib.auth.service import Caller
from chalicelib.kernel import clock, errors
from chalicelib.kernel.text import text_issue
from chalicelib.persistence.transactions import Transaction, TransactionConflict

#: The old key's remaining life a roll may choose, label -> seconds (Stripe offers now .. 7 days).
ROLL_EXPIRIES: dict[str, int] = {"now": 0, "1h": 3600, "24h": 24 * 3600, "7d": 7 * 24 * 3600}
#: Keys a user may hold at once: a counter item (``keys#<userId>``) changed in the very transaction
#: that creates or deletes a key, with the condition ``keyCount < MAX_KEYS`` (never a read before
#: the write, so concurrent creations cannot pass it together). A roll replaces a key: it counts as
#: one key while the old one runs out.
MAX_KEYS = 20
#: Longest key name, in characters.
MAX_NAME = 100


@dataclass(frozen=True)
class OwnKey:
    """One of the user's keys as listed (never its secret)."""

    #: The key's public id (``keyId`` of its record: random, never derived from the key).
    key_id: str
    #: ``name``, ``prefix``: The owner's label and the key's first characters (empty for keys made by an administrator).
    name: str
    prefix: str
    #: ``created_at``, ``last_used_at``: ISO 8601 UTC (``last_used_at`` ``None`` when never used, to
    #: :data:`service.LAST_USED_SECONDS`).
    created_at: str
    last_used_at: str | None
    #: ISO 8601 UTC when a roll gave the key an end, else ``None``.
    expires_at: str | None
    #: Whether this is the key the listing was asked with (a Dashboard session's key).
    current: bool = False


@dataclass(frozen=True)
class NewKey:
    """A key just made: ``secret`` is the only copy of the key (show it once); ``replaced_hash`` is
    the SHA-256 of the key a roll replaced ("" for a created key)."""

    key: OwnKey
    secret: str
    replaced_hash: str = ""


def _own(record: ApiKeyRecord, current_hash: str = "") -> OwnKey:
    expires = record.get("expiresAt")
    return OwnKey(
        key_id=record["keyId"], name=record.get("name") or "", prefix=record.get("prefix") or "",
        created_at=record["createdAt"], last_used_at=record.get("lastUsedAt"),
        expires_at=None if expires is None else clock.iso(datetime.fromtimestamp(int(expires), UTC)),
        current=bool(current_hash) and record["keyHash"] == current_hash,
    )


def _unexpired(records: list[ApiKeyRecord]) -> list[ApiKeyRecord]:
    moment = clock.epoch_seconds()
    return [r for r in records if r.get("expiresAt") is None or int(r["expiresAt"]) > moment]


def _with_id(record: ApiKeyRecord) -> ApiKeyRecord | None:
    """``record`` with its ``keyId``: a key made before keys had ids is given one now (``None``: it is gone)."""
    if "keyId" in record:
        return record
    return repository.assign_key_id(record["keyHash"], record["userId"], keys.new_key_id())


def _live(user_id: str) -> list[ApiKeyRecord]:
    records = (_with_id(r) for r in _unexpired(repository.list_keys(user_id)))
    return [r for r in records if r is not None]


def list_keys(caller: Caller, current_hash: str = "") -> list[OwnKey]:
    """The caller's keys that still authenticate, oldest first (one Query).

    Parameters
    ----------
    caller:
        The user whose keys are listed.
    current_hash:
        The SHA-256 of the key the caller is using (a Dashboard session's key): that key is
        marked ``current``; ``""`` marks none.
    """
    return [_own(r, current_hash) for r in _live(caller.user_id)]


def _own_key(caller: Caller, wanted: str) -> ApiKeyRecord:
    for record in _live(caller.user_id):
        if record["keyId"] == wanted:
            return record
    raise errors.NotFound(f"API key '{wanted}' not found")


def _clean_name(name: str) -> str:
    """``name`` with its white space folded to single spaces, held to the text policy of a
    single-line field (:func:`chalicelib.kernel.text.text_issue`: no controls, no bidi or other
    format characters) and to 1..:data:`MAX_NAME` characters."""
    cleaned = " ".join(name.split())
    if not cleaned or len(cleaned) > MAX_NAME:
        raise errors.RuleViolation.for_field("name", f"Enter a name of 1 to {MAX_NAME} characters")
    if issue := text_issue(cleaned):
        raise errors.RuleViolation.for_field("name", issue, f"The name {issue}")
    return cleaned


def _new_record(user_id: str, scopes: list[str], name: str) -> tuple[ApiKeyRecord, str]:
    secret = keys.new_api_key()
    return keys.key_record(user_id, secret, scopes, clock.iso(), name), secret


def create_key(caller: Caller, name: str) -> NewKey:
    """Create a key for the caller with the caller's scopes (an admin key's audit entry,
    ``admin_key.create``, in the same transaction).

    Parameters
    ----------
    caller:
        The signed-in user (a Dashboard session carries the scopes of the key it signed in with).
    name:
        1..:data:`MAX_NAME` characters (whitespace runs folded).

    Raises
    ------
    RuleViolation
        A blank or too long name (``details`` name ``name``), or :data:`MAX_KEYS` keys held already.
    """
    cleaned = _clean_name(name)
    record, secret = _new_record(caller.user_id, sorted(caller.scopes), cleaned)
    tx = Transaction().add("key", repository.put_key_op(record)).add("count", repository.count_key_op(caller.user_id, MAX_KEYS))
    _audit_admin_key(tx, record, "key.create")
    try:
        tx.commit()
    except TransactionConflict as exc:
        if exc.failed("count"):
            raise errors.RuleViolation.for_field("name", f"You hold {MAX_KEYS} keys already; revoke one first") from exc
        raise
    return NewKey(_own(record), secret)


def _audit_admin_key(tx: Transaction, record: ApiKeyRecord, via: str) -> None:
    """Add the ``admin_key.create`` audit entry to ``tx`` when ``record`` holds the admin scope
    (an administrator's own new key is an administrator action too)."""
    if service.ADMIN_SCOPE in record["scopes"]:
        tx.add("audit", audit.entry_op(record["userId"], AuditAction.ADMIN_KEY_CREATE, record["userId"],
                                       {"keyId": record["keyId"], "via": via}))


def revoke_key(caller: Caller, wanted: str) -> OwnKey:
    """Delete the caller's key ``wanted`` (its ``keyId``); it is refused from the next request on.

    Raises
    ------
    NotFound
        The caller holds no live key with that id (another user's key is not found either).
    """
    record = _own_key(caller, wanted)
    try:
        tx = Transaction().add("key", repository.delete_key_op(record["keyHash"], caller.user_id))
        if record.get("expiresAt") is None:  # a rolled-out key (it has an end) was never counted beside its successor
            tx.add("count", repository.uncount_key_op(caller.user_id))
        predecessor = _running_out(record)
        if predecessor is not None:  # the key it replaced ends with it: it holds no count of its own
            tx.add("predecessor", repository.end_key_op(predecessor, caller.user_id))
        tx.commit()
    except TransactionConflict as exc:
        raise errors.NotFound(f"API key '{wanted}' not found") from exc
    _evict(record["keyHash"], predecessor)
    return _own(record)


def _evict(*key_hashes: str | None) -> None:
    """Drop the changed keys (``None``: no such key) from this process's key cache."""
    for key_hash in key_hashes:
        if key_hash is not None:
            service.evict(key_hash)


def _running_out(record: ApiKeyRecord) -> str | None:
    """The hash of the key ``record`` replaced by a roll, while that key still authenticates."""
    replaced = record.get("replaces")
    return replaced if replaced is not None and int(record.get("replacesUntil", 0)) > clock.epoch_seconds() else None


def roll_key(caller: Caller, wanted: str, old_expires: str) -> NewKey:
    """Replace the caller's key ``wanted`` by a new one with its name and scopes; the old key stops
    authenticating after ``old_expires`` (a :data:`ROLL_EXPIRIES` label; ``now`` deletes it).

    The new key's write and the old key's expiry (or deletion) are one transaction (with the
    ``admin_key.create`` audit entry when the key has the admin scope).

    Raises
    ------
    RuleViolation
        ``old_expires`` is not a :data:`ROLL_EXPIRIES` label (``details`` name ``expires``).
    NotFound
        No live key ``wanted`` of the caller.
    Conflict
        The key changed meanwhile (revoked or rolled by another request).
    """
    if old_expires not in ROLL_EXPIRIES:
        raise errors.RuleViolation.for_field("expires", f"Choose one of {', '.join(ROLL_EXPIRIES)}")
    old = _own_key(caller, wanted)
    if old.get("expiresAt") is not None:  # uncounted: a key of its own would pass MAX_KEYS
        raise errors.Conflict("This key is running out after a roll; roll the key that replaced it, or revoke this one")
    record, secret = _new_record(caller.user_id, list(old["scopes"]), old.get("name", ""))  # an unnamed key stays unnamed
    seconds = ROLL_EXPIRIES[old_expires]
    tx = Transaction()
    if seconds == 0:
        tx.add("old", repository.delete_key_op(old["keyHash"], caller.user_id))
    else:
        ends = clock.epoch_seconds(clock.now() + timedelta(seconds=seconds))
        tx.add("old", repository.expire_key_op(old["keyHash"], caller.user_id, ends))
        record = {**record, "replaces": old["keyHash"], "replacesUntil": ends}
    tx.add("key", repository.put_key_op(record))  # the count stays: the new key replaces the old
    _audit_admin_key(tx, record, "key.roll")
    predecessor = _running_out(old)
    if predecessor is not None:  # one key runs out beside a counted one: the one before ends now
        tx.add("predecessor", repository.end_key_op(predecessor, caller.user_id))
    try:
        tx.commit()
    except TransactionConflict as exc:
        raise errors.Conflict("The key changed meanwhile; reload the page") from exc
    _evict(old["keyHash"], predecessor)
    return NewKey(_own(record), secret, old["keyHash"])
