"""Planner statistics (chalicelib/search/statistics.py): sizes remembered per process for a while."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chalicelib.search import statistics


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The cache's clock, moved by the test (seconds)."""
    now = [1000.0]
    monkeypatch.setattr(statistics, "_timer", lambda: now[0])
    statistics.forget()
    yield now
    statistics.forget()


def test_sizes_are_remembered_for_the_ttl_then_forgotten(clock: list[float]) -> None:
    statistics.remember({"l#a": 3, "l#b": 0})
    assert statistics.remembered(["l#a", "l#b"]) == {"l#a": 3, "l#b": 0}
    clock[0] += statistics.TTL_SECONDS - 1
    assert statistics.remembered(["l#b"]) == {"l#b": 0}
    clock[0] += 2
    assert statistics.remembered(["l#a"]) is None


def test_one_list_not_remembered_means_none_are(clock: list[float]) -> None:
    statistics.remember({"l#a": 3})
    assert statistics.remembered(["l#a", "l#c"]) is None
    assert statistics.remembered([]) == {}
    statistics.remember({"l#a": 5, "l#c": 1})  # a later read replaces the size
    assert statistics.remembered(["l#a", "l#c"]) == {"l#a": 5, "l#c": 1}
    statistics.forget()
    assert statistics.remembered(["l#a"]) is None


def test_a_share_is_remembered_when_enough_entries_were_checked(clock: list[float]) -> None:
    statistics.remember_share("k", accepted=5, read=statistics.MIN_OBSERVED - 1)
    assert statistics.share("k") is None  # too few entries to say
    statistics.remember_share("k", accepted=21, read=74)
    assert statistics.share("k") == 21 / 74
    statistics.remember_share("k", accepted=0, read=40)  # none accepted: a small share, never zero
    assert statistics.share("k") == 1 / 40
    clock[0] += statistics.TTL_SECONDS + 1
    assert statistics.share("k") is None
