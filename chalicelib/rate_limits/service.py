"""Admitting requests and counting writes: the per-key bucket and the per-user daily quotas.

* :func:`admit`: the HTTP edge and the Dashboard call it once per authenticated request (an API
  key or a Dashboard session); it takes one token from the **user's** bucket, which all of the
  user's keys and sessions share (:data:`KEY_POLICY`: ``RATE_LIMIT_PER_SECOND`` /
  ``RATE_LIMIT_BURST``, ``ADMIN_RATE_LIMIT_*`` for callers with the admin scope), or raises 429
  ``RATE_LIMITED``. Ten keys get what one key gets, not ten times that.
* :func:`admit_sign_in`: each Dashboard sign-in attempt takes a token from the bucket of its source
  address and from the bucket of the key prefix it tried (``SIGN_IN_*``), so neither one address
  guessing many keys nor many addresses guessing one key get far.
* :func:`count` / :func:`quota_exceeded`: a service that creates a match request, a
  profile request or a message adds the quota counter to its transaction under
  :data:`TRANSACTION_ITEM`; when that item's condition fails it raises :func:`quota_exceeded`.
* :func:`refused`: every refusal, bucket or quota, is built here and nowhere else.

With ``RATE_LIMITS_ENABLED=false`` (test suites and benchmarks only; a deployed function refuses
it) :func:`admit` and :func:`count` do nothing.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from aws_lambda_powertools import Logger
from cachetools import LRUCache

from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import Transaction
from chalicelib.rate_limits import context, gcra, repository
from chalicelib.rate_limits.header_fields import LIMIT_FIELD, POLICY_FIELD, limit_item, policy_item
from chalicelib.telemetry import metrics

logger = Logger(service="matching-service", child=True)

#: Name of the request bucket's policy in the ``RateLimit-Policy`` and ``RateLimit`` fields. The
#: bucket is the user's (all keys and sessions); the name is kept from when it was each key's, so
#: clients that look the policy up by name keep working.
KEY_POLICY = "per-key"
#: Names of the sign-in buckets' policies: per source address, per key prefix tried.
SIGN_IN_SOURCE_POLICY = "sign-in-source"
SIGN_IN_KEY_POLICY = "sign-in-key"
#: Name under which a counted write's transaction holds the quota counter.
TRANSACTION_ITEM = "quota"
#: Seconds a quota's window lasts (one UTC day) and a counter item outlives its day (TTL).
DAY_SECONDS = 86_400
#: Seconds an idle user's bucket item stays after it is full again (then DynamoDB's TTL may delete it).
BUCKET_IDLE_SECONDS = 86_400
#: Conditional writes one admission may try. Each failure returns the stored TAT, so the second
#: try takes the right branch; a third is needed only if another request changed the bucket between.
BUCKET_ATTEMPTS = 3

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Quota(StrEnum):
    """The writes counted per user and UTC day (the value names the policy in the fields)."""

    MATCH_REQUESTS = "match-requests"
    PROFILE_REQUESTS = "profile-requests"
    MESSAGES = "messages"

    @property
    def label(self) -> str:
        """The words of an error message (``match requests``)."""
        return self.value.replace("-", " ")

    @property
    def limit(self) -> int:
        """Writes of this kind a user may make per UTC day (``MATCH_REQUESTS_PER_DAY``, ...)."""
        config = settings()
        return {
            Quota.MATCH_REQUESTS: config.MATCH_REQUESTS_PER_DAY,
            Quota.PROFILE_REQUESTS: config.PROFILE_REQUESTS_PER_DAY,
            Quota.MESSAGES: config.MESSAGES_PER_DAY,
        }[self]


@dataclass(frozen=True)
class Admission:
    """An admitted request: its key's policy and what is left of the bucket.

    Attributes
    ----------
    policy:
        The bucket's limits (user or admin limits).
    remaining:
        Requests the bucket still admits right now (0..burst).
    full_in_seconds:
        Whole seconds until the bucket is full again.
    name:
        The policy's name in the fields (:data:`KEY_POLICY`).
    """

    policy: gcra.Policy
    remaining: int
    full_in_seconds: int
    name: str = KEY_POLICY

    def headers(self) -> dict[str, str]:
        """``RateLimit-Policy: "per-key";q=<burst>;w=<seconds to fill>`` and ``RateLimit: "per-key";r=..;t=..``."""
        return {
            POLICY_FIELD: policy_item(self.name, self.policy.burst, self.policy.window_seconds),
            LIMIT_FIELD: limit_item(self.name, self.remaining, self.full_in_seconds),
        }


def key_policy(admin: bool) -> gcra.Policy:
    """The request bucket's limits: the administrators' when ``admin``, else the users'."""
    config = settings()
    if admin:
        return gcra.Policy(config.ADMIN_RATE_LIMIT_PER_SECOND, config.ADMIN_RATE_LIMIT_BURST)
    return gcra.Policy(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST)


