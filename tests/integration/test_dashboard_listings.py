"""Dashboard listings over in-process moto: "New listing" from the category's
fields (PENDING, geocoded, reviewable), "Edit", binding webhooks (status kept, and the next
``match_request.received`` reaches the bound webhook), the review page's diff against the last
approved version, and a conversation's context (subject, request message, handles once accepted)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, create_listing, get_listing
from tests.integration.request_helpers import match_request
from tests.integration.test_dashboard import Browser, make_webhook, signed_in
from tests.integration.webhook_helpers import fast_delivery_settings, receiver_factory

NEW_JOB = {"meta.title": "Platform engineer", "meta.description": "<p>Run our AWS</p>", "meta.location": "Munich",
           "meta.employmentType": "full_time", "meta.skills": ["python", "aws"], "meta.remote": ""}


def _new_listing(b: Browser, webhook_ids: list[str] | None = None, **fields: Any) -> Any:
    form = b.get("/dashboard/listings/new?kind=jobs:hiring")
    assert form.status_code == 200
    body = {"csrf_token": b.csrf("/dashboard/listings"), "category": "jobs", "role": "hiring", "channels": ["telegram"],
            "webhooks": webhook_ids or [], **NEW_JOB, **fields}
    return b.post("/dashboard/listings/new", body)


def _listing_id(response: Any) -> str:
    assert response.status_code == 303, response.text[:2000]
    match = re.fullmatch(r"/dashboard/listings/(lst_[A-Za-z0-9]+)\?done=created", response.headers["Location"])
    assert match
    return match.group(1)


def test_the_form_is_generated_from_the_category_fields(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    assert 'href="/dashboard/listings/new">New listing</a>' in b.get("/dashboard/listings").text
    chooser = b.get("/dashboard/listings/new")
    assert '<option value="jobs:hiring">' in chooser.text
    form = b.get("/dashboard/listings/new?kind=jobs:hiring").text
    assert re.search(r'<label for="meta-title">Title \(required\)</label>\s*<input id="meta-title" name="meta.title" type="text"', form)
    assert re.search(r'<textarea id="meta-description" name="meta.description"[^>]* required', form)  # rich text, required for hiring
    assert 'name="meta.skills" value="python"' in form  # multiselect as checkboxes
    assert "its coordinates are looked up when you save" in form
    assert "meta.location_lat" not in form  # internal, never a control
    assert "@alice" in form  # the user's connected channels with their handles
    assert b.get("/dashboard/listings/new?kind=jobs:nobody").status_code == 404


def test_a_listing_created_in_the_dashboard_is_pending_geocoded_and_reviewable(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    hook = make_webhook(api, alice)
    b = signed_in(api, alice)
    listing_id = _listing_id(_new_listing(b, [hook["id"]]))
    stored = get_listing(api, alice, listing_id).json
    assert (stored["status"], stored["webhookIds"], stored["channels"]) == ("PENDING", [hook["id"]], ["telegram"])
    assert stored["meta"]["skills"] == "python,aws"
    assert float(stored["meta"]["location_lat"]) == pytest.approx(48.14, abs=0.05)  # geocoded on save
    assert "remote" not in stored["meta"]  # a blank optional field is left out
    shown = b.get(f"/dashboard/listings/{listing_id}?done=created").text
    assert "PENDING until an administrator approves it" in shown
    runner.drain()
    review = signed_in(api, admin).get("/dashboard/admin/approvals").text
    assert f'id="ap-{listing_id}"' in review
    assert "New listing: never approved before." in review


def test_a_refused_form_is_shown_again_with_the_error_at_its_field(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    response = _new_listing(b, **{"meta.description": "", "meta.title": "Kept title"})
    assert response.status_code == 400
    assert re.search(r'<textarea id="meta-description"[^>]*aria-describedby="meta-description-hint meta-description-error"'
                     r'[^>]*aria-invalid="true"', response.text)
    assert 'id="meta-description-error"' in response.text
    assert 'value="Kept title"' in response.text  # what was typed is kept
    assert api.call("GET", "/v1/listings/mine", alice.key).json["total"] == 0


def test_a_refused_form_speaks_the_forms_words_not_the_apis(api: Api, alice: User) -> None:
    """An unknown place and a number typed with a comma, then a webhook deleted meanwhile: each error
    under its control in words a person can act on (no ``meta.<key>_lat`` to give, no encoding)."""
    hook = make_webhook(api, alice)
    api.call("DELETE", f"/v1/webhooks/{hook['id']}", alice.key)
    b = signed_in(api, alice)
    response = _new_listing(b, [hook["id"]], **{"meta.location": "Qwxzvbn Plmkj", "meta.salary": "85,000"})
    assert response.status_code == 400
    page = response.text
    assert '<p id="meta-location-error" class="error">This place could not be found: enter a city, or a street address' in page
    assert '<p id="meta-salary-error" class="error">Enter a number, such as 85000 or 12.5.</p>' in page
    assert "<p>The listing was not saved: check the fields marked below.</p>" in page
    assert "_lat" not in page
    assert "decimal string" not in page
    unbound = _new_listing(b, [hook["id"]])  # the content is right now: the deleted webhook is refused under its fieldset
    assert unbound.status_code == 400
    assert '<p id="webhooks-error" class="error">' in unbound.text
    assert api.call("GET", "/v1/listings/mine", alice.key).json["total"] == 0


def test_binding_a_webhook_keeps_the_listing_active_and_the_next_request_reaches_it(
    api: Api, alice: User, bob: User, admin: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_delivery_settings(monkeypatch)
    factory = receiver_factory()
    make = next(factory)
    try:
        receiver = make("ok")
        hook = make_webhook(api, alice, receiver.url)
        listing = create_listing(api, alice)
        activate(api, admin, runner, listing["id"])
        b = signed_in(api, alice)
        page = b.get(f"/dashboard/listings/{listing['id']}").text
        assert f'name="webhooks" value="{hook["id"]}"' in page
        saved = b.post(f"/dashboard/listings/{listing['id']}/webhooks", {"csrf_token": b.csrf(), "webhooks": [hook["id"]]})
        assert saved.status_code == 303
        after = get_listing(api, alice, listing["id"]).json
        assert (after["status"], after["webhookIds"]) == ("ACTIVE", [hook["id"]])
        assert f'value="{hook["id"]}" checked' in b.get(f"/dashboard/listings/{listing['id']}").text
        assert match_request(api, bob, listing["id"], ["email"], "Bound?").status_code == 201
        runner.drain()
        received = [json.loads(r.body) for r in receiver.requests]
        assert [(e["event"], e["data"]["message"]) for e in received] == [("match_request.received", "Bound?")]
    finally:
        for _ in factory:
            pass


def _form_version(b: Browser, listing_id: str) -> str:
    """The hidden ``version`` of the listing's edit form, as a browser has it when it saves."""
    found = re.search(r'name="version" value="(\d+)"', b.get(f"/dashboard/listings/{listing_id}/edit").text)
    assert found is not None
    return found[1]


