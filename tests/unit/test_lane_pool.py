"""The local lane worker pool's sizing rule (local_stack/lane_pool.py) and the production bounds it mirrors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra import cfn_functions
from local_stack.lane_pool import DEFAULT_MAXIMUM, PoolBounds, bounds_from_environment, slow_lane_bounds

ROOT = Path(__file__).resolve().parents[2]


def test_the_pool_keeps_spares_beside_the_busy_workers_up_to_the_maximum() -> None:
    bounds = PoolBounds(maximum=5, spare=2)
    assert bounds.initial == 2
    assert bounds.to_start(busy=0, idle=2) == 0  # idle: the spares poll
    assert bounds.to_start(busy=1, idle=1) == 1  # one turned busy: one more spare
    assert bounds.to_start(busy=3, idle=0) == 2  # three lanes held, none polling: two spares
    assert bounds.to_start(busy=4, idle=1) == 0  # at the maximum
    assert bounds.to_start(busy=5, idle=0) == 0  # every worker held: the maximum is the bound
    assert bounds.to_start(busy=2, idle=4) == 0  # never negative


def test_only_idle_workers_beyond_the_spares_retire() -> None:
    bounds = PoolBounds(maximum=8, spare=2)
    assert not bounds.may_retire(busy=0, idle=2)
    assert not bounds.may_retire(busy=5, idle=2)
    assert bounds.may_retire(busy=0, idle=3)
    assert bounds.may_retire(busy=4, idle=3)


def test_any_number_of_held_lanes_below_the_maximum_leaves_a_poller() -> None:
    bounds = PoolBounds(maximum=32, spare=2)
    busy, idle = 0, bounds.initial
    for _ in range(30):  # lanes turn busy one after another and stay held (hanging receivers)
        busy, idle = busy + 1, idle - 1
        idle += bounds.to_start(busy, idle)
        assert idle >= 1
        assert busy + idle <= 32
    assert (busy, idle) == (30, 2)


def test_bounds_come_from_local_lane_workers() -> None:
    assert bounds_from_environment({}) == PoolBounds(maximum=DEFAULT_MAXIMUM, spare=2)
    assert bounds_from_environment({"LOCAL_LANE_WORKERS": "1"}) == PoolBounds(maximum=1, spare=1)
    with pytest.raises(ValueError, match="must be >= 1"):
        bounds_from_environment({"LOCAL_LANE_WORKERS": "0"})
    with pytest.raises(ValueError, match="must be >= 1"):
        PoolBounds(maximum=4, spare=0)


def test_the_delivery_function_is_bounded_and_its_queue_hold_matches_its_timeout() -> None:
    template = json.loads((ROOT / "infra" / "resources.json").read_text())
    resources = template["Resources"]
    function = resources["DeliverWebhooks"]["Properties"]
    (event,) = function["Events"].values()
    concurrency = {"Ref": cfn_functions.DELIVERY_CONCURRENCY_PARAMETER}
    assert event["Properties"]["ScalingConfig"] == {"MaximumConcurrency": concurrency}
    assert function["ReservedConcurrentExecutions"] == concurrency
    parameter = template["Parameters"][cfn_functions.DELIVERY_CONCURRENCY_PARAMETER]
    assert 2 <= parameter["MinValue"] <= parameter["Default"] <= parameter["MaxValue"] <= 1000  # ScalingConfig's range
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    timeout = config["stages"]["prod"]["lambda_functions"]["deliver_webhooks"]["lambda_timeout"]
    visibility = resources["DeliveryQueue"]["Properties"]["VisibilityTimeout"]
    # Lambda refuses a mapping whose queue's visibility is below the function's timeout; the
    # recovery bound is the lease (the heartbeat's hold), which must be shorter than both.
    assert visibility == timeout == cfn_functions.DELIVERY_VISIBILITY_SECONDS == 30
    from chalicelib.kernel.config import Settings

    assert Settings.model_fields["DELIVERY_LEASE_SECONDS"].default < visibility


def test_the_slow_lanes_pool_holds_at_most_one_worker_per_slow_lane() -> None:
    assert slow_lane_bounds(4) == PoolBounds(maximum=4, spare=2)
    assert slow_lane_bounds(1) == PoolBounds(maximum=1, spare=1)
    assert slow_lane_bounds(4).to_start(busy=4, idle=0) == 0  # four hanging receivers: no fifth worker
    with pytest.raises(ValueError, match="must be >= 1"):
        slow_lane_bounds(0)


def test_the_slow_delivery_function_has_its_own_bounded_mapping_and_a_timeout_for_a_shared_message() -> None:
    template = json.loads((ROOT / "infra" / "resources.json").read_text())
    resources = template["Resources"]
    (event,) = resources["DeliverSlowWebhooks"]["Properties"]["Events"].values()
    assert event["Properties"]["Queue"] == {"Fn::GetAtt": ["SlowDeliveryQueue", "Arn"]}
    from chalicelib.kernel.config import Settings

    slow_lanes = Settings.model_fields["DELIVERY_SLOW_LANES"].default
    assert event["Properties"]["ScalingConfig"] == {"MaximumConcurrency": cfn_functions.SLOW_DELIVERY_CONCURRENCY}
    assert slow_lanes == cfn_functions.SLOW_DELIVERY_CONCURRENCY  # one invocation per slow lane
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    timeout = config["stages"]["prod"]["lambda_functions"]["deliver_slow_webhooks"]["lambda_timeout"]
    assert resources["SlowDeliveryQueue"]["Properties"]["VisibilityTimeout"] == timeout == cfn_functions.SLOW_DELIVERY_TIMEOUT_SECONDS
    # A slow-lane message's attempts, one after another, each at most the deadline plus its calls.
    from chalicelib.webhooks.delivery import lanes

    production_deadline = 10  # spec §6
    assert timeout >= lanes.MAX_MESSAGE_DELIVERIES * (production_deadline + 5)
    assert Settings.model_fields["DELIVERY_LEASE_SECONDS"].default < timeout
