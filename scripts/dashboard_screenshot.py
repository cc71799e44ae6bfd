"""Regenerate ``docs/dashboard-webhooks.png``: the webhooks page of a sample user, 1280 px wide,
taken in headless Chromium (Debian's ``chromium``) from a local stack started on free ports.

Run: ``.venv/bin/python scripts/dashboard_screenshot.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM, LAUNCH_ARGS, start_stack, stop_stack, wait_until  # noqa: E402

OUT = ROOT / "docs" / "dashboard-webhooks.png"


def main() -> int:
    """Start a stack, create two webhooks (one switched off by failures), sign in, screenshot."""
    stack = start_stack()
    try:
        _, owner = stack.new_user("Sam Sample")
        key = str(owner.headers["authorization"]).split(" ", 1)[1]
        for name, url, events in (("Orders service", "http://127.0.0.1:9/orders", ["match_request.received", "message.new"]),
                                  ("CRM sync", "http://127.0.0.1:9/crm", None)):
            body = {"name": name, "url": url, **({"events": events} if events else {})}
            assert owner.post("/v1/webhooks", json=body).status_code == 201
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=stack.base_url).new_page()
            page.goto("/dashboard/sign-in")
            page.get_by_label("API key").fill(key)
            page.get_by_role("button", name="Sign in").click()
            wait_until(lambda: page.get_by_role("heading", name="Webhooks", exact=True).is_visible())
            page.screenshot(path=str(OUT), full_page=True)
            browser.close()
    finally:
        stop_stack(stack)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
