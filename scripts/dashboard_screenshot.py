"""Regenerate the Dashboard screenshots in ``docs/``, 1280 px wide, taken in headless Chromium
(Debian's ``chromium``) from a local stack started on free ports:

* ``dashboard-webhooks.png``: the webhooks page of a sample user (one webhook switched off by failures);
* ``dashboard-webhook-disabled.png``: that webhook's page: why and when it was disabled, what Enable
  retries, the filtered delivery log and "Recover failed deliveries" (after enabling);
* ``dashboard-confirm-rotate.png``: the confirmation page before "Rotate secret";
* ``dashboard-event-catalog.png``: the event catalog (top of the page).

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
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=stack.base_url).new_page()
            page.goto("/dashboard/sign-in")
            page.get_by_label("API key").fill(key)
            page.get_by_role("button", name="Sign in").click()
            wait_until(lambda: page.get_by_role("heading", name="Webhooks", exact=True).is_visible())
            page.screenshot(path=str(DOCS / "dashboard-webhooks.png"), full_page=True)
            page.goto(f"/dashboard/webhooks/{hook_id}?outcome=failed")
            page.screenshot(path=str(DOCS / "dashboard-webhook-disabled.png"), full_page=True)
            page.goto(f"/dashboard/webhooks/{hook_id}/rotate")
            page.screenshot(path=str(DOCS / "dashboard-confirm-rotate.png"))
            page.goto("/dashboard/event-catalog")
            page.screenshot(path=str(DOCS / "dashboard-event-catalog.png"))
            browser.close()
    finally:
        stop_stack(stack)
    print(f"wrote the screenshots in {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
