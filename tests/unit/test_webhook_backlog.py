"""The backlog rules of an open breaker's webhook (chalicelib/webhooks/delivery/backlog.py) over
fakes: keys in event order, parking in few transactions with a per-webhook fallback, and the
step :func:`settle` takes for each state of a webhook."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.persistence import storage
from chalicelib.webhooks import repository
from chalicelib.webhooks.delivery import backlog
from chalicelib.webhooks.delivery.envelope import Delivery, Event


def _delivery(event_id: str, webhook_id: str = "whk_1", **fields: Any) -> Delivery:
    event = Event(event_id=event_id, type="message.new", created_at="2026-11-29T00:00:00.000Z", data={}, routing={})
    return Delivery(event, webhook_id, **fields)


def test_parked_keys_sort_in_event_order_and_name_one_delivery() -> None:
    ids = ["evt_01KB0000000000000000000001", "evt_01KB0000000000000000000002", "evt_01KB0000000000000000000010"]
    keys = [backlog.parked_key(_delivery(i)) for i in reversed(ids)]
    assert sorted(keys) == [backlog.parked_key(_delivery(i)) for i in ids]
    assert backlog.parked_key(_delivery(ids[0], attempt=3)) == backlog.parked_key(_delivery(ids[0]))  # one per delivery
    asked = _delivery(ids[0], redelivery_id="rdl_1")
    assert backlog.head_id(asked) == f"{ids[0]}#rdl_1" != backlog.head_id(_delivery(ids[0]))


class FakeTransactions:
    """Records each TransactWriteItems; ``refuse(items) -> reasons or None`` cancels one."""

    def __init__(self, refuse: Callable[[list[dict[str, Any]]], list[str] | None] = lambda items: None) -> None:
        self.calls: list[list[dict[str, Any]]] = []
        self.refuse = refuse

    def __call__(self, items: Any) -> None:
        items = list(items)
        self.calls.append(items)
        reasons = self.refuse(items)
        if reasons is not None:
            raise storage.TransactionConflict(reasons)


@pytest.fixture
def transactions(monkeypatch: pytest.MonkeyPatch) -> FakeTransactions:
    fake = FakeTransactions()
    monkeypatch.setattr(storage, "transact", fake)
    return fake


def test_a_fan_out_to_40_open_breakers_is_parked_in_one_transaction(transactions: FakeTransactions) -> None:
    deliveries = [_delivery("evt_01KB0000000000000000000001", f"whk_{n}") for n in range(40)]
    assert backlog.park(deliveries) == [f"whk_{n}" for n in range(40)]
    assert [len(call) for call in transactions.calls] == [80]  # 40 puts and 40 counts: at most 100 per call


def test_more_than_100_items_take_several_transactions_each_webhook_whole(transactions: FakeTransactions) -> None:
    deliveries = [_delivery(f"evt_01KB00000000000000000000{e:02d}", f"whk_{n}") for n in range(30) for e in range(3)]
    backlog.park(deliveries)
    assert [len(call) for call in transactions.calls] == [100, 20]  # 25 webhooks x (3 + 1), then 5 x 4
    assert sum(len(call) for call in transactions.calls) == 30 * 4


def test_a_refused_condition_parks_webhook_by_webhook_and_drops_a_switched_off_ones(
    transactions: FakeTransactions,
) -> None:
    def refuse(items: list[dict[str, Any]]) -> list[str] | None:
        counts = [i["Update"] for i in items if "Update" in i]
        if len(counts) > 1:
            return ["None"] * len(items[:-1]) + ["ConditionalCheckFailed"]
        if counts and counts[0]["Key"] == {"webhookId": {"S": "whk_off"}}:
            return ["None", "ConditionalCheckFailed"]  # switched off meanwhile
        if items[0]["Put"]["Item"]["deliveryKey"]["S"].endswith("_dup#"):
            return ["ConditionalCheckFailed", "None"]  # parked before: a replayed batch
        return None

    transactions.refuse = refuse
    taken = backlog.park([_delivery("evt_a", "whk_on"), _delivery("evt_dup", "whk_on"), _delivery("evt_b", "whk_off")])
    assert taken == ["whk_on"]
    assert [len(call) for call in transactions.calls] == [5, 2, 2, 2]  # all at once, then one delivery at a time


class Settled:
    """Fakes the reads of :func:`backlog.settle` and records which step it took for which webhook."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, webhooks: list[dict[str, Any]], parked_heads: set[str]) -> None:
        self.steps: list[tuple[str, str]] = []
        monkeypatch.setattr(repository, "get_many",
                            lambda ids, consistent=False: {w["webhookId"]: w for w in webhooks if w["webhookId"] in ids})
        monkeypatch.setattr(storage, "batch_get", lambda table, keys, consistent=False: [
            k for k in keys if k["deliveryKey"] in {backlog.PREFIX + h for h in parked_heads}])
        monkeypatch.setattr(backlog, "pump", lambda w: self.steps.append(("pump", w["webhookId"])) or True)
        monkeypatch.setattr(backlog, "release", lambda w: self.steps.append(("release", w["webhookId"])) or 0)


def test_settle_queues_a_head_for_an_open_breaker_without_one_and_releases_a_closed_breakers_backlog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened = "2026-11-29T00:00:00.000Z"
    webhooks = [
        {"webhookId": "whk_headless", "active": True, "breakerOpenedAt": opened, "parkedCount": 2},
        {"webhookId": "whk_queued", "active": True, "breakerOpenedAt": opened, "slowHead": "evt_q#", "parkedCount": 2},
        {"webhookId": "whk_stuck", "active": True, "breakerOpenedAt": opened, "slowHead": "evt_s#", "parkedCount": 2},
        {"webhookId": "whk_closed", "active": True, "parkedCount": 3},
        {"webhookId": "whk_empty", "active": True, "parkedCount": 0},
        {"webhookId": "whk_off", "active": False, "breakerOpenedAt": opened, "parkedCount": 4},
    ]
    settled = Settled(monkeypatch, webhooks, parked_heads={"evt_s#"})
    backlog.settle([w["webhookId"] for w in webhooks] + ["whk_gone"])
    assert settled.steps == [("pump", "whk_headless"), ("pump", "whk_stuck"), ("release", "whk_closed")]
