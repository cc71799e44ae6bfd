"""The Dashboard's keys and listings pages end to end in headless Chromium on the session's stack: own API keys
(create, roll, revoke after its confirmation page), a listing made with "New listing" and
reviewed with its diff, webhooks bound from the listing page, a conversation's context; axe-core
finds no violation on any of the new pages."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Stack, approve_listing
from tests.e2e.test_dashboard import expect, key_of, signed_in_page

pytestmark = pytest.mark.e2e

axe_api = pytest.importorskip("axe_playwright_python.sync_playwright")
Browser = Any
PlaywrightPage = Any


def assert_accessible(page: PlaywrightPage) -> None:
    """axe-core (WCAG 2 A/AA and best-practice rules) finds 0 violations on the page as shown."""
    results = axe_api.Axe().run(page)
    assert results.violations_count == 0, results.generate_report()


def test_own_api_keys_create_roll_and_revoke(browser: Browser, stack: Stack) -> None:
    _, client = stack.new_user("Kim Keys")
    page = signed_in_page(browser, stack, key_of(client))
    page.get_by_role("navigation", name="Dashboard").get_by_role("link", name="API keys").click()
    page.get_by_label("Name").fill("CI deploy")
    page.get_by_role("button", name="Create API key").click()
    secret = page.get_by_label("New API key").inner_text()
    assert stack.client(secret).get("/v1/me").status_code == 200
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy API key").click()  # every one-time secret has its Copy button
    expect(page.locator("#copy-status")).to_have_text("Copied API key to the clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    assert_accessible(page)
    page.reload()  # the page reached by the POST: a reload shows the list, not the secret, and creates nothing
    expect(page.get_by_label("New API key")).to_have_count(0)
    expect(page.get_by_role("row").filter(has_text="CI deploy")).to_have_count(1)

    page.get_by_role("row").filter(has_text="CI deploy").get_by_role("link", name="Roll key").click()
    assert_accessible(page)
    page.get_by_label("In 1 hour").check()
    page.get_by_role("button", name="Roll key").click()
    rolled = page.get_by_label("New API key").inner_text()
    expect(page.get_by_role("status").first).to_contain_text("stops working in 1 hour")
    assert stack.client(secret).get("/v1/me").status_code == 200  # until its expiry
    assert stack.client(rolled).get("/v1/me").status_code == 200

    row = page.get_by_role("row").filter(has_text=rolled[:8])
    row.get_by_role("link", name="Revoke").click()
    assert_accessible(page)
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_contain_text("revoked")
    assert stack.client(rolled).get("/v1/me").status_code == 401  # the next request
    page.set_viewport_size({"width": 360, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 360  # the table scrolls in its card, not the page
    page.context.close()


def test_new_listing_review_diff_bound_webhook_and_conversation_context(browser: Browser, stack: Stack) -> None:
    _, owner = stack.new_user("Lena Lister")
    _, seeker = stack.new_user("Sam Seeker")
    hook = owner.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/hook", "name": "CRM hook"}).json()
    page = signed_in_page(browser, stack, key_of(owner))
    page.get_by_role("navigation", name="Dashboard").get_by_role("link", name="Listings").click()
    page.get_by_role("link", name="New listing").click()
    page.get_by_label("Category and role").select_option(label="Mentoring — Mentor")
    page.get_by_role("button", name="Continue").click()
    page.get_by_label("Title (required)").fill("Dashboard mentor Quillon")
    page.get_by_role("textbox", name="About (required)").fill("Weekly sessions")  # the rich-text editor
    page.get_by_role("group", name="Topics (required)").get_by_label("Career").check()
    page.get_by_label("Location").fill("Lisbon")  # geocoded on save
    page.get_by_label("Years of experience (required)").fill("12")
    assert_accessible(page)
    page.get_by_role("button", name="Create listing").click()
    expect(page.get_by_role("status")).to_contain_text("PENDING until an administrator approves it")
    listing_id = page.url.split("/listings/")[1].split("?")[0]
    assert owner.get(f"/v1/listings/{listing_id}").json()["status"] == "PENDING"
    approve_listing(stack, listing_id)

    page.reload()
    page.get_by_label("CRM hook").check()
    page.get_by_role("button", name="Save webhooks").click()
    expect(page.get_by_role("status")).to_contain_text("status is unchanged")
    assert_accessible(page)
    stored = owner.get(f"/v1/listings/{listing_id}").json()
    assert (stored["status"], stored["webhookIds"]) == ("ACTIVE", [hook["id"]])

    sent = seeker.post("/v1/match-requests", json={"listingId": listing_id, "message": "Can you mentor me?", "channels": ["telegram"]})
    assert sent.status_code == 201, sent.text
    accepted = owner.patch(f"/v1/match-requests/{sent.json()['requestId']}/status", json={"status": "ACCEPTED"})
    page.goto(f"/dashboard/conversations/{accepted.json()['conversationId']}")
    about = page.get_by_role("region", name="About")
    expect(about).to_contain_text("Dashboard mentor Quillon")
    expect(about).to_contain_text("Can you mentor me?")
    expect(about).to_contain_text("@samseeker")
    assert_accessible(page)

    page.goto(f"/dashboard/listings/{listing_id}/edit")
    page.get_by_label("Title (required)").fill("Dashboard mentor Quillon II")
    page.get_by_role("button", name="Save listing").click()
    expect(page.get_by_role("status")).to_contain_text("PENDING review again")
    admin = signed_in_page(browser, stack, stack.admin_key)
    admin.goto("/dashboard/admin/approvals")
    card = admin.get_by_role("article").filter(has=admin.get_by_role("heading", name="Dashboard mentor Quillon II"))
    diff = card.get_by_role("table", name="Changed since the last approved version")
    expect(diff.get_by_role("row").filter(has_text="Title")).to_contain_text("Dashboard mentor Quillon")
    expect(card).to_contain_text("Lena Lister")
    assert_accessible(admin)
    page.context.close()
    admin.context.close()
