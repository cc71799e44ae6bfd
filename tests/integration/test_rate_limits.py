"""Rate limits over the API (in-process moto, patched clock): the per-key bucket at its real
defaults ((burst+1)-th request of one instant refused, refill with time), the administrators'
higher limit, and the daily quotas of match requests, profile requests and messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import http_sf
import pytest

from chalicelib.kernel.config import settings
from tests.clocks import FrozenClock
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error
from tests.integration.request_helpers import accepted_conversation, active_listing, match_request, profile_request


def fields(response: Any) -> dict[str, Any]:
    """The response's RateLimit-Policy and RateLimit fields, parsed as RFC 9651 lists."""
    return {name: http_sf.parse(response.headers[name].encode(), tltype="list") for name in ("RateLimit-Policy", "RateLimit")}


def test_the_default_bucket_admits_100_requests_of_one_instant_and_refuses_the_101st(
    api: Api, alice: User, bob: User, limits: Callable[..., None], frozen: FrozenClock
) -> None:
    limits()  # the production defaults: 20 per second, 100 at once
    answers = [api.call("GET", "/v1/me", alice.key) for _ in range(100)]
    assert [a.status_code for a in answers] == [200] * 100
    assert fields(answers[0]) == {"RateLimit-Policy": [("per-key", {"q": 100, "w": 5})], "RateLimit": [("per-key", {"r": 99, "t": 1})]}
    assert fields(answers[-1])["RateLimit"] == [("per-key", {"r": 0, "t": 5})]

    refused = api.call("GET", "/v1/me", alice.key)
    body = assert_error(refused, 429, "RATE_LIMITED")
    assert "100 at once and 20 per second" in body["error"]
    assert refused.headers["Retry-After"] == "1"
    assert fields(refused) == {"RateLimit-Policy": [("per-key", {"q": 100, "w": 5})], "RateLimit": [("per-key", {"r": 0, "t": 1})]}
    assert api.call("GET", "/v1/me", bob.key).status_code == 200  # every key has its own bucket

    frozen.advance(0.05)  # one token back (20 per second)
    assert api.call("GET", "/v1/me", alice.key).status_code == 200
    assert api.call("GET", "/v1/me", alice.key).status_code == 429  # a refusal takes no token
    frozen.advance(1)  # Retry-After: 20 more
    assert [api.call("GET", "/v1/me", alice.key).status_code for _ in range(21)] == [200] * 20 + [429]


def test_administrators_keys_have_their_own_higher_limit(
    api: Api, alice: User, admin: User, limits: Callable[..., None], frozen: FrozenClock
) -> None:
    limits(RATE_LIMIT_PER_SECOND="1", RATE_LIMIT_BURST="2", ADMIN_RATE_LIMIT_PER_SECOND="1", ADMIN_RATE_LIMIT_BURST="5")
    assert [api.call("GET", "/v1/me", alice.key).status_code for _ in range(3)] == [200, 200, 429]
    admin_answers = [api.call("GET", "/v1/admin/approvals", admin.key) for _ in range(6)]
    assert [a.status_code for a in admin_answers] == [200] * 5 + [429]
    assert fields(admin_answers[0])["RateLimit-Policy"] == [("per-key", {"q": 5, "w": 5})]
    assert admin_answers[-1].headers["Retry-After"] == "1"


def test_refusals_before_the_bucket_and_public_routes_carry_no_fields(api: Api, limits: Callable[..., None]) -> None:
    limits()
    unauthenticated = api.call("GET", "/v1/me", "msk_not_a_key")
    assert unauthenticated.status_code == 401
    assert "RateLimit" not in unauthenticated.headers
    assert "RateLimit" not in api.call("GET", "/v1/health").headers


def _seconds_to_midnight(moment: datetime) -> int:
    tomorrow = (moment.astimezone(UTC) + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((tomorrow - moment).total_seconds() + 0.999999))


