"""Regenerate ``docs/dashboard-api-keys.png`` (a user's API keys, just after rolling one) and
``docs/dashboard-review-diff.png`` (the review page of an edited listing: the diff against its
approved version), 1280 px wide, and both again 390 px wide (``-390.png``), in headless Chromium
from a local stack started on free ports.

Run: ``.venv/bin/python scripts/dashboard_screenshot_listings.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.dashboard_screenshot import DOCS, WIDTHS, run, shoot  # noqa: E402
from tests.e2e.conftest import Stack, approve_listing  # noqa: E402
from tests.e2e.test_dashboard import key_of, signed_in_page  # noqa: E402


def listings_scene(stack: Stack, browser: Any) -> None:
    """A user creates and rolls keys; an approved listing is edited; screenshot the keys and the review page."""
    _, owner = stack.new_user("Sam Sample")
    key = key_of(owner)
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
    page = signed_in_page(browser, stack, key)
    page.goto("/dashboard/api-keys")
    for name in ("CI deploy", "Laptop"):
        page.get_by_label("Name").fill(name)
        page.get_by_role("button", name="Create API key").click()
    page.get_by_role("row").filter(has_text="CI deploy").get_by_role("link", name="Roll key").click()
    page.get_by_label("In 24 hours").check()
    page.get_by_role("button", name="Roll key").click()
    shoot(page, "dashboard-api-keys", "")
    shoot(signed_in_page(browser, stack, key, width=390), "dashboard-api-keys", "-390", "/dashboard/api-keys")
    for width, suffix in WIDTHS:
        admin = signed_in_page(browser, stack, stack.admin_key, width=width)
        admin.goto("/dashboard/admin/approvals")
        edited = admin.get_by_role("article").filter(has_text="Senior backend engineer")
        edited.screenshot(path=str(DOCS / f"dashboard-review-diff{suffix}.png"))


if __name__ == "__main__":
    sys.exit(run(listings_scene))
