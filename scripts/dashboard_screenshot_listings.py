"""Regenerate ``docs/dashboard-api-keys.png`` (a user's API keys, just after rolling one) and
``docs/dashboard-review-diff.png`` (the review page of an edited listing: the diff against its
approved version), 1280 px wide, and both again 390 px wide (``-390.png``), in headless Chromium
from a local stack started on free ports.

Run: ``.venv/bin/python scripts/dashboard_screenshot_listings.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM, LAUNCH_ARGS, Stack, approve_listing, start_stack, stop_stack  # noqa: E402

KEYS_OUT = ROOT / "docs" / "dashboard-api-keys.png"
REVIEW_OUT = ROOT / "docs" / "dashboard-review-diff.png"


def _sign_in(browser: object, stack: Stack, key: str, width: int = 1280) -> object:
    page = browser.new_context(viewport={"width": width, "height": 900}, base_url=stack.base_url).new_page()  # type: ignore[attr-defined]
    page.goto("/dashboard/sign-in")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Webhooks", exact=True).wait_for()
    return page


def main() -> int:
    """Start a stack; a user creates and rolls keys; an approved listing is edited; screenshot both pages."""
    stack = start_stack()
    try:
        _, owner = stack.new_user("Sam Sample")
        key = str(owner.headers["authorization"]).split(" ", 1)[1]
        created = owner.post("/v1/listings", json={
            "categoryKey": "jobs", "roleKey": "hiring", "channels": ["telegram"],
            "meta": {"title": "Backend engineer", "description": "<p>Build APIs</p>", "location": "Berlin",
                     "employmentType": "full_time"}})
        assert created.status_code == 201, created.text
        listing_id = created.json()["id"]
        approve_listing(stack, listing_id)
        patched = owner.patch(f"/v1/listings/{listing_id}", json={"meta": {"title": "Senior backend engineer",
                                                                           "location": "Munich", "remote": "hybrid"}})
        assert patched.status_code == 200, patched.text
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            page = _sign_in(browser, stack, key)
            page.goto("/dashboard/api-keys")  # type: ignore[attr-defined]
            for name in ("CI deploy", "Laptop"):
                page.get_by_label("Name").fill(name)  # type: ignore[attr-defined]
                page.get_by_role("button", name="Create API key").click()  # type: ignore[attr-defined]
            page.get_by_role("row").filter(has_text="CI deploy").get_by_role("link", name="Roll key").click()  # type: ignore[attr-defined]
            page.get_by_label("In 24 hours").check()  # type: ignore[attr-defined]
            page.get_by_role("button", name="Roll key").click()  # type: ignore[attr-defined]
            page.screenshot(path=str(KEYS_OUT), full_page=True)  # type: ignore[attr-defined]
            phone = _sign_in(browser, stack, key, width=390)
            phone.goto("/dashboard/api-keys")  # type: ignore[attr-defined]
            phone.screenshot(path=str(KEYS_OUT.with_name("dashboard-api-keys-390.png")), full_page=True)  # type: ignore[attr-defined]
            for width, out in ((1280, REVIEW_OUT), (390, REVIEW_OUT.with_name("dashboard-review-diff-390.png"))):
                admin = _sign_in(browser, stack, stack.admin_key, width=width)
                admin.goto("/dashboard/admin/approvals")  # type: ignore[attr-defined]
                admin.get_by_role("article").filter(has_text="Senior backend engineer").screenshot(path=str(out))  # type: ignore[attr-defined]
            browser.close()
    finally:
        stop_stack(stack)
    print(f"wrote {KEYS_OUT} and {REVIEW_OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