#: The last TAT this process wrote or saw per bucket. Only a hint of which conditional write to try
#: first (the bucket is full: restart; else: advance); the conditions decide, so a stale hint
#: costs one failed write, never a wrong answer.
_hints: LRUCache[str, int] = LRUCache(maxsize=10_000)
_hints_lock = threading.Lock()


def _hint(key_id: str) -> int | None:
    with _hints_lock:
        return _hints.get(key_id)


def _remember(key_id: str, tat_us: int) -> None:
    with _hints_lock:
        _hints[key_id] = tat_us


def clear_hints() -> None:
    """Forget the per-process hints (tests)."""
    with _hints_lock:
        _hints.clear()


def now_us() -> int:
    """The current time (:func:`chalicelib.kernel.clock.now`) in integer microseconds since the epoch."""
    return (clock.now() - _EPOCH) // timedelta(microseconds=1)


def user_bucket(user_id: str) -> str:
    """The name of the request bucket of ``user_id``, shared by all the user's keys and sessions."""
    return f"user#{user_id}"


def admit(user_id: str, admin: bool) -> Admission | None:
    """Take one token from the request bucket of ``user_id`` (:func:`user_bucket`), or refuse the request.

    One conditional UpdateItem when the per-process hint guesses the bucket's state right (the
    usual case), two when it does not; never a read (:mod:`chalicelib.rate_limits.repository`).
    A refused request takes no token, so a client retrying too early does not push its own
    ``Retry-After`` further out.

    Parameters
    ----------
    user_id:
        The caller's user id (``Caller.user_id``), whichever key or Dashboard session it came with.
    admin:
        The caller has the admin scope (its own, higher limits).

    Returns
    -------
    Admission or None
        The policy and the bucket's state after this request; also recorded for the response's
        ``RateLimit`` fields (:mod:`chalicelib.rate_limits.context`). ``None`` when the rate
        limits are off (``RATE_LIMITS_ENABLED=false``).

    Raises
    ------
    RateLimited
        The bucket is empty: 429 with ``Retry-After`` (seconds until one token is back, >= 1),
        ``RateLimit-Policy`` and ``RateLimit`` (``r=0``).
    DependencyUnavailable
        DynamoDB did not answer (503, as any other request's storage call).
    """
    if not settings().RATE_LIMITS_ENABLED:
        return None
    policy = key_policy(admin)
    admission = _take(
        user_bucket(user_id), policy, KEY_POLICY,
        f"Too many requests from this user (all its API keys and Dashboard sessions together): at most "
        f"{policy.burst} at once and {policy.rate:g} per second",
    )
    context.remember(admission)
    return admission


def sign_in_policies() -> tuple[gcra.Policy, gcra.Policy]:
    """The sign-in buckets' limits: per source address, per key prefix (``SIGN_IN_*`` settings)."""
    config = settings()
    return (
        gcra.Policy(config.SIGN_IN_PER_SOURCE_PER_MINUTE / 60, config.SIGN_IN_PER_SOURCE_BURST),
        gcra.Policy(config.SIGN_IN_PER_KEY_PREFIX_PER_MINUTE / 60, config.SIGN_IN_PER_KEY_PREFIX_BURST),
    )


def admit_sign_in(source: str, key_prefix: str) -> None:
    """Take one token from the sign-in bucket of ``source`` and one from that of ``key_prefix``.

    Parameters
    ----------
    source:
        The client's address (API Gateway's ``sourceIp``).
    key_prefix:
        The first characters of the key tried (:func:`chalicelib.auth.keys.key_prefix`): guesses
        at one key from many addresses share it.

    Raises
    ------
    RateLimited
        Either bucket is empty (429, ``Retry-After``; the source's bucket is asked first, and a
        refusal there takes nothing from the other).
    DependencyUnavailable
        DynamoDB did not answer.
    """
    if not settings().RATE_LIMITS_ENABLED:
        return
    per_source, per_prefix = sign_in_policies()
    _take(f"signin-source#{source}", per_source, SIGN_IN_SOURCE_POLICY, "Too many sign-in attempts from this address")
    _take(f"signin-key#{key_prefix}", per_prefix, SIGN_IN_KEY_POLICY, "Too many sign-in attempts with this key")