def _quota_refusal(response: Any, policy: str, quota: int, moment: datetime) -> None:
    body = assert_error(response, 429, "RATE_LIMITED")
    assert f"Daily quota of {quota}" in body["error"]
    wait = _seconds_to_midnight(moment)
    assert response.headers["Retry-After"] == str(wait)
    assert fields(response) == {"RateLimit-Policy": [(policy, {"q": quota, "w": 86400})], "RateLimit": [(policy, {"r": 0, "t": wait})]}


def test_match_requests_beyond_the_daily_quota_are_refused_until_midnight_utc(
    api: Api, alice: User, bob: User, limits: Callable[..., None], frozen: FrozenClock
) -> None:
    limits(MATCH_REQUESTS_PER_DAY="2")
    first, second, third, fourth = (active_listing(api, bob) for _ in range(4))
    assert match_request(api, alice, first["id"]).status_code == 201
    assert match_request(api, alice, first["id"]).status_code == 409  # a refused duplicate counts nothing:
    assert match_request(api, alice, second["id"]).status_code == 201  # the second is within the quota of 2
    _quota_refusal(match_request(api, alice, third["id"]), "match-requests", 2, frozen.moment)
    assert api.call("GET", "/v1/match-requests/mine", alice.key).json["total"] == 2  # nothing written
    carol = make_user("Carol")
    assert match_request(api, carol, third["id"]).status_code == 201  # quotas are per user
    frozen.advance(_seconds_to_midnight(frozen.moment))  # the next UTC day
    assert match_request(api, alice, fourth["id"]).status_code == 201


def test_profile_requests_beyond_the_daily_quota_are_refused(
    api: Api, alice: User, bob: User, limits: Callable[..., None], frozen: FrozenClock
) -> None:
    limits(PROFILE_REQUESTS_PER_DAY="1")
    carol = make_user("Carol")
    assert profile_request(api, alice, bob.user_id).status_code == 201
    _quota_refusal(profile_request(api, alice, carol.user_id), "profile-requests", 1, frozen.moment)
    assert api.call("GET", "/v1/match-requests/incoming", carol.key).json["total"] == 0


def test_messages_beyond_the_daily_quota_are_refused(
    api: Api, alice: User, bob: User, limits: Callable[..., None], frozen: FrozenClock
) -> None:
    limits(MESSAGES_PER_DAY="2")
    _, conversation_id = accepted_conversation(api, alice, bob)
    path = f"/v1/conversations/{conversation_id}/messages"
    assert [api.call("POST", path, bob.key, {"content": f"m{i}"}).status_code for i in range(2)] == [201, 201]
    retry = {"Idempotency-Key": "third-message"}
    _quota_refusal(api.call("POST", path, bob.key, {"content": "one too many"}, headers=retry), "messages", 2, frozen.moment)
    assert api.call("POST", path, alice.key, {"content": "my own quota"}).status_code == 201
    assert api.call("GET", path, alice.key).json["total"] == 3
    frozen.advance(_seconds_to_midnight(frozen.moment))  # a 429 is never stored for its Idempotency-Key:
    again = api.call("POST", path, bob.key, {"content": "one too many"}, headers=retry)
    assert again.status_code == 201
    assert "Idempotent-Replayed" not in again.headers


def test_a_refusal_writes_the_rate_limit_refusals_metric(
    api: Api, alice: User, limits: Callable[..., None], frozen: FrozenClock, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits(RATE_LIMIT_BURST="1")
    log = tmp_path / "metrics.log"
    monkeypatch.setenv("METRICS_LOG", str(log))
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    settings.cache_clear()
    try:
        assert [api.call("GET", "/v1/me", alice.key).status_code for _ in range(3)] == [200, 429, 429]
    finally:
        monkeypatch.undo()
        settings.cache_clear()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert sum(line["RateLimitRefusals"][0] for line in lines if "RateLimitRefusals" in line) == 2
