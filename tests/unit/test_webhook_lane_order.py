"""The order a stream batch's deliveries are queued in (chalicelib/webhooks/delivery/lanes.py,
``owners_in_turn``): owners take turns, each owner's deliveries (so each webhook's and each
lane's) keep their order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.webhooks.delivery import lanes
from chalicelib.webhooks.delivery.envelope import Delivery, Event


def _delivery(event: str, webhook: str, owner: str) -> Delivery:
    return Delivery(Event(event, "message.new", "2026-11-22T00:00:00.000Z", {}, {}), webhook, owner_id=owner)


def test_another_owners_delivery_is_not_queued_behind_a_40_webhook_fan_out() -> None:
    fan_out = [_delivery("evt_1", f"whk_a{i}", "usr_a") for i in range(40)]
    others = [_delivery(f"evt_{n}", f"whk_{n}", f"usr_{n}") for n in range(2, 12)]
    batch = fan_out + others  # the fan-out's record came first in the stream batch
    order = lanes.owners_in_turn(batch)
    queued = [batch[i] for i in order]
    # The first SendMessageBatch (10 entries) carries 9 of the 10 other owners, the second the last one.
    assert [d.owner_id for d in queued[:11]] == ["usr_a", *(f"usr_{n}" for n in range(2, 12))]
    assert [d.webhook_id for d in queued if d.owner_id == "usr_a"] == [f"whk_a{i}" for i in range(40)]


def test_an_owners_deliveries_keep_their_order_across_its_events() -> None:
    batch = [_delivery("evt_1", "whk_a1", "usr_a"), _delivery("evt_1", "whk_a2", "usr_a"), _delivery("evt_2", "whk_b", "usr_b"),
             _delivery("evt_3", "whk_a1", "usr_a"), _delivery("evt_3", "whk_a2", "usr_a")]
    assert lanes.owners_in_turn(batch) == [0, 2, 1, 3, 4]


def test_a_delivery_without_an_owner_takes_turns_as_its_webhook() -> None:
    batch = [_delivery("evt_1", "whk_old", ""), _delivery("evt_2", "whk_old", ""), _delivery("evt_2", "whk_b", "usr_b")]
    assert lanes.owners_in_turn(batch) == [0, 2, 1]


def test_an_empty_batch_queues_nothing() -> None:
    assert lanes.owners_in_turn([]) == []


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=60))
def test_a_permutation_that_keeps_every_owners_order(pairs: list[tuple[int, int]]) -> None:
    batch = [_delivery(f"evt_{n}", f"whk_{owner}_{hook}", f"usr_{owner}") for n, (owner, hook) in enumerate(pairs)]
    order = lanes.owners_in_turn(batch)
    assert sorted(order) == list(range(len(batch)))
    for owner in {d.owner_id for d in batch}:
        positions = [i for i in order if batch[i].owner_id == owner]
        assert positions == sorted(positions)  # so every webhook's and every owner lane's messages keep their order
    # Owners take turns: no owner gets a second delivery queued before every owner got its first.
    owners = {d.owner_id for d in batch}
    assert {batch[i].owner_id for i in order[: len(owners)]} == owners


def _lane_delivery(webhook: str, owner: str, lane: int | None) -> Delivery:
    return Delivery(Event("evt_1", "message.new", "2026-11-22T00:00:00.000Z", {}, {}), webhook, owner_id=owner, lane=lane, slow=True)


def test_one_owners_webhooks_fill_the_slow_lanes_in_turn() -> None:
    numbers = [lanes.slow_lane(_lane_delivery(f"whk_{n}", "usr_a", n), 4) for n in range(40)]
    assert [numbers.count(n) for n in range(4)] == [10, 10, 10, 10]
    assert numbers[:4] == [(numbers[0] + n) % 4 for n in range(4)]  # its first 4 webhooks never share one


def test_a_webhooks_slow_lane_is_fixed_and_the_group_names_it() -> None:
    delivery = _lane_delivery("whk_1", "usr_a", 5)
    assert lanes.slow_lane(delivery, 4) == lanes.slow_lane(_lane_delivery("whk_1", "usr_a", 5), 4)
    assert lanes.group_id(delivery) == f"slow.{lanes.slow_lane(delivery, 4)}"
    # Without a lane number (a webhook created before them) or an owner: a hash of the webhook id, whatever the owner.
    assert lanes.slow_lane(_lane_delivery("whk_1", "usr_a", None), 4) == lanes.slow_lane(_lane_delivery("whk_1", "", None), 4)