def test_edit_of_the_content_returns_to_review_and_the_review_shows_the_diff(
    api: Api, alice: User, admin: User, runner: Any
) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    b = signed_in(api, alice)
    form = b.get(f"/dashboard/listings/{listing['id']}/edit").text
    assert 'value="Backend engineer"' in form
    # channels only: status kept
    kept = b.post(f"/dashboard/listings/{listing['id']}/edit", {
        "csrf_token": b.csrf(), "version": _form_version(b, listing["id"]),
        "meta.title": "Backend engineer", "meta.description": "<p>Build APIs</p>",
        "meta.location": "Berlin", "meta.employmentType": "full_time", "channels": ["telegram", "email"]})
    assert kept.headers["Location"].endswith("?done=saved")
    assert get_listing(api, alice, listing["id"]).json["status"] == "ACTIVE"
    changed = b.post(f"/dashboard/listings/{listing['id']}/edit", {
        "csrf_token": b.csrf(), "version": _form_version(b, listing["id"]),
        "meta.title": "Staff engineer", "meta.description": "<p>Build APIs</p>",
        "meta.location": "Munich", "meta.employmentType": "full_time", "meta.remote": "remote", "channels": ["telegram"]})
    assert changed.headers["Location"].endswith("?done=resubmitted")
    assert get_listing(api, alice, listing["id"]).json["status"] == "PENDING"
    runner.drain()
    review = signed_in(api, admin).get("/dashboard/admin/approvals").text
    card = review[review.index(f'id="ap-{listing["id"]}"'):]
    diff = card[card.index("Changed since the last approved version"):card.index("</table>")]
    rows = re.findall(r'<th scope="row">([^<]+)</th>\s*<td class="rich">(.*?)</td>\s*<td class="rich">(.*?)</td>', diff, re.S)
    assert rows == [
        ("Title", "<del>Backend engineer</del>", "<ins>Staff engineer</ins>"),
        ("Location", "<del>Berlin</del>", "<ins>Munich</ins>"),
        ("Work model", "<em>(absent)</em>", "<ins>Remote</ins>"),
    ]
    assert "location_lat" not in card
    assert "location_lng" not in card
    assert "Alice" in card  # the owner


