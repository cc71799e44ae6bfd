"""No existence oracle: another user's non-public resource answers exactly as an
unknown id does, on every API route and Dashboard page or action that takes an id.

Alice owns a PENDING, a REJECTED and a PAUSED listing, a webhook and a saved search, and is party
to a request and its conversation with Carol (and the recipient of its events). Bob, a stranger, calls every route with each of
those ids and with an unknown id of the same shape: both answers must be 404 with the same body
(the id aside). Routes whose ids name public things (profiles, categories; a user to block), the
caller's own things (channel keys) or admin-only ones (approvals, reports) are listed in
``NOT_OWNED`` and walked by no one.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import app
from chalicelib.edge import http
from chalicelib.kernel import clock
from chalicelib.listings import repository as listings
from chalicelib.listings.status import Transition
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import create_listing
from tests.integration.request_helpers import accepted_conversation, active_listing
from tests.integration.test_dashboard import Browser, signed_in
from tests.integration.webhook_helpers import create_webhook

assert app.app  # every route registered

#: Path parameters naming resources with an owner (or parties).
OWNED = ("listingId", "requestId", "conversationId", "webhookId", "savedSearchId", "eventId")
#: Path parameters that name nothing owned by another user: public, the caller's own, or admin-only.
NOT_OWNED = ("userId", "key", "approvalId", "name", "token", "reportId")

#: A valid body per API route that takes one, so the request reaches the ownership check.
API_BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", "/v1/listings/{listingId}"): {"meta": {"title": "Changed title"}},
    ("PATCH", "/v1/listings/{listingId}/status"): {"status": "ACTIVE"},
    ("PATCH", "/v1/match-requests/{requestId}/status"): {"status": "ACCEPTED"},
    ("POST", "/v1/conversations/{conversationId}/messages"): {"content": "Hello"},
    ("POST", "/v1/conversations/{conversationId}/read"): {},
}
#: Form fields per Dashboard action (the CSRF token is added).
DASHBOARD_FORMS: dict[str, dict[str, str]] = {
    "/dashboard/webhooks/{webhookId}": {"url": "http://127.0.0.1:9/other", "name": "Renamed"},
    "/dashboard/conversations/{conversationId}/messages": {"content": "Hello"},
    "/dashboard/webhooks/{webhookId}/redeliver": {"event_id": "evt_1"},
}


def _other_id(real: str) -> str:
    """An id of the same shape naming nothing: the last character changed within its class."""
    last = real[-1]
    swap = "0" if last != "0" else "1"
    if last.isalpha():
        swap = "A" if last != "A" else "B"
        swap = swap if last.isupper() else swap.lower()
    return real[:-1] + swap


@pytest.fixture
def alices(api: Api, alice: User) -> dict[str, list[str]]:
    """Alice's non-public resources by path parameter name."""
    carol = make_user("Carol")
    pending = create_listing(api, alice)["id"]
    rejected = create_listing(api, alice)["id"]
    listings.transition(listings.get(rejected) or {}, Transition.REJECT, clock.iso())
    paused = active_listing(api, alice)["id"]
    assert api.call("PATCH", f"/v1/listings/{paused}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    request, conversation_id = accepted_conversation(api, alice, carol)
    webhook = create_webhook(api, alice, "http://127.0.0.1:9/hook")
    saved = api.call("POST", "/v1/saved-searches", alice.key, {"query": {"q": "engineer"}})
    assert saved.status_code == 201, saved.json
    events = api.call("GET", "/v1/events", alice.key).json["events"]  # the request's events, whose recipient is alice
    return {
        "listingId": [pending, rejected, paused], "requestId": [request["requestId"]],
        "conversationId": [conversation_id], "webhookId": [webhook["id"]], "savedSearchId": [saved.json["savedSearchId"]],
        "eventId": [events[0]["id"]],
    }


def _fill(template: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: ids.get(m.group(1), "tok_1"), template)


def _walks(params: list[str], alices: dict[str, list[str]]) -> list[tuple[dict[str, str], dict[str, str], str]]:
    """(alice's ids, unknown ids, the id that differs) for each of alice's resources the route names."""
    owned = [p for p in params if p in OWNED]
    walks = []
    for name in owned:
        for real in alices[name]:
            known = {p: (real if p == name else alices[p][0]) for p in owned}
            walks.append((known, {**known, name: _other_id(real)}, real))
    return walks


def _normal(text: str, *ids: str) -> str:
    for value in ids:
        text = text.replace(value, "<id>").replace(_other_id(value), "<id>")
    return re.sub(r'"requestId": "[^"]+"', "", text)


API_ROUTES = [spec for spec in http.ROUTES if re.search(r"\{(\w+)\}", spec.path)]


def test_every_api_route_with_an_id_is_classified() -> None:
    for spec in API_ROUTES:
        params = re.findall(r"\{(\w+)\}", spec.path)
        assert all(p in OWNED or p in NOT_OWNED for p in params), spec.path
        if spec.body_ref is not None and any(p in OWNED for p in params):
            assert (spec.method, spec.path) in API_BODIES, spec.path


def test_another_users_ids_answer_as_unknown_ids_on_every_api_route(
    api: Api, alice: User, bob: User, alices: dict[str, list[str]]
) -> None:
    walked = 0
    for spec in API_ROUTES:
        params = re.findall(r"\{(\w+)\}", spec.path)
        body = API_BODIES.get((spec.method, spec.path))
        for known, unknown, real in _walks(params, alices):
            theirs = api.call(spec.method, _fill(spec.path, known), bob.key, body)
            missing = api.call(spec.method, _fill(spec.path, unknown), bob.key, body)
            assert theirs.status_code == missing.status_code == 404, (spec.method, spec.path, real, theirs.json, missing.json)
            assert _normal(theirs.body.decode(), real) == _normal(missing.body.decode(), real), (spec.path, theirs.json)
            walked += 1
    assert walked >= 20
    # and nothing changed: alice still sees her listings as they were
    statuses = {item["status"] for item in api.call("GET", "/v1/listings/mine", alice.key).json["listings"]}
    assert {"PENDING", "REJECTED", "PAUSED"} <= statuses


DASHBOARD_ROUTES = sorted(
    (path, method) for path, entries in app.app.routes.items() if path.startswith("/dashboard") and "{" in path
    for method in entries if any(p in OWNED for p in re.findall(r"\{(\w+)\}", path))
)


def test_another_users_ids_answer_as_unknown_ids_on_every_dashboard_page_and_action(
    api: Api, bob: User, alices: dict[str, list[str]]
) -> None:
    browser: Browser = signed_in(api, bob)
    token = browser.csrf()
    walked = 0
    for path, method in DASHBOARD_ROUTES:
        if path.startswith("/dashboard/admin/"):
            continue  # admin pages: 403 for every non-admin, whatever the id
        for known, unknown, real in _walks(re.findall(r"\{(\w+)\}", path), alices):
            answers = []
            for ids in (known, unknown):
                url = _fill(path, ids)
                if method == "GET":
                    answers.append(browser.get(url))
                else:
                    answers.append(browser.post(url, {"csrf_token": token, **DASHBOARD_FORMS.get(path, {})}))
            theirs, missing = answers
            assert theirs.status_code == missing.status_code == 404, (method, path, real, theirs.text[:300])
            assert _normal(theirs.text, real) == _normal(missing.text, real), path
            walked += 1
    assert walked >= 15
