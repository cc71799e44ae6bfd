"""Rate limits, pure: the GCRA arithmetic, the two conditional writes against an in-memory bucket
(the repository's conditions, stated once more here), the RateLimit field syntax read back with an
RFC 9651 parser, quota retry times, and the order of the stage's throttling above the keys' limits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import http_sf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.edge import http
from chalicelib.kernel import errors
from chalicelib.kernel.config import ConfigurationError, Settings
from chalicelib.persistence.transactions import Transaction
from chalicelib.rate_limits import context, gcra, header_fields, repository, service
from chalicelib.rate_limits.service import Quota
from infra import cfn_api
from local_stack.resources import placeholder_environment
from tests.clocks import FrozenClock, frozen_clock

T0 = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)
US = gcra.SECOND_US


# -- the arithmetic -------------------------------------------------------------------------------

def _run(policy: gcra.Policy, times_us: list[int], tat: int | None = None) -> list[bool]:
    """Pure GCRA over request times from theoretical arrival time ``tat`` (``None``: a fresh bucket): which pass."""
    passed = []
    for now in times_us:
        ok = gcra.admits(policy, tat, now)
        if ok:
            tat = gcra.next_tat_us(policy, tat, now)
        passed.append(ok)
    return passed


def test_an_idle_bucket_admits_burst_requests_in_one_instant_and_refuses_the_next() -> None:
    policy = gcra.Policy(rate=20, burst=100)
    assert _run(policy, [0] * 101) == [True] * 100 + [False]


def test_after_the_burst_the_bucket_refills_at_the_rate() -> None:
    policy = gcra.Policy(rate=20, burst=100)
    times = [0] * 100 + [policy.interval_us - 1, policy.interval_us, policy.interval_us, 2 * policy.interval_us]
    assert _run(policy, times)[100:] == [False, True, False, True]  # one token per 50 ms


def test_policy_numbers() -> None:
    policy = gcra.Policy(rate=20, burst=100)
    assert policy.interval_us == 50_000
    assert policy.tolerance_us == 99 * 50_000
    assert policy.window_seconds == 5  # an empty bucket fills in 100 / 20 s
    assert gcra.Policy(rate=3, burst=1).window_seconds == 1  # rounded up, never 0
    assert gcra.Policy(rate=0.5, burst=3).window_seconds == 6


def test_remaining_retry_after_and_full_in() -> None:
    policy = gcra.Policy(rate=20, burst=100)
    tat = gcra.next_tat_us(policy, None, 0)
    assert gcra.remaining(policy, tat, 0) == 99
    assert gcra.full_in_seconds(tat, 0) == 1  # 50 ms, rounded up
    empty = 100 * policy.interval_us  # the TAT after 100 requests at 0
    assert gcra.remaining(policy, empty, 0) == 0
    assert not gcra.admits(policy, empty, 0)
    assert gcra.retry_after_seconds(policy, empty, 0) == 1  # one token is back after 50 ms: 1 s, never 0
    slow = gcra.Policy(rate=0.1, burst=2)  # one token per 10 s
    assert gcra.retry_after_seconds(slow, 2 * slow.interval_us, 3 * US) == 7
    assert gcra.full_in_seconds(2 * slow.interval_us, 3 * US) == 17


@settings(max_examples=60, deadline=None)
@given(
    rate=st.sampled_from([1.0, 3.0, 20.0, 0.5]),
    burst=st.integers(1, 6),
    gaps=st.lists(st.integers(0, 1_500_000), min_size=1, max_size=40),
)
def test_the_remaining_count_matches_what_the_bucket_then_admits(rate: float, burst: int, gaps: list[int]) -> None:
    """``RateLimit``'s ``r`` is exact: after a request, exactly ``r`` more pass in the same instant."""
    policy = gcra.Policy(rate, burst)
    tat: int | None = None
    now = 0
    for gap in gaps:
        now += gap
        if gcra.admits(policy, tat, now):
            tat = gcra.next_tat_us(policy, tat, now)
            left = gcra.remaining(policy, tat, now)
            assert _run(policy, [now] * (left + 1), tat) == [True] * left + [False]


# -- the two conditional writes, against an in-memory table ----------------------------------------

class MemoryBuckets:
    """The repository's two writes with its conditions, on a dict (what DynamoDB does with them)."""

    def __init__(self) -> None:
        self.tat: dict[str, int] = {}
        self.writes = 0

    def advance(self, key_id: str, interval_us: int, now_us: int, ceiling_us: int, expires_at: int) -> int:
        self.writes += 1
        stored = self.tat.get(key_id)
        if stored is None or not now_us < stored <= ceiling_us:  # "#tat > :now AND #tat <= :ceiling"
            raise repository.Stale(stored)
        self.tat[key_id] = stored + interval_us
        return self.tat[key_id]

    def restart(self, key_id: str, interval_us: int, now_us: int, expires_at: int) -> int:
        self.writes += 1
        stored = self.tat.get(key_id)
        if stored is not None and stored > now_us:  # "attribute_not_exists(#tat) OR #tat <= :now"
            raise repository.Stale(stored)
        self.tat[key_id] = now_us + interval_us
        return self.tat[key_id]