def test_a_form_opened_before_another_save_does_not_undo_it(api: Api, alice: User) -> None:
    """Two tabs open the edit form; the first saves a new title; the second, filled from the older
    version, changes only the salary: it is shown again (409) with what was typed and the current
    version, and nothing is saved, so the first tab's title stays. Saving it again applies it."""
    listing = create_listing(api, alice, meta={"salary": "80000"})
    b = signed_in(api, alice)
    fields = {"meta.title": "Backend engineer", "meta.description": "<p>Build APIs</p>", "meta.location": "Berlin",
              "meta.employmentType": "full_time", "meta.salary": "80000", "channels": ["telegram"]}
    first, second = _form_version(b, listing["id"]), _form_version(b, listing["id"])
    saved = b.post(f"/dashboard/listings/{listing['id']}/edit",
                   {"csrf_token": b.csrf(), "version": first, **fields, "meta.title": "Title from tab A"})
    assert saved.status_code == 303
    stale = b.post(f"/dashboard/listings/{listing['id']}/edit",
                   {"csrf_token": b.csrf(), "version": second, **fields, "meta.salary": "90000"})
    assert stale.status_code == 409
    assert "The listing changed after this form was opened" in stale.text
    assert 'value="90000"' in stale.text  # what was typed is kept
    current = re.search(r'name="version" value="(\d+)"', stale.text)
    assert current is not None
    assert current[1] == _form_version(b, listing["id"]) != second
    stored = get_listing(api, alice, listing["id"]).json
    assert (stored["title"], stored["meta"]["salary"]) == ("Title from tab A", "80000")  # nothing undone, nothing saved
    again = b.post(f"/dashboard/listings/{listing['id']}/edit",
                   {"csrf_token": b.csrf(), "version": current[1], **fields, "meta.title": "Title from tab A", "meta.salary": "90000"})
    assert again.status_code == 303
    assert get_listing(api, alice, listing["id"]).json["meta"]["salary"] == "90000"


def test_a_refused_checkbox_group_marks_its_boxes_invalid(api: Api, alice: User) -> None:
    """A required multiselect left empty: its boxes carry aria-invalid, so focus lands on the first
    (dashboard.js focuses the first invalid field) and a screen reader reads the error with them."""
    b = signed_in(api, alice)
    refused = b.post("/dashboard/listings/new", {"csrf_token": b.csrf("/dashboard/listings"), "category": "jobs", "role": "seeking",
                                                 "channels": ["telegram"], "meta.title": "Looking for work"})
    assert refused.status_code == 400
    assert re.search(r'<input type="checkbox" name="meta\.skills" value="\w+" aria-invalid="true">', refused.text)
    assert 'id="meta-skills-error"' in refused.text


