"""A webhook's delivery health: attempts per hour (24 h) and per day (7 days) by outcome, counted in
each attempt's own transaction; the page's charts match its delivery log."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.webhooks import service
from tests.integration.conftest import Api, User
from tests.integration.test_dashboard import make_webhook, signed_in


def test_the_charts_count_every_attempt_by_outcome_and_match_the_log(
    api: Api, alice: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.clocks import frozen_clock
    from tests.integration.webhook_helpers import fast_delivery_settings, receiver_factory

    fast_delivery_settings(monkeypatch, delays="")  # one attempt per event
    factory = receiver_factory()
    start = datetime(2026, 11, 20, 8, 30, tzinfo=UTC)
    try:
        receiver = next(factory)("ok")
        hook = make_webhook(api, alice, receiver.url)
        with frozen_clock(start) as frozen:

            def deliver(ok: bool) -> None:
                receiver.status = 200 if ok else 500
                b = signed_in(api, alice)  # sessions last 12 h: the clock moves by days here
                sent = b.post(f"/dashboard/webhooks/{hook['id']}/test", {"csrf_token": b.csrf(), "event_type": "message.new"})
                assert sent.status_code == 303
                runner.drain()

            deliver(True)
            deliver(False)  # 08:30: 1 ok, 1 failed
            frozen.advance(2 * 86400)  # two days later, 08:30
            for ok in (True, True, False):
                deliver(ok)
            frozen.advance(3600)  # 09:30
            deliver(True)

            health = service.delivery_health(Caller(alice.user_id), hook["id"], start + timedelta(days=2, hours=1))
            hourly = {b.start[11:13]: (b.succeeded, b.failed) for b in health.hourly.buckets if b.succeeded or b.failed}
            assert hourly == {"08": (2, 1), "09": (1, 0)}
            assert len(health.hourly.buckets) == 24
            assert health.hourly.buckets[-1].start == "2026-11-22T09:00:00.000Z"
            daily = [(b.start[:10], b.succeeded, b.failed) for b in health.daily.buckets]
            assert len(daily) == 7
            assert daily[-1] == ("2026-11-22", 3, 1)
            assert ("2026-11-20", 1, 1) in daily
            assert (health.daily.succeeded, health.daily.failed) == (4, 2)

            page = signed_in(api, alice).get(f"/dashboard/webhooks/{hook['id']}").text
            chart = re.search(r'<svg id="chart-daily"[^>]*data-succeeded="(\d+)" data-failed="(\d+)"', page)
            assert chart
            log_ok = len(re.findall(r'<span class="badge ok">200</span>', page))
            log_failed = len(re.findall(r'<span class="badge bad">500</span>', page))
            assert (int(chart.group(1)), int(chart.group(2))) == (log_ok, log_failed) == (4, 2)
            assert "Last 7 days: success rate 66.7%" in page
            assert "Last 24 hours: success rate 75%" in page
            assert '<desc id="chart-hourly-desc">4 attempts: 3 succeeded, 1 failed; success rate 75%.</desc>' in page

            # The log's period filter and event id search (10:40: the last hour holds the 09:30 attempt only).
            frozen.advance(600)
            b = signed_in(api, alice)
            base = f"/dashboard/webhooks/{hook['id']}"
            last_hour = b.get(f"{base}?period=1h").text
            assert len(re.findall(r"<span>attempt \d+</span>", last_hour)) == 1
            assert len(re.findall(r"<span>attempt \d+</span>", b.get(f"{base}?period=24h").text)) == 4
            event_id = receiver.requests[0].headers["webhook-id"].split("_whk_")[0]  # <event id>_<webhook id>
            one = b.get(f"{base}?event_id={event_id}").text
            assert len(re.findall(r"<span>attempt \d+</span>", one)) == 1
            assert event_id in one
            assert "No delivery attempts match the filter." in b.get(f"{base}?event_id=evt_nothing&period=1h").text
            assert b.get(f"{base}?period=forever").status_code == 400
            assert b.get(f"{base}?event_id=not-an-id").status_code == 400
    finally:
        next(factory, None)
