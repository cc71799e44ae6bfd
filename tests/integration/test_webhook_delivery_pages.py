"""``GET /v1/webhooks/{id}/deliveries`` reads only its page: a descending Query of the log's own
key (``LOG#<attemptedAt>#<eventId>#<attempt>``) within the retention window after a signed key
cursor, and ``total`` from the log's day counters written in the same transaction as each attempt
(in-process moto, over the Chalice test client).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks.delivery import attempt_log
from chalicelib.webhooks.delivery.records import AttemptEntry
from scripts import lists_backfill
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error, counting_reads, edited_cursor, table_items, writes_one_at_a_time
from tests.integration.webhook_helpers import create_webhook, deliveries

URL = "http://127.0.0.1:9/hook"
NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


@contextmanager
def clock_at(moment: datetime) -> Iterator[None]:
    """``clock.now()`` answers ``moment`` (the request time the retention window starts from)."""
    with mock.patch.object(clock, "now", return_value=moment):
        yield


def log(webhook_id: str, attempted_at: datetime, event: str, attempt: int = 1) -> str:
    """Log one attempt as the lane does (through :func:`attempt_log.log_attempt`); returns its key."""
    entry: AttemptEntry = {
        "deliveryId": f"dlv_{event}_{attempt}", "eventId": event, "event": "message.new", "attempt": attempt,
        "attemptedAt": clock.iso(attempted_at), "messageId": f"msg_{event}", "success": attempt % 2 == 0,
        "statusCode": 200 if attempt % 2 == 0 else 500, "durationMs": 12, "test": False,
    }
    return attempt_log.log_attempt(webhook_id, entry)["deliveryKey"]


def logged_ids(webhook_id: str, since: datetime) -> list[str]:
    """Brute force: the webhook's logged attempts attempted on ``since``'s day or later, newest first."""
    items = [
        i for i in table_items(settings().DELIVERIES_TABLE)
        if i["webhookId"] == webhook_id and str(i["deliveryKey"]).startswith("LOG#")
        and i["attemptedAt"][:10] >= since.date().isoformat()
    ]
    return [i["deliveryId"] for i in sorted(items, key=lambda i: i["deliveryKey"], reverse=True)]


def walk(api: Api, user: User, webhook_id: str, page_size: int) -> tuple[list[str], list[int]]:
    """Follow ``nextCursor`` from the first page: the attempt ids in order and every page's ``total``."""
    found: list[str] = []
    totals: list[int] = []
    query = f"?pageSize={page_size}"
    while True:
        page = deliveries(api, user, webhook_id, query)
        found += [d["id"] for d in page["deliveries"]]
        totals.append(page["total"])
        assert len(page["deliveries"]) <= page_size
        if page["nextCursor"] is None:
            return found, totals
        assert len(page["deliveries"]) == page_size  # never a short page before the last
        query = f"?pageSize={page_size}&cursor={page['nextCursor']}"


@pytest.fixture
def hook(api: Api, alice: User) -> str:
    webhook_id: str = create_webhook(api, alice, URL)["id"]
    return webhook_id


@pytest.mark.parametrize("page_size", [1, 4, 7])
def test_cursor_pages_walk_the_log_newest_first_without_gaps_or_repeats(
    api: Api, alice: User, hook: str, page_size: int
) -> None:
    """Attempts over several days, several in the same millisecond (ties ordered by event and
    attempt, as the key): the cursor pages concatenate to the brute-force order, no attempt twice,
    and every page's total is the exact count."""
    for day in range(4):
        moment = NOW - timedelta(days=day, hours=1)
        for n in range(3):
            log(hook, moment, f"evt_{day}_{n}")  # same millisecond
        log(hook, moment + timedelta(seconds=1), f"evt_{day}_r", attempt=2)
    with clock_at(NOW):
        found, totals = walk(api, alice, hook, page_size)
    expected = logged_ids(hook, NOW - timedelta(days=30))
    assert len(expected) == 16
    assert found == expected
    assert len(set(found)) == len(found)
    assert totals == [16] * len(totals)


