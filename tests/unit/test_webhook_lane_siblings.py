"""Whose breakers open with a timed-out webhook's (chalicelib/webhooks/delivery/lanes.py,
``lane_siblings``): its owner's other active webhooks with a closed breaker, in the owner lane the
timed-out attempt holds and on the same host; nobody else's, no other lane's, no other host's."""

from __future__ import annotations

from typing import Any

from chalicelib.webhooks.delivery import lanes


def _hook(number: int, url: str = "https://hooks.example.com/a", owner: str = "usr_a", **fields: Any) -> dict[str, Any]:
    return {"webhookId": f"whk_{number}", "ownerId": owner, "url": url, "lane": number, "active": True, **fields}


def test_the_lane_siblings_on_the_same_host_are_chosen() -> None:
    hooks = [_hook(n, f"https://hooks.example.com/{n}") for n in range(12)]
    held = lanes.owner_lane("usr_a", "whk_0", 0)
    assert held == "usr_a.0"
    assert lanes.lane_siblings(hooks[0], held, hooks) == ["whk_4", "whk_8"]  # lanes 4 and 8 are lane 0 of 4


def test_other_hosts_owners_inactive_and_already_open_webhooks_are_left_alone() -> None:
    timed_out = _hook(0)
    others = [
        _hook(4, "https://other.example.com/a"),  # another host
        _hook(8, "https://HOOKS.example.com:8443/b"),  # the same host name, another port and case
        _hook(12, owner="usr_b"),  # someone else's
        _hook(16, active=False),
        _hook(20, breakerOpenedAt="2026-11-29T00:00:00.000Z"),
        _hook(24, lane=None),  # no lane number: the lane of a hash of its id
    ]
    chosen = lanes.lane_siblings(timed_out, "usr_a.0", [timed_out, *others])
    expected_by_hash = ["whk_24"] if lanes.owner_lane("usr_a", "whk_24", None) == "usr_a.0" else []
    assert chosen == ["whk_8", *expected_by_hash]


def test_a_url_without_a_host_opens_nothing() -> None:
    assert lanes.lane_siblings(_hook(0, url=""), "usr_a.0", [_hook(0, url=""), _hook(4, url="")]) == []