@pytest.fixture
def buckets(monkeypatch: pytest.MonkeyPatch, set_settings: Callable[..., None]) -> Iterator[MemoryBuckets]:
    memory = MemoryBuckets()
    monkeypatch.setattr(repository, "advance", memory.advance)
    monkeypatch.setattr(repository, "restart", memory.restart)
    set_settings(RATE_LIMIT_PER_SECOND="2", RATE_LIMIT_BURST="3", ADMIN_RATE_LIMIT_PER_SECOND="4", ADMIN_RATE_LIMIT_BURST="6")
    service.clear_hints()
    yield memory
    service.clear_hints()


@pytest.fixture
def clock() -> Iterator[FrozenClock]:
    with frozen_clock(T0) as frozen:
        yield frozen


def _admit(key: str = "k", admin: bool = False) -> bool:
    try:
        service.admit(key, admin)
    except errors.RateLimited:
        return False
    return True


def test_admit_takes_one_write_per_request_when_the_hint_is_right(buckets: MemoryBuckets, clock: FrozenClock) -> None:
    assert [_admit() for _ in range(3)] == [True, True, True]
    assert buckets.writes == 3
    with pytest.raises(errors.RateLimited) as refused:
        service.admit("k", False)
    assert buckets.writes == 4  # the refusal is the failed condition of one write, no read
    assert http.error_headers(refused.value) == {
        "Retry-After": "1", "RateLimit-Policy": '"per-key";q=3;w=2', "RateLimit": '"per-key";r=0;t=1',
    }
    clock.advance(0.5)  # one token back (2 per second)
    assert [_admit(), _admit()] == [True, False]


def test_admission_headers_and_the_admin_policy(buckets: MemoryBuckets, clock: FrozenClock) -> None:
    first = service.admit("k", False)
    assert first.headers() == {"RateLimit-Policy": '"per-key";q=3;w=2', "RateLimit": '"per-key";r=2;t=1'}
    assert context.current() is first  # kept for the response's fields
    assert [_admit("a", admin=True) for _ in range(7)] == [True] * 6 + [False]


