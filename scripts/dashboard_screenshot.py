"""Regenerate the Dashboard screenshots in ``docs/`` at a desktop width (1280 px, ``<name>.png``)
and a phone's (390 px, ``<name>-390.png``), taken in headless Chromium (Debian's ``chromium``) from a
local stack started on free ports:

* ``dashboard-webhooks``: the webhooks page of a sample user (one webhook switched off by failures);
* ``dashboard-webhook-disabled``: that webhook's page: why and when it was disabled, what Enable
  retries, the filtered delivery log and "Recover failed deliveries" (after enabling);
* ``dashboard-confirm-rotate``: the confirmation page before "Rotate secret";
* ``dashboard-event-catalog``: the event catalog (top of the page);
* ``dashboard-conversations``: the conversation list with an unread badge (and the navigation's).

Run: ``.venv/bin/python scripts/dashboard_screenshot.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM, LAUNCH_ARGS, Stack, start_stack, stop_stack, wait_until  # noqa: E402
from tests.e2e.receivers import receivers  # noqa: E402
from tests.e2e.test_dashboard import key_of, signed_in_page  # noqa: E402

DOCS = ROOT / "docs"
#: Viewport widths (px) and the file name suffix of each.
WIDTHS = ((1280, ""), (390, "-390"))


def shoot(page: Any, name: str, suffix: str, url: str | None = None, full_page: bool = True) -> None:
    """Save ``docs/<name><suffix>.png`` of ``page`` (Playwright), after opening ``url`` when given."""
    if url is not None:
        page.goto(url)
    page.screenshot(path=str(DOCS / f"{name}{suffix}.png"), full_page=full_page)


def run(scene: Callable[[Stack, Any], None]) -> int:
    """Start a local stack on free ports and headless Chromium, call ``scene(stack, browser)``, stop both."""
    stack = start_stack()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            scene(stack, browser)
            browser.close()
    finally:
        stop_stack(stack)
    print(f"wrote the screenshots in {DOCS}")
    return 0


def webhooks_scene(stack: Stack, browser: Any) -> None:
    """Make a webhook fail five times, then take the screenshots of the webhook pages and conversations."""
    owner_id, owner = stack.new_user("Sam Sample")
    _, peer = stack.new_user("Pat Peer")
    key = key_of(owner)
    sent = peer.post("/v1/profile-requests", json={"userId": owner_id, "message": "Hi", "channel": "telegram"})
    conversation = owner.patch(f"/v1/match-requests/{sent.json()['requestId']}/status", json={"status": "ACCEPTED"})
    conversation_id = conversation.json()["conversationId"]
    assert owner.post("/v1/webhooks", json={"name": "CRM sync", "url": "http://127.0.0.1:9/crm"}).status_code == 201
    with receivers() as new:
        receiver = new("fail")
        created = owner.post("/v1/webhooks", json={"name": "Orders service", "url": receiver.url,
                                                   "events": ["match_request.received", "message.new"]})
        hook_id = created.json()["id"]
        for n in range(1, 6):  # one at a time: each failure is the first attempt of its own event
            peer.post(f"/v1/conversations/{conversation_id}/messages", json={"content": f"note {n}"})
            wait_until(lambda n=n: len(receiver.requests) >= n, timeout_seconds=15)
        wait_until(lambda: not next(w for w in owner.get("/v1/webhooks").json()["webhooks"] if w["id"] == hook_id)["active"],
                   timeout_seconds=15)
    peer.post(f"/v1/conversations/{conversation_id}/messages", json={"content": "Are you free on Monday?"})
    for width, suffix in WIDTHS:
        page = signed_in_page(browser, stack, key, width)
        wait_until(lambda page=page: page.locator("#unread-badge .badge").is_visible())
        shoot(page, "dashboard-webhooks", suffix)
        shoot(page, "dashboard-webhook-disabled", suffix, f"/dashboard/webhooks/{hook_id}?outcome=failed")
        shoot(page, "dashboard-confirm-rotate", suffix, f"/dashboard/webhooks/{hook_id}/rotate", full_page=False)
        shoot(page, "dashboard-event-catalog", suffix, "/dashboard/event-catalog", full_page=False)
        page.goto("/dashboard/conversations")
        wait_until(lambda page=page: page.locator("#unread-badge .badge").is_visible())
        shoot(page, "dashboard-conversations", suffix, full_page=False)
        page.context.close()


if __name__ == "__main__":
    sys.exit(run(webhooks_scene))
