"""The demo's approvals (``local_stack.demo.approve_pending``): a busy machine approves slowly but
steadily, so the wait ends only after ``seconds`` without an approval, not ``seconds`` in all."""

from __future__ import annotations

import json

import httpx

from local_stack import demo


class Clock:
    """``time.monotonic`` that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def _client(clock: Clock, batches: list[int], seconds_per_claim: float) -> httpx.Client:
    """An admin API whose claims answer ``batches`` tasks in turn (then none), each claim taking
    ``seconds_per_claim`` of the patched clock."""
    queue = list(batches)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/admin/approvals/claims":
            clock.now += seconds_per_claim
            count = queue.pop(0) if queue else 0
            return httpx.Response(200, json={"approvals": [{"approvalId": f"apr_{i}"} for i in range(count)]})
        assert json.loads(request.content) == {"decision": "approve"}
        return httpx.Response(200, json={})

    return httpx.Client(base_url="http://demo.test", transport=httpx.MockTransport(answer))


def _no_sleep(seconds: float) -> None:
    """A pause of the patched clock: none (only claims move it)."""


def test_approving_goes_on_past_the_timeout_while_approvals_keep_coming() -> None:
    clock = Clock()
    with _client(clock, [1] * 30, seconds_per_claim=10) as http:  # 300 s in all, 10 s between approvals
        assert demo.approve_pending(http, {}, expected=30, seconds=60, clock=clock.monotonic, sleep=_no_sleep) == 30


def test_approving_stops_after_the_timeout_without_an_approval() -> None:
    clock = Clock()
    with _client(clock, [3], seconds_per_claim=10) as http:  # then the queue stays empty
        assert demo.approve_pending(http, {}, expected=10, seconds=60, clock=clock.monotonic, sleep=_no_sleep) == 3
    assert clock.now <= 3 * 10 + 60 + 10  # gave up a timeout after the last approval
