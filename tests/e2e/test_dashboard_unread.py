"""Unread badges and live conversations in headless Chromium on the real local stack: a badge
appears when the other party writes (the pollers, no reload) and clears when the conversation
is opened; an open conversation shows a new message as it arrives; axe-core finds no violation
on the pages with badges, at phone and desktop widths."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Stack
from tests.e2e.test_dashboard import expect, key_of, open_conversation, say, signed_in_page

pytestmark = pytest.mark.e2e

#: Seconds to wait for a poll to bring a change (the pollers ask every 5 s).
LIVE_WAIT_MS = 15_000


def unread_of(client: httpx.Client) -> int:
    response = client.get("/v1/me/unread")
    assert response.status_code == 200, response.text
    return int(response.json()["unreadCount"])


def test_badge_appears_when_the_other_party_writes_and_clears_when_opened(browser: Any, stack: Stack) -> None:
    owner_id, owner = stack.new_user("Una Unread")
    _, other = stack.new_user("Oskar Other")
    conversation_id = open_conversation(owner_id, owner, other)
    page = signed_in_page(browser, stack, key_of(owner))
    page.goto("/dashboard/conversations")
    card = page.get_by_role("listitem").filter(has=page.get_by_role("link", name="With Oskar Other"))
    expect(card).to_contain_text("0 messages")
    nav = page.get_by_role("navigation", name="Dashboard")
    expect(nav.get_by_role("link", name="Conversations", exact=True)).to_be_visible()

    say(other, conversation_id, "Are you free on Monday?")
    # No reload: the list's poller and the navigation's badge bring it.
    expect(card.get_by_text("1 unread")).to_be_visible(timeout=LIVE_WAIT_MS)
    expect(nav.get_by_role("link", name=re.compile(r"^Conversations\s*1 unread$"))).to_be_visible(timeout=LIVE_WAIT_MS)

    card.get_by_role("link", name="With Oskar Other").click()
    expect(page.get_by_role("list", name="Messages")).to_contain_text("Are you free on Monday?")
    assert unread_of(owner) == 0
    expect(nav.get_by_role("link", name="Conversations", exact=True)).to_be_visible(timeout=LIVE_WAIT_MS)
    page.get_by_role("link", name="← All conversations").click()
    expect(page.get_by_role("link", name="With Oskar Other")).to_be_visible()
    expect(page.get_by_text("1 unread")).to_have_count(0)
    page.context.close()


def test_an_open_conversation_shows_new_messages_as_they_arrive(browser: Any, stack: Stack) -> None:
    owner_id, owner = stack.new_user("Lia Live")
    _, other = stack.new_user("Pia Peer")
    conversation_id = open_conversation(owner_id, owner, other)
    say(other, conversation_id, "Hello there")
    page = signed_in_page(browser, stack, key_of(owner))
    page.goto(f"/dashboard/conversations/{conversation_id}")
    messages = page.get_by_role("list", name="Messages")
    expect(messages.get_by_role("listitem")).to_have_count(1)
    expect(page.locator("#messages-shown")).to_have_text("Showing 1–1 of 1 message.")
    say(other, conversation_id, "Second message, live")
    expect(messages.get_by_role("listitem")).to_have_count(2, timeout=LIVE_WAIT_MS)
    expect(messages.get_by_role("listitem").nth(1)).to_contain_text("Second message, live")
    expect(page.locator("#live-status")).to_have_text("1 new message.")  # a polite live region
    expect(page.locator("#messages-shown")).to_have_text("Showing 1–2 of 2 messages.")
    assert unread_of(owner) == 0  # shown as it arrived, so read
    page.context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_pages_with_unread_badges_have_no_axe_violations(browser: Any, stack: Stack, width: int) -> None:
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    owner_id, owner = stack.new_user(f"Axel Badge {width}")
    _, other = stack.new_user(f"Bea Badge {width}")
    conversation_id = open_conversation(owner_id, owner, other)
    say(other, conversation_id, "Unread for the badge")
    page = signed_in_page(browser, stack, key_of(owner), width=width)
    page.goto("/dashboard/conversations")
    expect(page.get_by_text("1 unread").first).to_be_visible()
    expect(page.locator("#unread-badge .badge")).to_be_visible()
    for where in ("conversation list with badges", "conversation page"):
        results = axe.run(page)
        assert results.violations_count == 0, f"{where} at {width}px:\n{results.generate_report()}"
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), where
        page.goto(f"/dashboard/conversations/{conversation_id}")
    page.context.close()