def test_page_without_cursor_is_the_offset_slice(api: Api, alice: User, hook: str) -> None:
    for n in range(9):
        log(hook, NOW - timedelta(minutes=n), f"evt_{n}")
    with clock_at(NOW):
        second = deliveries(api, alice, hook, "?pageSize=4&page=2")
        last = deliveries(api, alice, hook, "?pageSize=4&page=3")
    expected = logged_ids(hook, NOW - timedelta(days=30))
    assert [d["id"] for d in second["deliveries"]] == expected[4:8]
    assert (second["total"], second["page"]) == (9, 2)
    assert second["nextCursor"] is not None
    assert [d["id"] for d in last["deliveries"]] == expected[8:]
    assert last["nextCursor"] is None


def test_the_window_is_today_and_the_30_days_before(api: Api, alice: User, hook: str) -> None:
    """Attempts of day D are listed and counted through day D + 30 (UTC) and expire (TTL) at the
    start of day D + 31; older ones still stored (TTL deletes late) are neither listed nor counted."""
    oldest_listed = datetime(2026, 5, 16, 0, 0, 0, tzinfo=UTC)  # NOW's day - 30
    too_old = oldest_listed - timedelta(milliseconds=1)
    log(hook, too_old, "evt_old")
    log(hook, oldest_listed, "evt_edge")
    log(hook, NOW, "evt_new")
    with clock_at(NOW):
        page = deliveries(api, alice, hook)
    assert [d["eventId"] for d in page["deliveries"]] == ["evt_new", "evt_edge"]
    assert page["total"] == 2
    stored = {i["eventId"]: i for i in table_items(settings().DELIVERIES_TABLE) if i["deliveryKey"].startswith("LOG#")
              and i["webhookId"] == hook}
    assert stored["evt_edge"]["expiresAt"] == clock.epoch_seconds(datetime(2026, 6, 16, tzinfo=UTC))
    assert stored["evt_old"]["expiresAt"] == clock.epoch_seconds(datetime(2026, 6, 15, tzinfo=UTC))
    assert stored["evt_old"]["expiresAt"] <= clock.epoch_seconds(NOW)  # TTL may delete it: it is out of the window
    with clock_at(datetime(2026, 6, 16, 0, 0, tzinfo=UTC)):  # a day later the edge attempt has left too
        later = deliveries(api, alice, hook)
    assert [d["eventId"] for d in later["deliveries"]] == ["evt_new"]
    assert later["total"] == 1


def test_counter_keeps_the_window_and_drops_days_that_left_it(api: Api, alice: User, hook: str) -> None:
    log(hook, NOW - timedelta(days=40), "evt_a")
    log(hook, NOW - timedelta(days=40), "evt_b")
    log(hook, NOW - timedelta(days=8), "evt_c")
    log(hook, NOW, "evt_d")
    counter = storage.get(settings().DELIVERIES_TABLE, {"webhookId": hook, "deliveryKey": attempt_log.COUNTER_KEY})
    assert counter is not None
    days = {k: int(v) for k, v in counter.items() if k.startswith("d#")}
    # 2026-05-06 (40 days back) was removed by the write of 2026-06-07, for which it was 32 days old.
    assert days == {"d#2026-06-07": 1, "d#2026-06-15": 1}
    assert counter["expiresAt"] == clock.epoch_seconds(datetime(2026, 7, 16, tzinfo=UTC))
    with clock_at(NOW):
        assert deliveries(api, alice, hook)["total"] == 2


