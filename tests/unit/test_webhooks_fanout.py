"""Webhook fan-out rules that need no table: what a stored subscription means."""

from __future__ import annotations

from chalicelib.webhooks.delivery import recipients as fanout


def test_stored_empty_events_mean_all() -> None:
    assert fanout.subscribed({"active": True, "events": []}, "message.new")
    assert not fanout.subscribed({"active": False, "events": []}, "message.new")
