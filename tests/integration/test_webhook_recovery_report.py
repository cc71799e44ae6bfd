""""Recover failed deliveries" tells the truth: it re-sends each failed delivery at most once, and
when the failure policy disables the webhook again mid-recovery, the page and the log say how many
attempts were sent and how many were not."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.integration.conftest import Api, User
from tests.integration.test_dashboard import make_webhook, signed_in


def test_a_recovery_disabled_midway_reports_sent_and_not_sent(
    api: Api, alice: User, runner: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.integration.webhook_helpers import fast_delivery_settings, receiver_factory

    fast_delivery_settings(monkeypatch, delays="0,0,0")  # automatic retries on: a recovery must still send once
    factory = receiver_factory()
    try:
        receiver = next(factory)("ok")
        receiver.status = 500
        hook = make_webhook(api, alice, receiver.url)
        b = signed_in(api, alice)
        # Three events, each failing through its retries until the policy disables the webhook (5 failures).
        for _ in range(3):
            sent = b.post(f"/dashboard/webhooks/{hook['id']}/test", {"csrf_token": b.csrf(), "event_type": "message.new"})
            assert sent.status_code == 303
        runner.drain()
        assert b.post(f"/dashboard/webhooks/{hook['id']}/enable", {"csrf_token": b.csrf()}).status_code == 303
        sent_before = len(receiver.requests)
        failed_events = {r.headers["webhook-id"] for r in receiver.requests}
        assert len(failed_events) == 3

        # Still failing: each recovered attempt fails; failCount (0 after Enable) cannot reach 5 with 3
        # attempts, so the owner's receiver gets exactly 3 requests and no retries follow them.
        caplog.set_level(logging.INFO)
        answer = b.post(f"/dashboard/webhooks/{hook['id']}/recover", {"csrf_token": b.csrf(), "since": "1 hour"})
        assert "queued=3" in answer.headers["Location"]
        runner.drain()
        assert len(receiver.requests) == sent_before + 3
        page = b.get(f"/dashboard/webhooks/{hook['id']}").text
        assert "3 queued; 3 sent." in page

        # failCount is 3 now (the recovery's three failures, no retries after them): recovering the same
        # three again, the second attempt is failure 5, the policy disables the webhook, the third is not sent.
        active = api.call("GET", "/v1/webhooks", alice.key).json["webhooks"]
        assert next(w for w in active if w["id"] == hook["id"])["failCount"] == 3
        before = len(receiver.requests)
        answer = b.post(f"/dashboard/webhooks/{hook['id']}/recover", {"csrf_token": b.csrf(), "since": "1 hour"})
        assert "queued=3" in answer.headers["Location"]
        runner.drain()
        assert len(receiver.requests) == before + 2  # failures 4 and 5; then the webhook is off
        page = b.get(f"/dashboard/webhooks/{hook['id']}").text
        assert "3 queued; 2 sent, <strong>1 not sent</strong>" in page
        assert "waiting to be sent" not in page
        not_sent = [r for r in caplog.records if r.getMessage() == "webhook recovery attempt not sent"]
        assert len(not_sent) == 1
    finally:
        next(factory, None)