def test_a_page_reads_its_size_not_the_log(api: Api, alice: User, hook: str) -> None:
    """50 attempts, five pages of 10: a page via cursor reads pageSize + 1 log items, the webhook and
    the counter, not the log."""
    with writes_one_at_a_time():  # the log's transactions are not under test here: its reads are
        for n in range(50):
            log(hook, NOW - timedelta(minutes=n), f"evt_{n:03d}")
    with clock_at(NOW):
        first = deliveries(api, alice, hook, "?pageSize=10")
        with counting_reads() as reads:
            page = deliveries(api, alice, hook, f"?pageSize=10&cursor={first['nextCursor']}")
    assert page["total"] == 50
    assert [d["eventId"] for d in page["deliveries"]] == [f"evt_{n:03d}" for n in range(10, 20)]
    assert reads.calls == ["GetItem", "Query", "GetItem"]  # webhook, page, counter (API key cached)
    assert reads.by_operation["Query"] == 11
    assert reads.items <= 10 + 1 + 2


def test_edited_or_foreign_cursors_are_rejected_naming_cursor(api: Api, alice: User, bob: User, hook: str) -> None:
    other = create_webhook(api, alice, URL)["id"]
    for n in range(5):
        log(hook, NOW - timedelta(minutes=n), f"evt_{n}")
        log(other, NOW - timedelta(minutes=n), f"evt_{n}")
    with clock_at(NOW):
        cursor = deliveries(api, alice, hook, "?pageSize=2")["nextCursor"]
        assert cursor is not None
        edited = edited_cursor(cursor)
        for query in (
            f"?pageSize=2&cursor={edited}",
            f"?pageSize=3&cursor={cursor}",  # another page size
            "?pageSize=2&cursor=not-a-cursor",
        ):
            response = api.call("GET", f"/v1/webhooks/{hook}/deliveries{query}", alice.key)
            assert_error(response, 400, "VALIDATION_ERROR", "cursor")
        foreign = api.call("GET", f"/v1/webhooks/{other}/deliveries?pageSize=2&cursor={cursor}", alice.key)
        assert_error(foreign, 400, "VALIDATION_ERROR", "cursor")
        # Someone else's webhook stays 404 before any cursor is looked at.
        assert_error(api.call("GET", f"/v1/webhooks/{hook}/deliveries?pageSize=2&cursor={cursor}", bob.key), 404, "NOT_FOUND")


def test_a_cursor_whose_position_left_the_window_ends_the_walk(api: Api, alice: User, hook: str) -> None:
    for n in range(4):
        log(hook, datetime(2026, 5, 16, 1, tzinfo=UTC) - timedelta(minutes=n), f"evt_{n}")
    with clock_at(NOW):
        cursor = deliveries(api, alice, hook, "?pageSize=2")["nextCursor"]
    with clock_at(NOW + timedelta(days=1)):
        page = deliveries(api, alice, hook, f"?pageSize=2&cursor={cursor}")
    assert page == {"deliveries": [], "total": 0, "page": 2, "pageSize": 2, "nextCursor": None}



def test_backfill_counts_and_retimes_attempts_logged_before(api: Api, alice: User, hook: str) -> None:
    """Attempts logged before the day counters (no ``COUNT`` item, ``expiresAt`` = write time + 30 days):
    the backfill writes their counter and moves their expiry to the day rule."""
    for n in range(3):
        log(hook, NOW - timedelta(days=n), f"evt_{n}")
    table = settings().DELIVERIES_TABLE
    storage.delete(table, {"webhookId": hook, "deliveryKey": attempt_log.COUNTER_KEY})
    for item in table_items(table):
        if item["webhookId"] == hook:
            storage.put(table, {**item, "expiresAt": 1})
    with clock_at(NOW):
        assert deliveries(api, alice, hook)["total"] == 0
        done = lists_backfill.backfill_delivery_log()
        assert done == {"loggedAttempts": 3, "retimedAttempts": 3, "deliveryCounters": 1}
        page = deliveries(api, alice, hook)
    assert page["total"] == 3
    assert {i["expiresAt"] for i in table_items(table) if i["webhookId"] == hook and i["deliveryKey"].startswith("LOG#")} == {
        clock.epoch_seconds(datetime(2026, 7, 14 + d, tzinfo=UTC)) for d in range(3)
    }
    assert lists_backfill.backfill_delivery_log()["retimedAttempts"] == 0  # idempotent