def _take(bucket: str, policy: gcra.Policy, name: str, refusal: str) -> Admission:
    """Take one token from ``bucket`` under ``policy`` (GCRA), or raise the 429 of ``name`` with ``refusal``."""
    now = now_us()
    ceiling = gcra.ceiling_us(policy, now)
    hint = _hint(bucket)
    full = hint is None or hint <= now
    for _ in range(BUCKET_ATTEMPTS):
        try:
            if full:
                tat = repository.restart(bucket, policy.interval_us, now, _bucket_expiry(now + policy.interval_us))
            else:
                tat = repository.advance(bucket, policy.interval_us, now, ceiling, _bucket_expiry(ceiling))
        except repository.Stale as stale:
            if stale.tat is not None:
                _remember(bucket, stale.tat)
            if stale.tat is not None and not gcra.admits(policy, stale.tat, now):  # a missing bucket is full
                wait = gcra.retry_after_seconds(policy, stale.tat, now)
                raise refused(name, policy.burst, policy.window_seconds, wait, f"{refusal}; retry after {wait} s") from stale
            full = stale.tat is None or stale.tat <= now
            continue
        _remember(bucket, tat)
        return Admission(policy, gcra.remaining(policy, tat, now), gcra.full_in_seconds(tat, now), name)
    # Only clocks of concurrent processes that disagree by more than T can get here: let the
    # request through rather than refuse it for our own contention (the limit is a guard, not a bill).
    logger.warning("rate limit bucket kept changing; request admitted", extra={"attempts": BUCKET_ATTEMPTS})
    return Admission(policy, 0, gcra.full_in_seconds(ceiling, now), name)


def _bucket_expiry(tat_us: int) -> int:
    return tat_us // gcra.SECOND_US + BUCKET_IDLE_SECONDS


def refused(policy_name: str, quota: int, window_seconds: int, retry_after: int, message: str) -> errors.RateLimited:
    """The 429 ``RATE_LIMITED`` of a refusal; every refusal, by the bucket or a daily quota, is built here.

    Parameters
    ----------
    policy_name:
        :data:`KEY_POLICY` or a :class:`Quota` value (the fields' policy name).
    quota, window_seconds:
        The policy: ``quota`` requests per ``window_seconds`` (``RateLimit-Policy``).
    retry_after:
        Whole seconds until the refused request would pass (``Retry-After`` and ``RateLimit``'s ``t``).
    message:
        The error body's ``error``.

    Returns
    -------
    RateLimited
        To raise; carries ``Retry-After``, ``RateLimit-Policy`` and ``RateLimit: "<name>";r=0;t=<retry_after>``.
    """
    metrics.record_rate_limited()  # the one place a refusal happens (docs/operations.md)
    return errors.RateLimited(
        message, retry_after,
        {POLICY_FIELD: policy_item(policy_name, quota, window_seconds), LIMIT_FIELD: limit_item(policy_name, 0, retry_after)},
    )


def _today() -> tuple[str, datetime]:
    """Today's UTC date (``YYYY-MM-DD``) and the start of the next UTC day."""
    now = clock.now().astimezone(UTC)
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return start.date().isoformat(), start + timedelta(days=1)


def count_op(user_id: str, quota: Quota) -> TransactItem:
    """The transaction item counting one write of ``quota`` by ``user_id`` today.

    Its condition fails when the user has made ``quota.limit`` such writes this UTC day. The
    counter item expires (TTL) a day after its day.
    """
    day, tomorrow = _today()
    expires = int(tomorrow.timestamp()) + DAY_SECONDS
    return repository.count_op(user_id, quota.value, day, quota.limit, expires)


def count(tx: Transaction, user_id: str, quota: Quota) -> None:
    """Add :func:`count_op` to ``tx`` as :data:`TRANSACTION_ITEM` (nothing when the rate limits are off).

    When the transaction is cancelled with ``exc.failed(TRANSACTION_ITEM)``, the service raises
    :func:`quota_exceeded`: the write and its count commit together or not at all.

    Raises
    ------
    ValueError
        ``tx`` holds an item of that name already, or is full (:meth:`Transaction.add`).
    """
    if settings().RATE_LIMITS_ENABLED:
        tx.add(TRANSACTION_ITEM, count_op(user_id, quota))


def quota_exceeded(quota: Quota) -> errors.RateLimited:
    """The 429 of a write refused by its daily quota: ``Retry-After`` is the seconds until 00:00 UTC."""
    _, tomorrow = _today()
    wait = max(1, math.ceil((tomorrow - clock.now()).total_seconds()))
    limit = quota.limit
    return refused(
        quota.value, limit, DAY_SECONDS, wait,
        f"Daily quota of {limit} {quota.label} reached; it resets at 00:00 UTC (retry after {wait} s)",
    )
