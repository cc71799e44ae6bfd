"""Blocking, reporting and moderation end to end on the real local stack: A blocks B in the
Dashboard (headless Chromium), B's next request and message are refused, B reports A's listing,
the administrator hides it, and the audit log shows the administrator's actions with their actor."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Stack, approve_listing
from tests.e2e.test_dashboard import key_of, open_conversation, signed_in_page
from tests.listing_bodies import listing_body

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect


def test_block_report_hide_and_audit(stack: Stack, browser: Any) -> None:
    alice_id, alice = stack.new_user("Alice Block")
    _, bob = stack.new_user("Bob Blocked")
    admin = stack.admin()
    admin_id = admin.get("/v1/me").json()["userId"]
    created = alice.post("/v1/listings", json=listing_body())
    assert created.status_code == 201, created.text
    listing_id = created.json()["id"]
    approve_listing(stack, listing_id)
    conversation = open_conversation(alice_id, alice, bob)

    page = signed_in_page(browser, stack, key_of(alice))
    page.goto(f"/dashboard/conversations/{conversation}")
    page.get_by_role("button", name="Block Bob Blocked").click()
    expect(page.get_by_role("heading", name="Blocks", exact=True)).to_be_visible()
    expect(page.get_by_role("list", name="Blocked users")).to_contain_text("Bob Blocked")
    page.context.close()

    request = bob.post("/v1/match-requests", json={"listingId": listing_id, "message": "Again?", "channels": ["telegram"]})
    assert (request.status_code, request.json()["code"]) == (403, "BLOCKED")
    message = bob.post(f"/v1/conversations/{conversation}/messages", json={"content": "Please answer"})
    assert (message.status_code, message.json()["code"]) == (403, "BLOCKED")
    assert bob.get(f"/v1/listings/{listing_id}").status_code == 404

    report = bob.post("/v1/reports", json={"subjectType": "listing", "subjectId": listing_id, "reason": "harassment"})
    assert report.status_code == 201, report.text
    report_id = report.json()["reportId"]
    queued = admin.get("/v1/admin/reports?status=open&subjectType=listing").json()["reports"]
    assert report_id in [r["reportId"] for r in queued]
    decided = admin.post(f"/v1/admin/reports/{report_id}/decision", json={"decision": "hide_listing", "reason": "Abuse"})
    assert decided.status_code == 200, decided.text
    _, carol = stack.new_user("Carol Viewer")
    assert carol.get(f"/v1/listings/{listing_id}").status_code == 404  # hidden for everyone at once
    assert alice.get(f"/v1/listings/{listing_id}").json()["status"] == "REJECTED"

    approved = admin.get(f"/v1/admin/audit-log?target={listing_id}").json()["entries"]
    assert [(e["action"], e["actorId"]) for e in approved] == [("listing.approve", admin_id)]
    hidden = admin.get(f"/v1/admin/audit-log?target={report_id}").json()["entries"]
    assert [(e["action"], e["actorId"], e["details"]["listingId"]) for e in hidden] == [
        ("report.hide_listing", admin_id, listing_id)
    ]


def test_erasure_in_the_dashboard_leaves_nothing_findable_and_the_other_party_keeps_the_conversation(
    stack: Stack, browser: Any
) -> None:
    from tests.e2e.test_dashboard import say
    from tests.waiting import wait_until

    erin_id, erin = stack.new_user("Erin Erased")
    frank_id, frank = stack.new_user("Frank Stays")
    admin = stack.admin()
    word = "quixoticarchivist"
    created = erin.post("/v1/listings", json=listing_body(meta={"title": f"Senior {word} wanted"}))
    assert created.status_code == 201, created.text
    listing_id = created.json()["id"]
    approve_listing(stack, listing_id)
    hook = erin.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/hook", "events": ["message.new"]})
    assert hook.status_code == 201, hook.text
    conversation = open_conversation(erin_id, erin, frank)
    say(erin, conversation, "Hello Frank")
    say(frank, conversation, "Hello Erin")

    def found(query: str) -> set[str]:
        response = frank.get(f"/v1/listings/search?{query}")
        assert response.status_code == 200, response.text
        return {item["id"] for item in response.json()["listings"]}

    wait_until(lambda: listing_id in found(f"q={word}"), timeout_seconds=30)

    page = signed_in_page(browser, stack, key_of(erin))
    page.get_by_role("link", name="Account").click()
    page.get_by_label("Type your display name").fill("erin erased")  # not the exact name: refused
    page.get_by_role("button", name="Erase my account").click()
    expect(page.get_by_role("alert")).to_contain_text("nothing was erased")
    page.get_by_label("Type your display name").fill("Erin Erased")
    page.get_by_role("button", name="Erase my account").click()
    expect(page.get_by_role("heading", name="Your account is being erased")).to_be_visible()
    page.context.close()
    assert erin.get("/v1/me").status_code == 401

    def erased() -> bool:
        return bool(admin.get(f"/v1/admin/erasures/{erin_id}").json().get("status") == "completed")

    wait_until(erased, timeout_seconds=60, interval=0.25)
    wait_until(lambda: listing_id not in found(f"q={word}"), timeout_seconds=30)
    assert listing_id not in found("category=jobs&pageSize=100")
    assert frank.get(f"/v1/listings/{listing_id}").status_code == 404
    assert frank.get(f"/v1/profiles/{erin_id}").status_code == 404
    wait_until(lambda: erin_id not in {p["userId"] for p in frank.get("/v1/profiles/search?q=Erin").json()["profiles"]},
               timeout_seconds=30)
    messages = frank.get(f"/v1/conversations/{conversation}/messages").json()["messages"]
    assert [(m["senderName"], m["content"]) for m in messages] == [("Deleted user", "Hello Frank"), ("Frank Stays", "Hello Erin")]
    assert frank.get(f"/v1/conversations/{conversation}").json()["otherLeft"] is True
    assert admin.get(f"/v1/admin/users?id={erin_id}").json()["users"] == []
    assert admin.get(f"/v1/admin/users?id={frank_id}").json()["users"][0]["displayName"] == "Frank Stays"
