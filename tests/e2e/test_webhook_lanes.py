"""Isolation between tenants end to end: per-webhook delivery lanes with real receivers on
127.0.0.1 and the real local stack (its event runner consumes the FIFO lanes concurrently, as Lambda).

A module of its own, so that the stacks of tests/e2e/test_webhooks.py are stopped before this one starts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from tests.e2e.conftest import Stack, start_stack, stop_stack
from tests.e2e.receivers import Receiver
from tests.e2e.test_webhooks import (
    DELIVERY_WAIT,
    body_of,
    deliveries,
    delivery_idle,
    new_receiver,
    open_conversation,
    received,
    register,
    say,
    wait_state,
    webhook_state,
)

pytestmark = pytest.mark.e2e
__all__ = ["new_receiver"]  # the fixture, imported for this module's tests


#: Shortened for a lean test (production: 10 s deadline, 30/120/600 s delays); the lanes do not depend on them.
LANE_TIMEOUT_SECONDS = 2
LANE_DELAYS = (2, 3, 4)


@pytest.fixture(scope="module")
def lane_stack() -> Iterator[Stack]:
    """A local stack with a 2 s delivery deadline and retries after 2, 3 and 4 s."""
    running = start_stack({
        "WEBHOOK_TIMEOUT_SECONDS": str(LANE_TIMEOUT_SECONDS),
        "WEBHOOK_RETRY_DELAYS_SECONDS": ",".join(map(str, LANE_DELAYS)),
    })
    yield running
    stop_stack(running)


def test_a_hanging_tenant_delays_no_other_and_its_failure_policy_is_exact(
    lane_stack: Stack, new_receiver: Callable[..., Receiver]
) -> None:
    # Tenant A's receiver hangs, tenant B's answers at once, tenant C's answers 500. Twelve events
    # go to A and to B, alternating (A's first five attempts are cut off at 2 s each, then A is
    # disabled and the rest of its lane drains).
    a_id, tenant_a = lane_stack.new_user("Ada Hanging")
    b_id, tenant_b = lane_stack.new_user("Ben Healthy")
    c_id, tenant_c = lane_stack.new_user("Cy Failing")
    _, peer = lane_stack.new_user("Pat Peer")
    hanging, healthy, failing = new_receiver("hang", hang_seconds=30), new_receiver(), new_receiver("fail")
    hook_a = register(tenant_a, hanging, events=["message.new"])
    hook_b = register(tenant_b, healthy, events=["message.new"])
    hook_c = register(tenant_c, failing, events=["message.new"])
    to_a = open_conversation(a_id, tenant_a, peer)
    to_b = open_conversation(b_id, tenant_b, peer)
    to_c = open_conversation(c_id, tenant_c, peer)

    say(peer, to_c, "one failing delivery")  # retried after 2, 3 and 4 s while A hangs
    sent: list[str] = []
    for n in range(12):  # A's five events hang into five 2 s deadlines while B's twelve are delivered
        say(peer, to_a, f"a{n}")
        say(peer, to_b, f"b{n}")
        sent.append(f"b{n}")

    arrivals = received(healthy, len(sent), timeout=DELIVERY_WAIT)
    # Every event reached B, in event order, while A hung. How fast (under 2 s while A
    # hangs) is a wall-clock figure: bench/webhooks.py --check enforces it, not this test.
    assert [body_of(r)["data"]["content"] for r in arrivals] == sent

    state = wait_state(tenant_a, hook_a["id"], fail_count=5, active=False)
    assert (state["failCount"], state["active"]) == (5, False)
    delivery_idle(lane_stack, retries=True)  # every queued event and retry has been attempted by now
    assert len(hanging.requests) == 5  # exactly five attempts reached the hanging receiver ...
    assert hanging.max_in_flight == 1  # ... one at a time: each began after the one before was cut off
    assert [d["error"] for d in deliveries(tenant_a, hook_a["id"], 5)] == ["timeout"] * 5  # every attempt logged
    assert webhook_state(tenant_b, hook_b["id"])["failCount"] == 0

    # C's one event: the first attempt and three retries, each logged with the time its retry is
    # due, and each retry made no earlier than that (the schedule the code recorded, not gaps).
    attempts = received(failing, 1 + len(LANE_DELAYS), timeout=30)
    logged_c = sorted(deliveries(tenant_c, hook_c["id"], 1 + len(LANE_DELAYS)), key=lambda d: d["attempt"])
    assert [d["attempt"] for d in logged_c] == [1, 2, 3, 4]
    assert [d["nextAttemptAt"] is not None for d in logged_c] == [True, True, True, False]
    assert all(later["attemptedAt"] >= earlier["nextAttemptAt"] for earlier, later in itertools.pairwise(logged_c))
    assert len({r.webhook_id for r in attempts}) == 1
    assert wait_state(tenant_c, hook_c["id"], fail_count=4)["active"] is True
