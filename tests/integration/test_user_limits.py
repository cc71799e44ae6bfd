"""Limits per user, enforced atomically: all keys of a user share one request bucket, the 20-key cap
is a counter with a condition in the creating transaction, the Dashboard's pages are admitted by the
same bucket (429 with Retry-After), and sign-in attempts are limited per source and per key prefix."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.auth import own_keys
from chalicelib.auth.service import authenticate
from chalicelib.kernel import errors
from chalicelib.kernel.config import settings
from tests.clocks import FrozenClock
from tests.integration.conftest import Api, User
from tests.integration.helpers import table_items
from tests.integration.test_dashboard import Browser, signed_in


def _more_keys(user: User, count: int) -> list[str]:
    caller = authenticate(f"Bearer {user.key}")
    return [own_keys.create_key(caller, f"key {i}").secret for i in range(count)]


def test_ten_keys_of_one_user_share_one_bucket(
    api: Api, alice: User, bob: User, limits: Callable[..., None], frozen: FrozenClock
) -> None:
    limits(RATE_LIMIT_BURST="20", RATE_LIMIT_PER_SECOND="1")
    user_keys = [alice.key, *_more_keys(alice, 9)]
    answers = [api.call("GET", "/v1/me", user_keys[i % 10]) for i in range(30)]
    assert [a.status_code for a in answers] == [200] * 20 + [429] * 10  # 10 keys get what one key gets
    refused = answers[20]
    assert refused.headers["Retry-After"] == "1"
    assert refused.json["code"] == "RATE_LIMITED"
    assert answers[0].headers["RateLimit"] == '"per-key";r=19;t=1'  # every key's answer shows the shared bucket
    assert answers[1].headers["RateLimit"] == '"per-key";r=18;t=2'
    assert api.call("GET", "/v1/me", bob.key).status_code == 200  # another user has a bucket of its own
    frozen.advance(1)
    assert api.call("GET", "/v1/me", user_keys[7]).status_code == 200


def test_30_concurrent_key_creations_never_exceed_the_cap(api: Api, alice: User) -> None:
    caller = authenticate(f"Bearer {alice.key}")  # alice holds 1 key (made with her user)
    start = threading.Barrier(30)
    outcomes: list[str] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        start.wait()
        try:
            own_keys.create_key(caller, f"key {i}")
            result = "created"
        except errors.RuleViolation:
            result = "refused"
        except errors.Conflict:  # contention surfaced as the API's 409: nothing written
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    live = own_keys.list_keys(caller)
    assert len(outcomes) == 30
    assert len(live) <= own_keys.MAX_KEYS
    assert len(live) == 1 + outcomes.count("created")
    counter = [i for i in table_items(settings().API_KEYS_TABLE) if i["keyHash"] == f"keys#{alice.user_id}"]
    assert [int(c["keyCount"]) for c in counter] == [len(live)]


def test_the_cap_counts_revokes_and_rolls(api: Api, alice: User) -> None:
    caller = authenticate(f"Bearer {alice.key}")
    made = [own_keys.create_key(caller, f"key {i}") for i in range(own_keys.MAX_KEYS - 1)]
    with pytest.raises(errors.RuleViolation, match="20 keys already"):
        own_keys.create_key(caller, "one too many")
    own_keys.roll_key(caller, made[0].key.key_id, "24h")  # a roll replaces: still 20
    with pytest.raises(errors.RuleViolation):
        own_keys.create_key(caller, "still too many")
    own_keys.revoke_key(caller, made[1].key.key_id)
    own_keys.create_key(caller, "fits again")
    with pytest.raises(errors.RuleViolation):
        own_keys.create_key(caller, "full again")


def test_at_most_one_key_runs_out_beside_each_counted_key(api: Api, alice: User) -> None:
    caller = authenticate(f"Bearer {alice.key}")
    first = own_keys.create_key(caller, "first")
    second = own_keys.roll_key(caller, first.key.key_id, "7d")  # first runs out, uncounted
    with pytest.raises(errors.Conflict):
        own_keys.roll_key(caller, first.key.key_id, "7d")  # a running-out key is not rolled again
    third = own_keys.roll_key(caller, second.key.key_id, "7d")  # second runs out; first ends now
    live = {k.key_id for k in own_keys.list_keys(caller)}
    assert first.key.key_id not in live
    assert {second.key.key_id, third.key.key_id} <= live
    own_keys.revoke_key(caller, third.key.key_id)  # its slot is free again, and second ends with it
    live = {k.key_id for k in own_keys.list_keys(caller)}
    assert not {first.key.key_id, second.key.key_id, third.key.key_id} & live
    for ended in (first, second, third):
        with pytest.raises(errors.Unauthorized):
            authenticate(f"Bearer {ended.secret}")


def test_the_dashboard_is_admitted_by_the_users_bucket_and_answers_429_with_retry_after(
    api: Api, alice: User, limits: Callable[..., None], frozen: FrozenClock
) -> None:
    browser = signed_in(api, alice)
    limits(RATE_LIMIT_BURST="5", RATE_LIMIT_PER_SECOND="1")
    pages = [browser.get("/dashboard/webhooks") for _ in range(5)]
    assert [p.status_code for p in pages] == [200] * 5
    refused = browser.get("/dashboard/webhooks")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert "Too many requests" in refused.text
    assert api.call("GET", "/v1/me", alice.key).status_code == 429  # the API key shares the session's bucket
    frozen.advance(1)
    assert browser.get("/dashboard/webhooks").status_code == 200


def test_dashboard_posts_count_too(api: Api, alice: User, limits: Callable[..., None], frozen: FrozenClock) -> None:
    browser = signed_in(api, alice)
    token = browser.csrf("/dashboard/api-keys")
    limits(RATE_LIMIT_BURST="3", RATE_LIMIT_PER_SECOND="1")
    for _ in range(3):
        assert api.call("GET", "/v1/me", alice.key).status_code == 200
    response = browser.post("/dashboard/api-keys", {"csrf_token": token, "name": "one more"})
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1"
    assert len(own_keys.list_keys(authenticate(f"Bearer {alice.key}"))) == 1  # nothing created


def _sign_in_attempt(api: Api, key: str) -> Any:
    return Browser(api.client).sign_in(key)


def test_sign_in_attempts_are_limited_per_source(api: Api, alice: User, limits: Callable[..., None], frozen: FrozenClock) -> None:
    limits(SIGN_IN_PER_SOURCE_BURST="5", SIGN_IN_PER_SOURCE_PER_MINUTE="6")
    answers = [_sign_in_attempt(api, f"msk_guess{i}") for i in range(5)]
    assert [a.status_code for a in answers] == [401] * 5
    refused = _sign_in_attempt(api, alice.key)  # even the right key: the address is out of attempts
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "10"
    assert len(table_items(settings().DASHBOARD_SESSIONS_TABLE)) == 0
    frozen.advance(10)
    assert _sign_in_attempt(api, alice.key).status_code == 303


def test_sign_in_attempts_are_limited_per_key_prefix(api: Api, alice: User, limits: Callable[..., None], frozen: FrozenClock) -> None:
    limits(SIGN_IN_PER_KEY_PREFIX_BURST="3", SIGN_IN_PER_KEY_PREFIX_PER_MINUTE="6")
    prefix = alice.key[:8]
    assert [_sign_in_attempt(api, prefix + f"wrong{i}").status_code for i in range(3)] == [401] * 3
    assert _sign_in_attempt(api, alice.key).status_code == 429  # the guessed key's prefix is out of attempts
    assert _sign_in_attempt(api, "msk_Zzzzother").status_code == 401  # another prefix still has its own