def test_a_wrong_hint_costs_one_more_write_never_a_wrong_answer(buckets: MemoryBuckets, clock: FrozenClock) -> None:
    assert _admit()
    assert _admit()
    service.clear_hints()  # another process (a cold Lambda) sees this key for the first time
    assert _admit()  # restart fails (the bucket is not full), advance passes
    assert buckets.writes == 4
    assert not _admit()
    assert buckets.writes == 5
    clock.advance(10)  # the bucket is full again, but this process's hint says it is not:
    service._remember(service.user_bucket("k"), service.now_us() + 60 * US)
    assert _admit()  # advance fails (tat <= now), restart passes
    assert buckets.writes == 7


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 700_000)), min_size=1, max_size=40))
def test_several_processes_sharing_a_bucket_decide_as_one_gcra(steps: list[tuple[int, int]]) -> None:
    """Requests from 4 processes (each with its own hints) pass exactly when pure GCRA passes them."""
    memory = MemoryBuckets()
    policy = gcra.Policy(2, 3)
    hints = [dict[str, int]() for _ in range(4)]
    now = T0
    times, got = [], []
    with pytest.MonkeyPatch.context() as patch, frozen_clock(T0) as clock:
        patch.setattr(repository, "advance", memory.advance)
        patch.setattr(repository, "restart", memory.restart)
        patch.setattr(service, "key_policy", lambda admin: policy)
        for process, gap in steps:
            now = clock.advance(gap / US)
            times.append((now - T0) // timedelta(microseconds=1))
            patch.setattr(service, "_hints", hints[process])
            got.append(_admit())
    assert got == _run(policy, times)


def test_off_means_no_bucket_write_and_no_quota_item(buckets: MemoryBuckets, clock: FrozenClock,
                                                    set_settings: Callable[..., None]) -> None:
    set_settings(RATE_LIMITS_ENABLED="false")
    assert service.admit("k", False) is None
    tx = Transaction()
    service.count(tx, "usr_1", Quota.MESSAGES)
    assert (buckets.writes, len(tx)) == (0, 0)
    set_settings(RATE_LIMITS_ENABLED="true")
    service.count(tx, "usr_1", Quota.MESSAGES)
    assert len(tx) == 1


def test_a_deployed_function_refuses_to_run_without_rate_limits() -> None:
    deployed = {**placeholder_environment(), "AWS_LAMBDA_FUNCTION_NAME": "api", "CURSOR_SECRET": "k" * 40}
    assert Settings.from_environment(deployed).RATE_LIMITS_ENABLED
    with pytest.raises(ConfigurationError, match="RATE_LIMITS_ENABLED"):
        Settings.from_environment({**deployed, "RATE_LIMITS_ENABLED": "false"})
    assert not Settings.from_environment({**placeholder_environment(), "RATE_LIMITS_ENABLED": "false"}).RATE_LIMITS_ENABLED


# -- quotas ---------------------------------------------------------------------------------------

def test_a_quota_refusal_waits_until_midnight_utc(set_settings: Callable[..., None]) -> None:
    set_settings(MATCH_REQUESTS_PER_DAY="7")
    with frozen_clock(datetime(2026, 11, 25, 23, 59, 30, 250_000, tzinfo=UTC)):
        refusal = service.quota_exceeded(Quota.MATCH_REQUESTS)
    assert http.error_status(refusal) == (429, "RATE_LIMITED")
    assert http.error_headers(refusal) == {
        "Retry-After": "30",
        "RateLimit-Policy": '"match-requests";q=7;w=86400',
        "RateLimit": '"match-requests";r=0;t=30',
    }
    assert "7 match requests" in refusal.message


def test_the_quota_item_counts_per_user_kind_and_utc_day(set_settings: Callable[..., None]) -> None:
    set_settings(MESSAGES_PER_DAY="5")
    with frozen_clock(datetime(2026, 11, 25, 23, 59, tzinfo=UTC)):
        op = service.count_op("usr_1", Quota.MESSAGES)["Update"]
    assert op["Key"] == {"pk": {"S": "quota#usr_1#messages#2026-11-25"}}
    assert op["ConditionExpression"] == "attribute_not_exists(#used) OR #used < :limit"
    assert op["ExpressionAttributeValues"][":limit"] == {"N": "5"}
    assert op["ExpressionAttributeValues"][":expires"] == {"N": str(int(datetime(2026, 11, 27, tzinfo=UTC).timestamp()))}


# -- the fields -----------------------------------------------------------------------------------

def test_the_fields_parse_as_structured_field_lists() -> None:
    """draft-ietf-httpapi-ratelimit-headers-11: both fields are sf-lists of string items with integer parameters."""
    policy = header_fields.policy_item("per-key", 100, 5)
    limit = header_fields.limit_item("per-key", 99, 1)
    assert http_sf.parse(policy.encode(), tltype="list") == [("per-key", {"q": 100, "w": 5})]
    assert http_sf.parse(limit.encode(), tltype="list") == [("per-key", {"r": 99, "t": 1})]
    for bad in (lambda: header_fields.policy_item("Per Key", 1, 1), lambda: header_fields.policy_item("x", 1, 0),
                lambda: header_fields.limit_item("x", -1, 1)):
        with pytest.raises(ValueError):  # noqa: PT011 -- each names its own problem
            bad()


# -- configuration and the outer guard -----------------------------------------------------------------

def _default(name: str) -> Any:
    return Settings.model_fields[name].default


def test_the_documented_defaults() -> None:
    assert (_default("RATE_LIMIT_PER_SECOND"), _default("RATE_LIMIT_BURST")) == (20.0, 100)  # DESIGN §2
    assert (_default("ADMIN_RATE_LIMIT_PER_SECOND"), _default("ADMIN_RATE_LIMIT_BURST")) == (100.0, 500)
    assert (_default("MATCH_REQUESTS_PER_DAY"), _default("PROFILE_REQUESTS_PER_DAY"), _default("MESSAGES_PER_DAY")) == (100, 50, 1000)


def test_the_stage_throttling_sits_above_every_keys_limits() -> None:
    """API Gateway's stage throttling is the outer guard over all clients together: one key at its own
    limit, administrators' included, must not exhaust it for everybody."""
    rate = cfn_api.PARAMETERS["ApiThrottlingRateLimit"]["Default"]
    burst = cfn_api.PARAMETERS["ApiThrottlingBurstLimit"]["Default"]
    assert rate >= _default("ADMIN_RATE_LIMIT_PER_SECOND") >= _default("RATE_LIMIT_PER_SECOND")
    assert burst >= _default("ADMIN_RATE_LIMIT_BURST") >= _default("RATE_LIMIT_BURST")


# -- a client that honours Retry-After (the demo seeder) --------------------------------------------

def test_the_demo_client_waits_retry_after_and_sends_again() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import httpx

    from local_stack.demo import RetryAfterTransport

    bodies: list[bytes] = []

    class Limited(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            limited = len(bodies) < 3
            self.send_response(429 if limited else 201)
            if limited:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Limited)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.server_port}", transport=RetryAfterTransport()) as http:
            assert http.post("/v1/listings", json={"a": 1}).status_code == 201
    finally:
        server.shutdown()
        server.server_close()
    assert bodies == [b'{"a":1}'] * 3
