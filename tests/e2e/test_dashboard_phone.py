"""Every Dashboard page at phone widths (320 and 390 px) in headless Chromium: the page never
scrolls sideways (``scrollWidth <= innerWidth``; a wide table scrolls inside its own region), and
axe-core finds no violation at 390 px (the 1280 px runs are in test_dashboard.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.conftest import Stack, approve_listing
from tests.e2e.test_dashboard import _pending_listing, expect, key_of, open_conversation, say, signed_in_page

pytestmark = pytest.mark.e2e

WIDTHS = (320, 390)


def _overflow(page: Any) -> list[str]:
    """Why the page scrolls sideways (empty: it does not): ``scrollWidth`` against ``innerWidth``, then
    the elements reaching past the viewport, by their box or by the content overflowing it (an ``<h1>``
    of the viewport's width whose unbroken title runs on past its edge)."""
    return list(page.evaluate("""() => {
        const limit = window.innerWidth, width = document.documentElement.scrollWidth;
        if (width <= limit) return [];
        const scrolls = e => ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName) || getComputedStyle(e).overflowX !== 'visible';
        const right = e => Math.max(e.getBoundingClientRect().right, scrolls(e) ? 0 : e.getBoundingClientRect().left + e.scrollWidth);
        const culprits = [...document.querySelectorAll('body *')]
            .filter(e => right(e) > limit + 0.5)
            .slice(0, 8).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + e.className
                              + ' right=' + Math.round(right(e)));
        return ['scrollWidth ' + width + ' > innerWidth ' + limit, ...culprits];
    }"""))


#: The longest unbroken values a user can give (listing title 140, webhook name 100, display name 80
#: characters): headings and every other place showing them must wrap them, not widen the page.
LONG_TITLE = "X" * 140
LONG_HOOK_NAME = "L" * 100
LONG_DISPLAY_NAME = "R" * 80


def _pages(stack: Stack) -> tuple[list[str], list[str], str]:
    owner_id, owner = stack.new_user("Phoebe Phone")
    _, other = stack.new_user(LONG_DISPLAY_NAME, channels={"telegram": "@rafael"})
    long_url = "http://127.0.0.1:9/a/very/long/path/to/the/receiver/of/this/webhook"
    hook = owner.post("/v1/webhooks", json={"url": long_url, "name": "Phone hook"})
    assert hook.status_code == 201, hook.text
    hook_id = hook.json()["id"]
    long_hook = owner.post("/v1/webhooks", json={"url": long_url, "name": LONG_HOOK_NAME})
    assert long_hook.status_code == 201, long_hook.text
    long_hook_id = long_hook.json()["id"]
    listing_id = _pending_listing(owner, "A listing with a rather long title to wrap on a phone")
    approve_listing(stack, listing_id)
    long_listing_id = _pending_listing(owner, LONG_TITLE)
    approve_listing(stack, long_listing_id)
    _pending_listing(owner, "Y" * 140)  # left pending: the approvals page shows its title
    assert other.post("/v1/match-requests", json={"listingId": long_listing_id, "message": "Hello", "channels": ["telegram"]}
                      ).status_code == 201
    sent = other.post("/v1/match-requests", json={"listingId": listing_id, "message": "I would like to join", "channels": ["telegram"]})
    assert sent.status_code == 201, sent.text
    conversation_id = open_conversation(owner_id, owner, other)
    say(other, conversation_id, "A message with a long unbroken word: " + "x" * 80)
    pages = [
        "/dashboard/webhooks", f"/dashboard/webhooks/{hook_id}", f"/dashboard/webhooks/{hook_id}?outcome=failed",
        f"/dashboard/webhooks/{hook_id}/rotate", f"/dashboard/webhooks/{hook_id}/delete", "/dashboard/event-catalog",
        "/dashboard/listings", "/dashboard/listings/new", f"/dashboard/listings/{listing_id}",
        f"/dashboard/listings/{listing_id}/edit", f"/dashboard/listings/{listing_id}/delete",
        "/dashboard/conversations", f"/dashboard/conversations/{conversation_id}", "/dashboard/api-keys",
        "/dashboard/account", "/dashboard/account/erased", "/dashboard/nowhere",
        f"/dashboard/webhooks/{long_hook_id}", f"/dashboard/webhooks/{long_hook_id}/rotate",
        f"/dashboard/webhooks/{long_hook_id}/delete", f"/dashboard/listings/{long_listing_id}",
        f"/dashboard/listings/{long_listing_id}/edit", f"/dashboard/listings/{long_listing_id}/delete",
    ]
    admin_pages = ["/dashboard/admin/approvals", "/dashboard/admin/users"]
    return pages, admin_pages, key_of(owner)


def _visit(page: Any, paths: list[str], width: int, axe: Any, found: dict[str, list[str]]) -> list[str]:
    """Open each of ``paths``: what overflows sideways goes into ``found``; at 390 px, axe finds no
    accessibility violation. Returns the paths visited."""
    for path in paths:
        page.goto(path)
        if over := _overflow(page):
            found[path] = over
        if width == 390:
            results = axe.run(page)
            assert results.violations_count == 0, f"{path} at {width}px:\n{results.generate_report()}"
    return paths


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_a_phone_without_sideways_scrolling(browser: Any, stack: Stack, width: int) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    pages, admin_pages, key = _pages(stack)
    page = signed_in_page(browser, stack, key, width=width)
    page.goto("/dashboard/api-keys")
    page.get_by_label("Name").fill("Phone key with a long name")
    page.get_by_role("button", name="Create API key").click()
    expect(page.get_by_label("New API key")).to_be_visible()
    found: dict[str, list[str]] = {}
    checked = ["/dashboard/api-keys (new key shown)"]
    if over := _overflow(page):
        found[checked[0]] = over
    roll = page.get_by_role("link", name=re.compile(r"^Roll key Phone key")).get_attribute("href")
    revoke = page.get_by_role("link", name=re.compile(r"^Revoke Phone key")).get_attribute("href")
    checked += _visit(page, [*pages, str(roll), str(revoke)], width, axe, found)
    page.context.close()
    admin = signed_in_page(browser, stack, stack.admin_key, width=width)
    checked += _visit(admin, [*admin_pages, "/dashboard/sign-in"], width, axe, found)
    admin.context.close()
    assert len(checked) >= 20
    assert not found, "\n".join(f"{path}: {over}" for path, over in found.items())