def test_saving_an_unchanged_form_keeps_the_listing_active_and_says_saved(api: Api, alice: User, admin: User, runner: Any) -> None:
    """Skills stored as ``aws,python`` come back checked and post in option order (``python``, ``aws``),
    the channels in the form's: the same sets, so nothing is sent, and the notice does not say the
    listing went back to review."""
    listing = create_listing(api, alice, meta={"skills": "aws,python"}, channels=["telegram", "email"])
    activate(api, admin, runner, listing["id"])
    before = get_listing(api, alice, listing["id"]).json
    b = signed_in(api, alice)
    assert 'name="meta.skills" value="aws" checked' in b.get(f"/dashboard/listings/{listing['id']}/edit").text
    saved = b.post(f"/dashboard/listings/{listing['id']}/edit", {
        "csrf_token": b.csrf(), "version": _form_version(b, listing["id"]),
        "meta.title": "Backend engineer", "meta.description": "<p>Build APIs</p>",
        "meta.location": "Berlin", "meta.employmentType": "full_time", "meta.skills": ["python", "aws"],
        "channels": ["email", "telegram"]})  # the form's order
    assert saved.headers["Location"].endswith("?done=saved")
    assert get_listing(api, alice, listing["id"]).json == before  # nothing sent: not even the channels' order or updatedAt


def test_a_form_with_no_channel_says_so_in_the_forms_words_and_another_users_listing_is_404(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    fields = {"meta.title": "Backend engineer", "meta.description": "<p>Build APIs</p>", "meta.location": "Berlin",
              "meta.employmentType": "full_time"}
    b = signed_in(api, alice)
    refused = b.post(f"/dashboard/listings/{listing['id']}/edit", {"csrf_token": b.csrf(), "version": _form_version(b, listing["id"]),
                                                                   **fields})
    assert refused.status_code == 400
    assert '<p id="channels-error" class="error">Choose at least one.</p>' in refused.text
    assert 'name="channels" value="telegram" aria-invalid="true"' in refused.text
    theirs = signed_in(api, bob)
    assert theirs.post(f"/dashboard/listings/{listing['id']}/edit", {"csrf_token": theirs.csrf(), **fields}).status_code == 404


def test_a_conversation_shows_its_subject_the_request_message_and_the_handles(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    listing = create_listing(api, alice, channels=["email"])
    activate(api, admin, runner, listing["id"])
    request = match_request(api, bob, listing["id"], ["telegram"], "I have 5 years of Go").json
    owner = signed_in(api, alice)
    accepted = owner.post(f"/dashboard/requests/{request['requestId']}/accept", {"csrf_token": owner.csrf()})
    assert accepted.status_code == 303
    conversation_id = api.call("GET", f"/v1/match-requests/{request['requestId']}", bob.key).json["conversationId"]
    mine = owner.get(f"/dashboard/conversations/{conversation_id}").text
    assert "Backend engineer" in mine
    assert "I have 5 years of Go" in mine
    assert "Telegram: <span class=\"mono\">@bob</span>" in mine  # the channel Bob offered
    assert "bob@example.org" not in mine  # not one he did not offer
    card = owner.get(f"/dashboard/listings/{listing['id']}").text  # the accepted request's card shows handles too
    assert "Telegram: <span class=\"mono\">@bob</span>" in card
    theirs = signed_in(api, bob).get(f"/dashboard/conversations/{conversation_id}").text
    assert "Email: <span class=\"mono\">alice@example.org</span>" in theirs  # the listing's channel
    assert "@alice" not in theirs


def test_another_users_listing_cannot_be_edited_or_rebound(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    b = signed_in(api, bob)
    assert b.get(f"/dashboard/listings/{listing['id']}/edit").status_code == 404
    hook = make_webhook(api, bob)
    refused = b.post(f"/dashboard/listings/{listing['id']}/webhooks", {"csrf_token": b.csrf(), "webhooks": [hook["id"]]})
    assert refused.status_code in (403, 404)
    edited = b.post(f"/dashboard/listings/{listing['id']}/edit",
                    {"csrf_token": b.csrf(), "meta.title": "Mine now", "channels": ["telegram"]})
    assert edited.status_code in (403, 404)
    after = get_listing(api, alice, listing["id"]).json
    assert (after["title"], after["webhookIds"], after["status"]) == (listing["title"], [], "ACTIVE")
