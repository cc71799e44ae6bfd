"""A webhook's delivery health in headless Chromium: the charts are images named by their titles,
their totals match the delivery log, and axe-core finds no violation at phone and desktop widths."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Stack, wait_until
from tests.e2e.receivers import Receiver, receivers
from tests.e2e.test_dashboard import expect, key_of, open_conversation, register, say, signed_in_page

pytestmark = pytest.mark.e2e


@pytest.fixture
def new_receiver() -> Iterator[Callable[..., Receiver]]:
    with receivers() as new:
        yield new


@pytest.mark.parametrize("width", [390, 1280])
def test_the_health_charts_are_named_images_matching_the_log(
    browser: Any, stack: Stack, new_receiver: Callable[..., Receiver], width: int
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    owner_id, owner = stack.new_user(f"Hedda Health {width}")
    _, other = stack.new_user(f"Otis Other {width}")
    conversation_id = open_conversation(owner_id, owner, other)
    receiver = new_receiver("ok")
    hook = register(owner, receiver, ["message.new"])
    for n, mode in enumerate(("ok", "ok", "fail")):
        receiver.mode = mode
        before = len(receiver.requests)
        say(other, conversation_id, f"note {n}")
        wait_until(lambda before=before: len(receiver.requests) > before, timeout_seconds=15)
    page = signed_in_page(browser, stack, key_of(owner), width=width)

    def logged() -> bool:
        page.goto(f"/dashboard/webhooks/{hook['id']}")
        return page.locator("ol.log > li").count() >= 3

    wait_until(logged, timeout_seconds=15)
    hourly = page.get_by_role("img", name="Delivery attempts per hour, last 24 hours (UTC)")
    daily = page.get_by_role("img", name="Delivery attempts per day, last 7 days (UTC)")
    expect(hourly).to_be_visible()
    expect(daily).to_be_visible()
    # The failed delivery's retries may add failures meanwhile: compare the charts with the log of the same page.
    log_ok = page.locator("ol.log .badge.ok").count()
    log_failed = page.locator("ol.log .badge.bad").count()
    assert log_ok == 2
    assert log_failed >= 1
    for chart in (hourly, daily):
        assert (int(chart.get_attribute("data-succeeded") or -1), int(chart.get_attribute("data-failed") or -1)) == (log_ok, log_failed)
    total = log_ok + log_failed
    expect(hourly).to_have_accessible_description(re.compile(rf"^{total} attempts: 2 succeeded, {log_failed} failed; success rate "))
    expect(page.get_by_role("heading", name=re.compile(r"^Last 24 hours: success rate \d"))).to_be_visible()
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.context.close()
