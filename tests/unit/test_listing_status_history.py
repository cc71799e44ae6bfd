"""The status history's entries and bound (pure)."""

from __future__ import annotations

from chalicelib.listings import status_history
from chalicelib.listings.status import ListingStatus


def test_an_entry_holds_the_status_value_the_time_and_a_reason_only_when_given() -> None:
    assert status_history.entry(ListingStatus.PAUSED, "2026-01-01T00:00:00.000Z") == {
        "status": "PAUSED", "at": "2026-01-01T00:00:00.000Z",
    }
    assert status_history.entry(ListingStatus.REJECTED, "2026-01-01T00:00:00.000Z", "Spam") == {
        "status": "REJECTED", "at": "2026-01-01T00:00:00.000Z", "reason": "Spam",
    }


def test_appended_keeps_the_newest_entries_up_to_the_limit_oldest_first() -> None:
    history = [status_history.entry("ACTIVE", f"2026-01-01T00:00:{i:02d}.000Z") for i in range(status_history.LIMIT)]
    newest = status_history.entry("PAUSED", "2026-01-01T00:01:00.000Z")
    kept = status_history.appended(history, newest)
    assert len(kept) == status_history.LIMIT
    assert kept == [*history[1:], newest]
    assert status_history.appended(history[:3], newest) == [*history[:3], newest]
    assert status_history.appended([], newest) == [newest]
