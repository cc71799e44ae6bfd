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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM, LAUNCH_ARGS, start_stack, stop_stack, wait_until  # noqa: E402
from tests.e2e.receivers import receivers  # noqa: E402

DOCS = ROOT / "docs"
#: Viewport widths (px) and the file name suffix of each.
WIDTHS = ((1280, ""), (390, "-390"))


def main() -> int:
    """Start a stack, make a webhook fail five times, sign in, take the screenshots."""
    stack = start_stack()
    try:
        owner_id, owner = stack.new_user("Sam Sample")
        _, peer = stack.new_user("Pat Peer")
        key = str(owner.headers["authorization"]).split(" ", 1)[1]
        sent = peer.post("/v1/profile-requests", json={"userId": owner_id, "message": "Hi", "channel": "telegram"})
        conversation = owner.patch(f"/v1/match-requests/{sent.json()['requestId']}/status", json={"status": "ACCEPTED"})
        conversation_id = conversation.json()["conversationId"]
        assert owner.post("/v1/webhooks", json={"name": "CRM sync", "url": "http://127.0.0.1:9/crm"}).status_code == 201
        with receivers() as new, sync_playwright() as playwright:
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
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            for width, suffix in WIDTHS:
                page = browser.new_context(viewport={"width": width, "height": 900}, base_url=stack.base_url).new_page()
                page.goto("/dashboard/sign-in")
                page.get_by_label("API key").fill(key)
                page.get_by_role("button", name="Sign in").click()
                wait_until(lambda page=page: page.get_by_role("heading", name="Webhooks", exact=True).is_visible())
                wait_until(lambda page=page: page.locator("#unread-badge .badge").is_visible())
                page.screenshot(path=str(DOCS / f"dashboard-webhooks{suffix}.png"), full_page=True)
                page.goto(f"/dashboard/webhooks/{hook_id}?outcome=failed")
                page.screenshot(path=str(DOCS / f"dashboard-webhook-disabled{suffix}.png"), full_page=True)
                page.goto(f"/dashboard/webhooks/{hook_id}/rotate")
                page.screenshot(path=str(DOCS / f"dashboard-confirm-rotate{suffix}.png"))
                page.goto("/dashboard/event-catalog")
                page.screenshot(path=str(DOCS / f"dashboard-event-catalog{suffix}.png"))
                page.goto("/dashboard/conversations")
                wait_until(lambda page=page: page.locator("#unread-badge .badge").is_visible())
                page.screenshot(path=str(DOCS / f"dashboard-conversations{suffix}.png"))
                page.context.close()
            browser.close()
    finally:
        stop_stack(stack)
    print(f"wrote the screenshots in {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
