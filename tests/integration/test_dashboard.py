"""Dashboard over in-process moto (Chalice test client): sessions, CSRF, the Bearer refusal,
ownership (404), admin-only pages, and the webhook actions' effects on the stored records."""

from __future__ import annotations

import html
import re
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.dashboard import session_store, sessions
from chalicelib.kernel import clock
from chalicelib.webhooks import repository as webhooks_repo
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import counting_reads

FORM = {"content-type": "application/x-www-form-urlencoded"}


@dataclass
class Browser:
    """A cookie jar over the Chalice test client, as a browser keeps one."""

    client: Client
    cookies: dict[str, str] = field(default_factory=dict)

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(extra or {})
        if self.cookies:
            headers["cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def _keep(self, response: Any) -> Any:
        raw = response.headers.get("Set-Cookie") or []
        for line in [raw] if isinstance(raw, str) else raw:
            name, _, rest = line.partition("=")
            value = rest.split(";")[0]
            if "Max-Age=0" in line:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        response.text = response.body.decode() if isinstance(response.body, bytes) else str(response.body or "")
        return response

    def get(self, path: str, headers: dict[str, str] | None = None) -> Any:
        return self._keep(self.client.http.get(path, headers=self._headers(headers)))

    def post(self, path: str, data: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        body = urllib.parse.urlencode(data, doseq=True)
        return self._keep(self.client.http.post(path, headers=self._headers({**FORM, **(headers or {})}), body=body))

    def csrf(self, path: str = "/dashboard/webhooks") -> str:
        page = self.get(path)
        match = re.search(r'name="csrf_token" value="([0-9a-f]{64})"', page.text)
        assert match, page.text[:500]
        return match.group(1)

    def sign_in(self, key: str) -> Any:
        form = self.get("/dashboard/sign-in")
        token = re.search(r'name="signin_token" value="([^"]+)"', form.text)
        assert token
        return self.post("/dashboard/sign-in", {"signin_token": token.group(1), "api_key": key})


@pytest.fixture
def browser(api: Api) -> Browser:
    return Browser(api.client)


def signed_in(api: Api, user: User) -> Browser:
    b = Browser(api.client)
    assert b.sign_in(user.key).status_code == 303
    return b


def make_webhook(api: Api, user: User, url: str = "http://127.0.0.1:9/hook") -> dict[str, Any]:
    response = api.call("POST", "/v1/webhooks", user.key, {"url": url, "name": "Hook"})
    assert response.status_code == 201, response.json
    return dict(response.json)


# --- sessions ---------------------------------------------------------------------------------


def test_sign_in_sets_an_httponly_strict_cookie_and_stores_only_the_hash(browser: Browser, alice: User) -> None:
    response = browser.sign_in(alice.key)
    assert response.status_code == 303
    assert response.headers["Location"] == "/dashboard/webhooks"
    session_cookie = next(c for c in response.headers["Set-Cookie"] if c.startswith("dashboard_session="))
    assert "HttpOnly" in session_cookie
    assert "SameSite=Strict" in session_cookie
    assert "Path=/" in session_cookie
    assert f"Max-Age={12 * 3600}" in session_cookie
    assert "Secure" not in session_cookie  # plain http (local stage)
    session_id = browser.cookies["dashboard_session"]
    stored = session_store.get(sessions.session_hash(session_id))
    assert stored is not None
    assert stored["userId"] == alice.user_id
    assert session_id not in str(stored)
    assert stored["expiresAt"] - clock.epoch_seconds() == pytest.approx(12 * 3600, abs=5)
    assert "Alice" in browser.get("/dashboard/webhooks").text or browser.get("/dashboard/webhooks").status_code == 200


def test_https_stage_uses_secure_host_prefixed_cookies(browser: Browser, alice: User) -> None:
    https = {"x-forwarded-proto": "https"}
    form = browser.get("/dashboard/sign-in", headers=https)
    assert form.headers["Set-Cookie"].startswith("__Host-dashboard_signin=")
    assert "; Secure" in form.headers["Set-Cookie"]
    token = re.search(r'name="signin_token" value="([^"]+)"', form.text)
    assert token
    response = browser.post("/dashboard/sign-in", {"signin_token": token.group(1), "api_key": alice.key}, headers=https)
    assert response.status_code == 303
    session_cookie = next(c for c in response.headers["Set-Cookie"] if "dashboard_session=" in c)
    assert session_cookie.startswith("__Host-dashboard_session=")
    assert "; Secure" in session_cookie
    assert browser.get("/dashboard/webhooks", headers=https).status_code == 200
    # The same cookie without https is not the session cookie of an http page (name differs).
    assert browser.get("/dashboard/webhooks").status_code == 303


def test_wrong_key_shows_an_error_on_the_page(browser: Browser) -> None:
    response = browser.sign_in("msk_not_a_real_key")
    assert response.status_code == 401
    assert "That API key is not valid" in response.text
    assert "dashboard_session" not in browser.cookies


def test_sign_in_without_the_form_token_is_refused(browser: Browser, alice: User) -> None:
    response = browser.post("/dashboard/sign-in", {"api_key": alice.key})
    assert response.status_code == 403
    assert "dashboard_session" not in browser.cookies


def test_expired_session_redirects_to_sign_in(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    session_hash = sessions.session_hash(b.cookies["dashboard_session"])
    item = session_store.get(session_hash)
    assert item is not None
    session_store.delete(session_hash)
    session_store.create({**item, "expiresAt": clock.epoch_seconds() - 1})  # TTL not yet swept
    response = b.get("/dashboard/webhooks")
    assert response.status_code == 303
    assert response.headers["Location"] == "/dashboard/sign-in"


def test_htmx_request_without_a_session_is_sent_to_sign_in_whole(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    b.cookies.pop("dashboard_session")
    response = b.get("/dashboard/listings?pageSize=1", {"hx-request": "true"})  # a "Load more" after the session ended
    assert response.status_code == 401
    assert response.headers["HX-Redirect"] == "/dashboard/sign-in"  # htmx opens the sign-in page instead of swapping
    assert "<html" not in response.text
    assert 'role="alert"' in response.text


def test_sign_out_deletes_the_session(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    session_id = b.cookies["dashboard_session"]
    response = b.post("/dashboard/sign-out", {"csrf_token": b.csrf()})
    assert response.status_code == 303
    assert session_store.get(sessions.session_hash(session_id)) is None
    b.cookies["dashboard_session"] = session_id  # a stolen copy no longer works either
    assert b.get("/dashboard/webhooks").status_code == 303


def test_pages_carry_csp_without_inline_scripts_and_no_framing(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    response = b.get("/dashboard/webhooks")
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "<script>" not in response.text  # only <script src=...>


# --- CSRF and the Bearer refusal ---------------------------------------------------------------


def test_state_change_without_csrf_token_is_refused_and_changes_nothing(api: Api, alice: User) -> None:
    hook = make_webhook(api, alice)
    b = signed_in(api, alice)
    response = b.post(f"/dashboard/webhooks/{hook['id']}/disable", {})
    assert response.status_code == 403
    assert "CSRF" in response.text
    response = b.post(f"/dashboard/webhooks/{hook['id']}/disable", {"csrf_token": "0" * 64})
    assert response.status_code == 403
    assert webhooks_repo.get(hook["id"])["active"] is True  # type: ignore[index]


def test_csrf_token_of_another_session_is_refused(api: Api, alice: User) -> None:
    hook = make_webhook(api, alice)
    first, second = signed_in(api, alice), signed_in(api, alice)
    response = second.post(f"/dashboard/webhooks/{hook['id']}/disable", {"csrf_token": first.csrf()})
    assert response.status_code == 403
    assert webhooks_repo.get(hook["id"])["active"] is True  # type: ignore[index]


def test_bearer_key_on_a_dashboard_action_is_refused(api: Api, alice: User) -> None:
    hook = make_webhook(api, alice)
    b = Browser(api.client)
    response = b.post(f"/dashboard/webhooks/{hook['id']}/disable", {}, headers={"authorization": f"Bearer {alice.key}"})
    assert response.status_code == 403
    assert "never an API key" in response.text
    # Even with a valid session and token, an Authorization header makes it an API call: refused.
    s = signed_in(api, alice)
    response = s.post(f"/dashboard/webhooks/{hook['id']}/disable", {"csrf_token": s.csrf()},
                      headers={"authorization": f"Bearer {alice.key}"})
    assert response.status_code == 403
    assert webhooks_repo.get(hook["id"])["active"] is True  # type: ignore[index]


def test_action_without_session_is_401(api: Api, alice: User) -> None:
    hook = make_webhook(api, alice)
    response = Browser(api.client).post(f"/dashboard/webhooks/{hook['id']}/disable", {"csrf_token": "x"})
    assert response.status_code == 401


# --- ownership and roles -----------------------------------------------------------------------


def test_another_users_webhook_is_404_on_pages_and_actions(api: Api, alice: User, bob: User) -> None:
    hook = make_webhook(api, alice)
    b = signed_in(api, bob)
    assert b.get(f"/dashboard/webhooks/{hook['id']}").status_code == 404
    token = b.csrf()
    for action in ("disable", "enable", "rotate", "delete"):
        assert b.post(f"/dashboard/webhooks/{hook['id']}/{action}", {"csrf_token": token}).status_code == 404, action
    assert b.post(f"/dashboard/webhooks/{hook['id']}", {"csrf_token": token, "url": "http://127.0.0.1:9/x"}).status_code == 404
    stored = webhooks_repo.get(hook["id"])
    assert stored is not None
    assert stored["secret"] == hook["secret"]
    assert stored["active"] is True


def test_admin_pages_are_403_for_non_admins(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    for path in ("/dashboard/admin/users",):
        response = b.get(path)
        assert response.status_code == 403
        assert "administrators only" in response.text
    assert ">Users<" not in b.get("/dashboard/webhooks").text
    response = b.post("/dashboard/admin/users", {"csrf_token": b.csrf(), "display_name": "Mallory"})
    assert response.status_code == 403


# --- webhook actions ---------------------------------------------------------------------------


def test_enable_resets_fail_count_and_disable_keeps_it(api: Api, alice: User) -> None:
    hook = make_webhook(api, alice)
    for _ in range(5):
        webhooks_repo.add_failure(hook["id"])
    assert webhooks_repo.deactivate(hook["id"], 5, clock.iso())
    b = signed_in(api, alice)
    page = b.get(f"/dashboard/webhooks/{hook['id']}")
    assert "inactive" in page.text
    assert ">Enable<" in page.text
    assert b.post(f"/dashboard/webhooks/{hook['id']}/enable", {"csrf_token": b.csrf()}).status_code == 303
    stored = webhooks_repo.get(hook["id"])
    assert stored is not None
    assert stored["active"] is True
    assert stored["failCount"] == 0
    assert "disabledAt" not in stored
    webhooks_repo.add_failure(hook["id"])
    assert b.post(f"/dashboard/webhooks/{hook['id']}/disable", {"csrf_token": b.csrf()}).status_code == 303
    stored = webhooks_repo.get(hook["id"])
    assert stored is not None
    assert stored["active"] is False
    assert stored["failCount"] == 1


def test_rotate_needs_confirmation_redirects_and_a_reload_changes_nothing(api: Api, alice: User) -> None:
    hook = make_webhook(api, alice)
    b = signed_in(api, alice)
    confirm = b.get(f"/dashboard/webhooks/{hook['id']}/rotate")  # the page's "Rotate secret" is a link here
    assert confirm.status_code == 200
    assert re.search(rf'<form method="post" action="/dashboard/webhooks/{hook["id"]}/rotate"', confirm.text)
    assert ">Rotate secret</button>" in confirm.text
    assert webhooks_repo.get(hook["id"])["secret"] == hook["secret"]  # type: ignore[index]  # looking changes nothing
    response = b.post(f"/dashboard/webhooks/{hook['id']}/rotate", {"csrf_token": b.csrf()})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/dashboard/webhooks/{hook['id']}?done=rotated"
    stored = webhooks_repo.get(hook["id"])
    assert stored is not None
    assert stored["secret"] != hook["secret"]
    assert stored["previousSecret"] == hook["secret"]
    assert "flash" in session_store.get(sessions.session_hash(b.cookies["dashboard_session"])) or {}  # type: ignore[operator]
    sealed = str((session_store.get(sessions.session_hash(b.cookies["dashboard_session"])) or {}).get("flash"))
    assert stored["secret"] not in sealed  # the table holds the flash sealed, never the secret itself
    shown = b.get(response.headers["Location"])
    assert stored["secret"] in shown.text
    assert 'aria-label="New secret"' in shown.text
    hours = (clock.epoch_seconds(_parse(stored["previousSecretExpiresAt"])) - clock.epoch_seconds()) / 3600
    assert hours == pytest.approx(24, abs=0.01)
    assert "24 hours" in shown.text
    # A reload of the page the POST led to: no second rotation, the new secret is not shown again.
    again = b.get(response.headers["Location"])
    assert again.status_code == 200
    assert 'aria-label="New secret"' not in again.text
    assert webhooks_repo.get(hook["id"]) == stored
    assert "flash" not in (session_store.get(sessions.session_hash(b.cookies["dashboard_session"])) or {})


def _parse(iso: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def test_add_save_and_delete_apply_the_apis_rules(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    response = b.post("/dashboard/webhooks", {"csrf_token": b.csrf(), "name": "Mine", "url": "http://127.0.0.1:9/a",
                                              "events": ["message.new"]})
    assert response.status_code == 303
    webhook_id = response.headers["Location"].split("/")[-1].split("?")[0]
    stored = webhooks_repo.get(webhook_id)
    assert stored is not None
    assert stored["ownerId"] == alice.user_id
    assert stored["events"] == ["message.new"]
    bad = b.post(f"/dashboard/webhooks/{webhook_id}", {"csrf_token": b.csrf(), "name": "Mine", "url": "ftp://example.com"})
    assert bad.status_code == 400
    assert "url" in bad.text
    saved = b.post(f"/dashboard/webhooks/{webhook_id}", {"csrf_token": b.csrf(), "name": "Renamed", "url": "http://127.0.0.1:9/b"})
    assert saved.status_code == 303
    stored = webhooks_repo.get(webhook_id)
    assert stored is not None
    assert stored["name"] == "Renamed"
    assert stored["url"] == "http://127.0.0.1:9/b"
    assert len(stored["events"]) > 1  # none checked: every event
    confirm = b.get(f"/dashboard/webhooks/{webhook_id}/delete")
    assert ">Delete webhook</button>" in confirm.text
    assert webhooks_repo.get(webhook_id) is not None  # the confirmation page changes nothing
    assert b.post(f"/dashboard/webhooks/{webhook_id}/delete", {"csrf_token": b.csrf()}).status_code == 303
    assert webhooks_repo.get(webhook_id) is None


def test_every_page_renders_for_an_admin(api: Api, admin: User) -> None:
    b = signed_in(api, admin)
    for path in ("/dashboard/webhooks", "/dashboard/listings", "/dashboard/conversations", "/dashboard/admin/users"):
        response = b.get(path)
        assert response.status_code == 200, (path, response.text[:300])
        for name in ("Webhooks", "Listings", "Conversations", "Approvals", "Users", "Sign out"):
            assert f">{name}<" in response.text


def test_admin_creates_a_user_and_sets_the_verification_level(api: Api, admin: User) -> None:
    b = signed_in(api, admin)
    created = b.post("/dashboard/admin/users", {"csrf_token": b.csrf("/dashboard/admin/users"), "display_name": "Carol",
                                                "verified_level": "1", "channel_telegram": "@carol"})
    assert created.status_code == 303
    shown = b.get(created.headers["Location"])
    key = re.search(r'aria-label="New API key"[^>]*>(msk_[^<]+)<', shown.text)
    user_id = re.search(r'User id <span class="mono"[^>]*>(usr_[^<]+)<', shown.text)
    assert key
    assert user_id
    assert "msk_" not in b.get(created.headers["Location"]).text  # a reload shows the key no more
    me = api.call("GET", "/v1/me", key.group(1))
    assert me.status_code == 200
    assert me.json["displayName"] == "Carol"
    assert me.json["verifiedLevel"] == 1
    updated = b.post("/dashboard/admin/users/verification", {"csrf_token": b.csrf("/dashboard/admin/users"),
                                                             "user_id": user_id.group(1), "verified_level": "3"})
    assert updated.status_code == 303
    assert "now has verification level 3" in b.get(updated.headers["Location"]).text
    assert api.call("GET", "/v1/me", key.group(1)).json["verifiedLevel"] == 3


@pytest.mark.parametrize(("typed", "field", "id_"), [
    ({"display_name": "x" * 81}, "displayName", "display_name"),
    ({"display_name": "Carol", "country": "zz"}, "country", "country"),
    ({"display_name": "Carol", "channel_telegram": "t" * 201}, "channels", "channels"),
])
def test_a_refused_create_user_form_is_shown_again_with_its_values_and_creates_nobody(
    api: Api, admin: User, typed: dict[str, str], field: str, id_: str
) -> None:
    b = signed_in(api, admin)
    before = len(api.call("GET", "/v1/admin/users?pageSize=100", admin.key).json["users"])
    sent = {"verified_level": "2", "channel_email": "carol@example.org", "admin": "on", **typed}
    refused = b.post("/dashboard/admin/users", {"csrf_token": b.csrf("/dashboard/admin/users"), **sent})
    assert refused.status_code == 400
    assert f'id="{id_}-error" class="field-error">{field}: ' in refused.text
    assert 'value="carol@example.org"' in refused.text  # every value typed is kept
    assert '<option value="2" selected>' in refused.text
    assert 'name="admin" checked' in refused.text
    assert f'value="{html.escape(typed["display_name"])}"' in refused.text
    assert len(api.call("GET", "/v1/admin/users?pageSize=100", admin.key).json["users"]) == before


def _level_changes(api: Api, admin: User) -> list[Any]:
    return list(api.call("GET", "/v1/admin/audit-log?action=user.verification_level", admin.key).json["entries"])


@pytest.mark.parametrize("typed", ["", " ", "\t"])
def test_set_verification_level_without_a_user_id_is_a_field_error_and_changes_nothing(
    api: Api, admin: User, alice: User, typed: str
) -> None:
    b = signed_in(api, admin)
    refused = b.post("/dashboard/admin/users/verification", {"csrf_token": b.csrf("/dashboard/admin/users"),
                                                             "user_id": typed, "verified_level": "3"})
    assert refused.status_code == 400, refused.text[:500]
    assert_field_error(refused.text, "user_id", "userId")
    assert '<option value="3" selected>' in refused.text  # the chosen level is kept
    assert "now has verification level" not in refused.text
    assert api.call("GET", "/v1/me", alice.key).json["verifiedLevel"] == 0
    assert api.call("GET", "/v1/me", admin.key).json["verifiedLevel"] == 0
    assert _level_changes(api, admin) == []


def test_set_verification_level_refuses_a_bad_level_or_an_id_no_user_has_and_changes_nothing(
    api: Api, admin: User, alice: User
) -> None:
    b = signed_in(api, admin)
    token = b.csrf("/dashboard/admin/users")
    bad_level = b.post("/dashboard/admin/users/verification", {"csrf_token": token, "user_id": alice.user_id, "verified_level": "99"})
    assert bad_level.status_code == 400
    assert re.search(r'<p id="set_level-error" class="field-error">verifiedLevel: ', bad_level.text)
    assert f'value="{alice.user_id}"' in bad_level.text  # the typed id is kept
    # An id too long for a key (DynamoDB refuses a key over 2048 bytes) or with characters no id has is
    # the page of an unknown id, answered before any read of the users table.
    for malformed in ("u" * 3000, "usr_ with space", "usr_nobody"):
        with counting_reads() as reads:
            answer = b.post("/dashboard/admin/users/verification", {"csrf_token": token, "user_id": malformed, "verified_level": "2"})
        assert answer.status_code == 404, answer.text[:300]
        assert "not found" in answer.text
        if malformed != "usr_nobody":
            assert reads.calls.count("GetItem") <= 1  # the session's read only, never the user's
    assert api.call("GET", "/v1/me", alice.key).json["verifiedLevel"] == 0
    assert _level_changes(api, admin) == []


# --- listings, requests, conversations ---------------------------------------------------------


def test_pause_resume_and_delete_a_listing(api: Api, alice: User) -> None:
    from tests.integration.request_helpers import active_listing
    from tests.listing_bodies import listing_body

    listing = active_listing(api, alice)
    b = signed_in(api, alice)
    page = b.get("/dashboard/listings")
    assert listing["title"] in page.text
    assert ">Pause<" in page.text
    assert b.post(f"/dashboard/listings/{listing['id']}/pause", {"csrf_token": b.csrf()}).status_code == 303
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["status"] == "PAUSED"
    assert ">Resume<" in b.get("/dashboard/listings").text
    # Pausing again (a second tab, a double click) leaves it paused, as asked; pausing a PENDING listing is a 409 page.
    again = b.post(f"/dashboard/listings/{listing['id']}/pause", {"csrf_token": b.csrf()})
    assert again.headers["Location"].endswith("/listings?done=paused")
    pending = api.call_json("POST", "/v1/listings", alice.key, listing_body(), status=201)
    assert b.post(f"/dashboard/listings/{pending['id']}/pause", {"csrf_token": b.csrf()}).status_code == 409
    assert b.post(f"/dashboard/listings/{listing['id']}/resume", {"csrf_token": b.csrf()}).status_code == 303
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["status"] == "ACTIVE"
    assert f'href="/dashboard/listings/{listing["id"]}/delete"' in b.get("/dashboard/listings").text  # a link to the confirmation
    confirm = b.get(f"/dashboard/listings/{listing['id']}/delete")
    assert ">Delete listing</button>" in confirm.text
    assert listing["title"] in confirm.text
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["status"] == "ACTIVE"  # looking changes nothing
    assert b.post(f"/dashboard/listings/{listing['id']}/delete", {"csrf_token": b.csrf()}).status_code == 303
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).status_code == 404


def test_a_refused_reject_reason_shows_the_listing_again_with_the_reason_kept(api: Api, alice: User, bob: User) -> None:
    from tests.integration.conftest import make_user
    from tests.integration.request_helpers import active_listing, match_request

    listing = active_listing(api, alice)
    request_id = match_request(api, bob, listing["id"]).json["requestId"]
    b = signed_in(api, alice)
    token = b.csrf()
    for reason, issue in (("Sorry \u202e not a fit", "U+202E"), ("Filled\ufeff", "U+FEFF"), ("x" * 501, "at most 500 characters")):
        refused = b.post(f"/dashboard/requests/{request_id}/reject", {"csrf_token": token, "reason": reason})
        assert refused.status_code == 400
        assert f"<h1>{listing['title']}</h1>" in refused.text  # the listing's page, not an error page
        assert f'<p id="reason-{request_id}-error" class="field-error">reason: ' in refused.text
        assert issue in refused.text
        assert f'value="{reason}" aria-invalid="true" aria-describedby="reason-{request_id}-error" autofocus' in refused.text
    assert api.call("GET", f"/v1/match-requests/{request_id}", bob.key).json["status"] == "PENDING"  # nothing decided
    # Someone else's request is still 404, whatever the reason.
    nosy = signed_in(api, make_user("Nosy"))
    assert nosy.post(f"/dashboard/requests/{request_id}/reject", {"csrf_token": nosy.csrf(), "reason": "x" * 501}).status_code == 404


def test_accept_and_reject_requests_then_send_a_message(api: Api, alice: User, bob: User) -> None:
    from tests.integration.conftest import make_user
    from tests.integration.request_helpers import active_listing, match_request

    listing = active_listing(api, alice)
    carol = make_user("Carol")
    from_bob = match_request(api, bob, listing["id"]).json
    from_carol = match_request(api, carol, listing["id"]).json
    b = signed_in(api, alice)
    page = b.get(f"/dashboard/listings/{listing['id']}")
    assert "From Bob" in page.text
    assert "From Carol" in page.text
    token = b.csrf()
    rejected = b.post(f"/dashboard/requests/{from_carol['requestId']}/reject", {"csrf_token": token, "reason": "Position filled"})
    assert rejected.status_code == 303
    stored = api.call("GET", f"/v1/match-requests/{from_carol['requestId']}", carol.key).json
    assert stored["status"] == "REJECTED"
    assert stored["reason"] == "Position filled"
    assert b.post(f"/dashboard/requests/{from_bob['requestId']}/accept", {"csrf_token": token}).status_code == 303
    accepted = api.call("GET", f"/v1/match-requests/{from_bob['requestId']}", bob.key).json
    assert accepted["status"] == "ACCEPTED"
    conversation_id = accepted["conversationId"]
    assert "With Bob" in b.get("/dashboard/conversations").text
    sent = b.post(f"/dashboard/conversations/{conversation_id}/messages", {"csrf_token": token, "content": "Welcome <b>Bob</b>"})
    assert sent.status_code == 303
    messages = api.call("GET", f"/v1/conversations/{conversation_id}/messages", bob.key).json["messages"]
    assert messages[-1]["content"] == "Welcome <b>Bob</b>"
    assert messages[-1]["isApiSent"] is False  # sent through the Dashboard, not the API
    page = b.get(f"/dashboard/conversations/{conversation_id}")
    assert "Welcome &lt;b&gt;Bob&lt;/b&gt;" in page.text  # autoescaped
    for refused in ("  ", "x" * 4001, "hello \u202eworld"):  # blank, too long, a bidi override
        again = b.post(f"/dashboard/conversations/{conversation_id}/messages", {"csrf_token": token, "content": refused})
        assert again.status_code == 400
        # the conversation shown again, the message kept in its reply box with its error
        assert re.search(r'<textarea id="content" name="content"[^>]* aria-invalid="true"[^>]* autofocus>', again.text)
        assert html.escape(refused, quote=False) in again.text
        assert 'id="content-error" class="field-error">content: ' in again.text
        assert "Welcome &lt;b&gt;Bob&lt;/b&gt;" in again.text
        assert "String should match" not in again.text  # the rule in words, not its expression
    assert len(api.call("GET", f"/v1/conversations/{conversation_id}/messages", bob.key).json["messages"]) == len(messages)
    # Bob cannot act on Alice's listing page or her requests.
    other = signed_in(api, bob)
    assert other.get(f"/dashboard/listings/{listing['id']}").status_code in (403, 404)


# --- paging of the Listings and Conversations pages (the services' signed cursors) -------------

HTMX = {"hx-request": "true"}


def _page_and_fragment(b: Browser, url: str, status: int) -> tuple[Any, Any]:
    """``url`` as a whole page (without htmx) and as an htmx fragment (``Vary: HX-Request``), both answering ``status``."""
    page, fragment = b.get(url), b.get(url, HTMX)
    assert (page.status_code, fragment.status_code) == (status, status)
    assert "<html" in page.text
    assert "<html" not in fragment.text
    assert fragment.headers["Vary"] == "HX-Request"
    return page, fragment


def _htmx_fragment(b: Browser, url: str) -> tuple[Any, Any]:
    """The htmx fragment at ``url`` (200, no page around it, no Scan) and the reads it cost."""
    with counting_reads() as reads:
        fragment = b.get(url, HTMX)
    assert fragment.status_code == 200
    assert "<html" not in fragment.text
    assert "Scan" not in reads.calls
    return fragment, reads


def _shown(text: str, line_id: str) -> str:
    """The count line ``line_id``'s words (its figures are spans of their own), prefixed ``oob:`` when
    the line replaces the page's out of band."""
    found = re.search(rf'<p id="{line_id}"([^>]*)>(.*?)</p>', text, re.S)
    assert found is not None, line_id
    words = re.sub(r"<[^>]+>", "", found[2])
    return f"oob:{words}" if 'hx-swap-oob="innerHTML"' in found[1] else words


def _load_more(text: str, label: str) -> str | None:
    """The href of the page's "Load more" link (``None`` when there is none), unescaped."""
    match = re.search(r'<a class="button" href="([^"]+)" hx-get="([^"]+)"[^>]*>' + label + "</a>", text)
    if match is None:
        return None
    assert match.group(1) == match.group(2)  # the same URL with and without JavaScript
    return html.unescape(match.group(1))


def _titles(text: str, titles: list[str]) -> list[str]:
    return sorted((t for t in titles if f">{t}</a>" in text), key=text.index)


def test_listings_page_loads_more_with_the_services_cursor_with_and_without_htmx(api: Api, alice: User, bob: User) -> None:
    from tests.integration.helpers import create_listing

    titles = [create_listing(api, alice, meta={"title": f"Paged listing {i}"})["title"] for i in range(5)]
    newest = titles[::-1]
    b = signed_in(api, alice)
    first = b.get("/dashboard/listings?pageSize=2")
    assert first.status_code == 200
    assert _titles(first.text, titles) == newest[:2]
    assert _shown(first.text, "listings-shown") == "Showing 1–2 of 5 listings."
    assert 'aria-live="polite"' in first.text
    more = _load_more(first.text, "Load more listings")
    assert more is not None
    assert "cursor=" in more
    assert "pageSize=2" in more
    # Without JavaScript the link is a whole page starting at the cursor; htmx asks for the same URL
    # and gets only the items, the next control and the count out of band.
    plain, fragment = _page_and_fragment(b, more, 200)
    assert _titles(plain.text, titles) == newest[2:4]
    assert _shown(plain.text, "listings-shown") == "Showing 3–4 of 5 listings."
    assert "Back to the newest listings" in plain.text
    assert _titles(fragment.text, titles) == newest[2:4]
    assert re.search(r'<a href="[^"]+" autofocus>Paged listing 2</a>', fragment.text)  # focus moves to the first new item
    assert _shown(fragment.text, "listings-shown") == "oob:Showing 1–4 of 5 listings."
    last_url = _load_more(fragment.text, "Load more listings")
    assert last_url is not None
    last = b.get(last_url, HTMX)
    assert _titles(last.text, titles) == newest[4:]
    assert _load_more(last.text, "Load more listings") is None
    assert _shown(last.text, "listings-shown") == "oob:Showing 1–5 of 5 listings."
    # A cursor is bound to its list, its page size and its user.
    assert b.get(last_url.replace("pageSize=2", "pageSize=3")).status_code == 400
    assert signed_in(api, bob).get(last_url).status_code == 400
    assert b.get("/dashboard/listings?cursor=not-a-cursor").status_code == 400
    assert b.get("/dashboard/listings?pageSize=0").status_code == 400
    assert b.get("/dashboard/listings?pageSize=101").status_code == 400


def test_pages_show_the_largest_page_by_default(api: Api, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.kernel import pagination
    from tests.integration.helpers import create_listing

    monkeypatch.setattr(pagination, "MAX_PAGE_SIZE", 2)  # the default page is the largest one (100)
    titles = [create_listing(api, alice, meta={"title": f"Default page {i}"})["title"] for i in range(3)]
    page = signed_in(api, alice).get("/dashboard/listings")
    assert _titles(page.text, titles) == titles[::-1][:2]
    assert _load_more(page.text, "Load more listings") is not None


def test_conversations_page_loads_more_with_the_services_cursor(api: Api, alice: User) -> None:
    from tests.integration.conftest import make_user
    from tests.integration.request_helpers import accepted_conversation

    names = ["Pat One", "Pat Two", "Pat Three"]
    for name in names:
        accepted_conversation(api, alice, make_user(name))
    labels = [f"With {n}" for n in names]
    recent = labels[::-1]
    b = signed_in(api, alice)
    first = b.get("/dashboard/conversations?pageSize=2")
    assert _titles(first.text, labels) == recent[:2]
    assert _shown(first.text, "conversations-shown") == "Showing 1–2 of 3 conversations."
    more = _load_more(first.text, "Load more conversations")
    assert more is not None
    assert '<li id="more-conversations" class="more">' in first.text  # a list item of the list it extends
    fragment = b.get(more, HTMX)
    assert _titles(fragment.text, labels) == recent[2:]
    assert re.search(r'autofocus>With Pat One</a>', fragment.text)
    assert _load_more(fragment.text, "Load more conversations") is None
    assert _shown(fragment.text, "conversations-shown") == "oob:Showing 1–3 of 3 conversations."
    plain = b.get(more)
    assert _titles(plain.text, labels) == recent[2:]
    assert _shown(plain.text, "conversations-shown") == "Showing 3–3 of 3 conversations."
    assert "Back to the most recent conversations" in plain.text


# --- paging of a listing's incoming requests and a conversation's messages ---------------------


def _edited(url: str) -> str:
    """``url`` with its cursor's payload edited (page 2 -> 9) and the signature kept, as a user might try."""
    import base64
    import json

    parts = urllib.parse.urlsplit(url)
    params = dict(urllib.parse.parse_qsl(parts.query))
    payload, _, signature = params["cursor"].partition(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["p"] = 9
    edited = base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode()).rstrip(b"=").decode()
    params["cursor"] = f"{edited}.{signature}"
    return f"{parts.path}?{urllib.parse.urlencode(params)}"


def _assert_cursor_refused(b: Browser, url: str) -> None:
    """An edited cursor is a 400 page without htmx and a 400 fragment (an alert naming ``cursor``) with it."""
    page, fragment = _page_and_fragment(b, url, 400)
    assert "<strong>cursor</strong>" in page.text
    assert 'role="alert"' in fragment.text
    assert "<strong>cursor</strong>" in fragment.text
    assert "autofocus" in fragment.text  # the failed control is gone: focus lands on the message


def _senders(text: str, names: list[str]) -> list[str]:
    found = [(m.start(), m.group(1)) for m in re.finditer(r">From ([^<]+)</h3>", text)]
    return [name for _, name in sorted(found) if name in names]


def test_listing_requests_load_more_newest_first_without_duplicates_or_gaps(api: Api, alice: User, bob: User) -> None:
    from tests.integration.conftest import make_user
    from tests.integration.request_helpers import active_listing, match_request

    listing = active_listing(api, alice)
    names = [f"Requester {i}" for i in range(5)]
    for name in names:
        assert match_request(api, make_user(name), listing["id"]).status_code == 201
    newest = names[::-1]
    path = f"/dashboard/listings/{listing['id']}"
    b = signed_in(api, alice)
    first = b.get(f"{path}?pageSize=2")
    assert first.status_code == 200
    assert _senders(first.text, names) == newest[:2]
    assert _shown(first.text, "requests-shown") == "Showing 1–2 of 5 requests."
    more = _load_more(first.text, "Load more requests")
    assert more is not None
    assert more.startswith(f"{path}?")
    assert "pageSize=2" in more
    assert "cursor=" in more
    # htmx: each answer holds the next items, the next control and the count; together they are the list.
    seen = list(_senders(first.text, names))
    url: str | None = more
    fragments = []
    while url is not None:
        fragment, reads = _htmx_fragment(b, url)
        assert reads.items <= (2 + 1) + 3  # the page (+1 to see if more follow), the listing, its counter, the session
        assert re.search(r'<h3 id="r-[^"]+" tabindex="-1" autofocus>From ', fragment.text)
        assert f'name="csrf_token" value="{b.csrf(path)}"' in fragment.text  # loaded cards' actions work
        seen += _senders(fragment.text, names)
        fragments.append(fragment.text)
        url = _load_more(fragment.text, "Load more requests")
    assert seen == newest  # no duplicates, no gaps, newest first
    assert len(fragments) == 2
    assert _shown(fragments[0], "requests-shown") == "oob:Showing 1–4 of 5 requests."
    assert _shown(fragments[1], "requests-shown") == "oob:Showing 1–5 of 5 requests."
    # Without JavaScript the same link is the whole page at the cursor.
    plain = b.get(more)
    assert plain.status_code == 200
    assert "<html" in plain.text
    assert f"<h1>{listing['title']}</h1>" in plain.text
    assert _senders(plain.text, names) == newest[2:4]
    assert _shown(plain.text, "requests-shown") == "Showing 3–4 of 5 requests."
    assert "Back to the newest requests" in plain.text
    # Accepting from a later page works as from the first one.
    request_id = re.findall(r'action="/dashboard/requests/([^/"]+)/accept"', plain.text)[0]
    assert b.post(f"/dashboard/requests/{request_id}/accept", {"csrf_token": b.csrf(path)}).status_code == 303
    # Edited, resized or foreign cursors are refused; so is another user on the listing.
    _assert_cursor_refused(b, _edited(more))
    assert b.get(more.replace("pageSize=2", "pageSize=3")).status_code == 400
    assert signed_in(api, bob).get(more).status_code in (403, 404)
    assert b.get(f"{path}?cursor=not-a-cursor", HTMX).status_code == 400


def _contents(text: str, contents: list[str]) -> list[str]:
    found = [(m.start(), m.group(1)) for m in re.finditer(r'<p class="content">([^<]+)</p>', text)]
    return [content for _, content in sorted(found) if content in contents]


def _earlier_fragments(b: Browser, url: str | None) -> list[str]:
    """The htmx fragments of "Load earlier messages" from ``url`` on, newest page first."""
    fragments = []
    while url is not None:
        fragment, reads = _htmx_fragment(b, url)
        assert reads.items <= 3 + 2  # the page's messages, the conversation and the session: not the whole conversation
        assert re.search(r'<li class="message (mine|theirs)" tabindex="-1" autofocus>', fragment.text)
        fragments.append(fragment.text)
        url = _load_more(fragment.text, "Load earlier messages")
    return fragments


def test_conversation_shows_the_newest_messages_and_loads_earlier_pages_above(api: Api, alice: User, bob: User) -> None:
    from tests.integration.conftest import make_user
    from tests.integration.request_helpers import accepted_conversation

    _, conversation_id = accepted_conversation(api, alice, bob)
    notes = [f"Note {i:02d}" for i in range(1, 8)]
    for i, note in enumerate(notes):
        sender = alice if i % 2 else bob
        assert api.call("POST", f"/v1/conversations/{conversation_id}/messages", sender.key, {"content": note}).status_code == 201
    path = f"/dashboard/conversations/{conversation_id}"
    b = signed_in(api, alice)
    first = b.get(f"{path}?pageSize=3")
    assert first.status_code == 200
    # The API's pages are numbered from the first message: the newest page holds what follows the last full one.
    assert _contents(first.text, notes) == notes[6:]
    assert _shown(first.text, "messages-shown") == "Showing 7–7 of 7 messages."
    more = _load_more(first.text, "Load earlier messages")
    assert more is not None
    assert first.text.index("Load earlier messages") < first.text.index("Note 07")  # above the messages
    assert '<li id="earlier-messages" class="more">' in first.text  # an item of the list it extends
    # A message arriving meanwhile shifts nothing: the earlier pages hold the same messages.
    assert api.call("POST", f"/v1/conversations/{conversation_id}/messages", bob.key, {"content": "Note 08"}).status_code == 201
    fragments = _earlier_fragments(b, more)
    seen = [c for f in reversed(fragments) for c in _contents(f, notes)] + _contents(first.text, notes)
    assert seen == notes  # each page lands above the ones shown: oldest first, no duplicates, no gaps
    assert [_contents(f, notes) for f in fragments] == [notes[3:6], notes[:3]]
    # Each sets only the line's first number: the newest shown and the total are the live poll's.
    assert [re.findall(r'<span id="messages-shown-(\w+)" hx-swap-oob="innerHTML">(\d+)</span>', f) for f in fragments] == [
        [("first", "4")], [("first", "1")]]
    # Without JavaScript the same link is the whole page of earlier messages (with the reply box).
    plain = b.get(more)
    assert plain.status_code == 200
    assert _contents(plain.text, notes) == notes[3:6]
    assert _shown(plain.text, "messages-shown") == "Showing 4–6 of 8 messages."
    for part in ("<html", "Back to the newest messages", 'name="content"'):
        assert part in plain.text
    # The newest page now ends at the new message; the default page (100) holds them all.
    assert _contents(b.get(f"{path}?pageSize=3").text, [*notes, "Note 08"]) == ["Note 07", "Note 08"]
    whole = b.get(path).text
    assert _contents(whole, notes) == notes
    assert _load_more(whole, "Load earlier messages") is None
    # Edited, resized or another participant's cursors are refused; an outsider still sees nothing.
    _assert_cursor_refused(b, _edited(more))
    assert b.get(more.replace("pageSize=3", "pageSize=2")).status_code == 400
    assert signed_in(api, bob).get(more, HTMX).status_code == 400
    assert signed_in(api, make_user("Olive Outsider")).get(path).status_code == 404


# --- approvals ---------------------------------------------------------------------------------


def test_review_queue_lists_without_claiming_and_decides_by_version(api: Api, admin: User, alice: User, runner: Any) -> None:
    from tests.integration.helpers import approval_queue_depth, create_listing

    first = create_listing(api, alice, meta={"description": "<p>Build <strong>APIs</strong><script>alert(1)</script></p>"})
    second = create_listing(api, alice)
    runner.drain()
    b = signed_in(api, admin)
    page = b.get("/dashboard/admin/approvals")
    assert page.status_code == 200
    assert page.text.index(f'id="ap-{first["id"]}"') < page.text.index(f'id="ap-{second["id"]}"')  # oldest first
    assert "<strong>APIs</strong>" in page.text
    assert "<script>alert" not in page.text
    assert "Alice" in page.text
    visible, claimed = approval_queue_depth()
    assert claimed == 0  # looking claimed nothing
    assert visible >= 2
    versions = re.findall(r'name="version" value="(\d+)"', page.text)
    token = b.csrf("/dashboard/admin/approvals")
    assert b.post(f"/dashboard/admin/approvals/{first['id']}/approve", {"csrf_token": token, "version": versions[0]}).status_code == 303
    assert api.call("GET", f"/v1/listings/{first['id']}", alice.key).json["status"] == "ACTIVE"
    # A decision about a version the owner changed since is refused.
    patched = api.call("PATCH", f"/v1/listings/{second['id']}", alice.key, {"meta": {"title": "Changed title"}})
    assert patched.status_code == 200
    stale = b.post(f"/dashboard/admin/approvals/{second['id']}/reject", {"csrf_token": token, "version": "1", "reason": "Spam"})
    assert stale.status_code == 409
    fresh = b.get("/dashboard/admin/approvals")
    version = re.search(rf'approvals/{second["id"]}/reject".*?name="version" value="(\d+)"', fresh.text, re.S)
    assert version
    assert version.group(1) == "2"
    for reason in ("x" * 501, "Spam \u202e", "   "):  # too long, a bidi override, blank: the page again, the reason kept
        refused = b.post(f"/dashboard/admin/approvals/{second['id']}/reject", {"csrf_token": token, "version": "2", "reason": reason})
        assert refused.status_code == 400
        assert f'id="reason-{second["id"]}-error" class="field-error">reason: ' in refused.text
        assert f'value="{html.escape(reason)}" aria-invalid="true"' in refused.text
        assert f'id="ap-{second["id"]}"' in refused.text
    assert api.call("GET", f"/v1/listings/{second['id']}", alice.key).json["status"] == "PENDING"
    rejected = b.post(f"/dashboard/admin/approvals/{second['id']}/reject", {"csrf_token": token, "version": "2", "reason": "Spam"})
    assert rejected.status_code == 303
    listing = api.call("GET", f"/v1/listings/{second['id']}", alice.key).json
    assert listing["status"] == "REJECTED"
    assert listing["statusReason"] == "Spam"
    assert b.get("/dashboard/admin/approvals").text.count('name="version"') == 0


def test_review_page_pages_with_the_services_signed_cursor(
    api: Api, admin: User, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.dashboard import views_admin
    from tests.integration.helpers import create_listing

    with monkeypatch.context() as m:  # one second between submissions, so the queue's order is unambiguous
        moments = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in range(1000))
        m.setattr(clock, "now", lambda: next(moments))
        ids = [create_listing(api, alice, meta={"title": f"Review {i}"})["id"] for i in range(5)]
    monkeypatch.setattr(views_admin, "REVIEW_PAGE_SIZE", 2)
    b = signed_in(api, admin)
    seen, url = [], "/dashboard/admin/approvals"
    while url:
        page = b.get(url)
        assert page.status_code == 200
        seen.append(re.findall(r'id="ap-([^"]+)"', page.text))
        link = re.search(r'<a href="[^"]*(/admin/approvals\?cursor=[^"]+)">Next page</a>', page.text)
        url = "/dashboard" + html.unescape(link.group(1)) if link else ""
        assert len(seen) <= 5
    assert seen == [ids[0:2], ids[2:4], ids[4:]]  # oldest first, no duplicates, no gaps
    # The link's cursor is the API's (same queue, administrator and page size); edited or foreign ones are a 400.
    first = b.get("/dashboard/admin/approvals")
    link = re.search(r'approvals\?cursor=([^"]+)">Next page', first.text)
    assert link
    cursor = urllib.parse.unquote(html.unescape(link.group(1)))
    assert [x["id"] for x in api.call("GET", f"/v1/admin/approvals?pageSize=2&cursor={cursor}", admin.key).json["listings"]] == ids[2:4]
    edited = urllib.parse.quote(cursor[:-3] + ("xyz" if not cursor.endswith("xyz") else "abc"))
    assert b.get(f"/dashboard/admin/approvals?cursor={edited}").status_code == 400
    next_page = f"/dashboard/admin/approvals?cursor={urllib.parse.quote(cursor)}"
    assert signed_in(api, make_user("Admin Two", admin=True)).get(next_page).status_code == 400  # another administrator's
    monkeypatch.setattr(views_admin, "REVIEW_PAGE_SIZE", 3)
    assert b.get(next_page).status_code == 400  # issued for another page size


# --- test events and redelivery through the pipeline --------------------------------------------


def test_send_test_event_reaches_only_that_webhook_with_test_true_and_redeliver_repeats_it(
    api: Api, alice: User, runner: Any, monkeypatch: pytest.MonkeyPatch, receivers: Any
) -> None:
    import json as jsonlib

    from tests.integration.webhook_helpers import fast_delivery_settings

    fast_delivery_settings(monkeypatch)
    make = receivers
    target, sibling = make("ok"), make("ok")
    hook = make_webhook(api, alice, target.url)
    make_webhook(api, alice, sibling.url)
    b = signed_in(api, alice)
    page = b.get(f"/dashboard/webhooks/{hook['id']}")
    assert 'id="event_type"' in page.text
    assert "Send test event" in page.text
    sent = b.post(f"/dashboard/webhooks/{hook['id']}/test", {"csrf_token": b.csrf(), "event_type": "match_request.received"})
    assert sent.status_code == 303
    runner.drain()
    assert len(target.requests) == 1
    assert sibling.requests == []  # addressed to one webhook only
    first = target.requests[0]
    envelope = jsonlib.loads(first.body)
    assert envelope["test"] is True
    assert envelope["event"] == "match_request.received"
    assert envelope["data"]["listingTitle"].startswith("Sample listing")
    log = b.get(f"/dashboard/webhooks/{hook['id']}")
    assert ">test<" in log.text
    assert "match_request.received" in log.text
    token = re.search(r'/attempts/([A-Za-z0-9_-]+)"', log.text)
    assert token
    detail = b.get(f"/dashboard/webhooks/{hook['id']}/attempts/{token.group(1)}", headers={"hx-request": "true"})
    assert detail.status_code == 200
    assert "&#34;test&#34;: true" in detail.text or '"test": true' in detail.text  # JSON indented for reading
    assert '<th scope="row" class="mono">webhook-signature</th><td class="mono">v1,' in detail.text  # the headers sent
    assert f'<td class="mono">{first.headers["webhook-id"]}</td>' in detail.text
    assert "<html" not in detail.text  # an htmx fragment
    event_id = re.search(r'name="event_id" value="(evt_[^"]+)"', log.text)
    assert event_id
    again = b.post(f"/dashboard/webhooks/{hook['id']}/redeliver", {"csrf_token": b.csrf(), "event_id": event_id.group(1)})
    assert again.status_code == 303
    runner.drain()
    assert len(target.requests) == 2
    assert target.requests[1].headers["webhook-id"] == first.headers["webhook-id"]
    assert target.requests[1].body == first.body
    # Unknown types, unsubscribed types and another user's webhook are refused.
    bad = b.post(f"/dashboard/webhooks/{hook['id']}/test", {"csrf_token": b.csrf(), "event_type": "listing.nope"})
    assert bad.status_code == 400
    assert b.post(f"/dashboard/webhooks/{hook['id']}/redeliver", {"csrf_token": b.csrf(), "event_id": "evt_unknown"}).status_code == 404
    for malformed in ("", " ", "evt_" + "x" * 2000, "not-an-event"):  # not an event id: a 400 page, never DynamoDB's 500
        refused = b.post(f"/dashboard/webhooks/{hook['id']}/redeliver", {"csrf_token": b.csrf(), "event_id": malformed})
        assert refused.status_code == 400, (malformed[:20], refused.text[:300])
        assert "event_id" in refused.text
    assert len(target.requests) == 2


def _disabled_webhook(api: Api, owner: User) -> tuple[dict[str, Any], Browser]:
    """A new webhook of ``owner``, disabled through the Dashboard, and the owner's signed-in browser."""
    hook = make_webhook(api, owner)
    b = signed_in(api, owner)
    assert b.post(f"/dashboard/webhooks/{hook['id']}/disable", {"csrf_token": b.csrf()}).status_code == 303
    return hook, b


def test_test_event_to_an_inactive_webhook_is_refused(api: Api, alice: User) -> None:
    hook, b = _disabled_webhook(api, alice)
    page = b.get(f"/dashboard/webhooks/{hook['id']}")
    assert "Send test event" not in page.text
    refused = b.post(f"/dashboard/webhooks/{hook['id']}/test", {"csrf_token": b.csrf(), "event_type": "message.new"})
    assert refused.status_code == 409


# --- confirmations, field errors, the disabled reason, filters, recover, the catalog ---


def test_confirmation_pages_are_404_for_another_users_items(api: Api, alice: User, bob: User) -> None:
    from tests.integration.request_helpers import active_listing

    hook = make_webhook(api, alice)
    listing = active_listing(api, alice)
    b = signed_in(api, bob)
    for path in (f"/dashboard/webhooks/{hook['id']}/delete", f"/dashboard/webhooks/{hook['id']}/rotate"):
        assert b.get(path).status_code == 404
    assert b.get(f"/dashboard/listings/{listing['id']}/delete").status_code in (403, 404)  # the API's rule for a public listing


def assert_field_error(html: str, input_id: str, name: str) -> None:
    """The refused form's input ``input_id`` is marked invalid, tied to its error (which names
    ``name``) and focused, and the page announces the errors."""
    field = re.search(rf'<input id="{input_id}"[^>]*>', html)
    assert field
    assert 'aria-invalid="true"' in field.group(0)
    assert f'aria-describedby="{input_id}-error"' in field.group(0)
    assert "autofocus" in field.group(0)
    assert re.search(rf'<p id="{input_id}-error" class="field-error">{name}: ', html)
    assert 'role="alert"' in html


def test_refused_form_ties_each_error_to_its_field_and_focuses_the_first(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    refused = b.post("/dashboard/webhooks", {"csrf_token": b.csrf(), "name": "Typed", "url": "ftp://example.com/x"})
    assert refused.status_code == 400
    assert_field_error(refused.text, "new-url", "url")
    assert 'value="Typed"' in refused.text  # the typed values are kept
    assert webhooks_repo.list_by_owner(alice.user_id) == []


def test_disabled_reason_time_and_last_failure_show_after_five_failures(
    api: Api, alice: User, runner: Any, monkeypatch: pytest.MonkeyPatch, receivers: Any
) -> None:
    from tests.integration.webhook_helpers import fast_delivery_settings

    fast_delivery_settings(monkeypatch, delays="")  # no retries: each test event fails once
    receiver = receivers("ok", status=500)
    hook = make_webhook(api, alice, receiver.url)
    b = signed_in(api, alice)
    for _ in range(5):
        test_event = {"csrf_token": b.csrf(), "event_type": "message.new"}
        assert b.post(f"/dashboard/webhooks/{hook['id']}/test", test_event).status_code == 303
        runner.drain()
    stored = webhooks_repo.get(hook["id"])
    assert stored is not None
    assert (stored["active"], stored["failCount"]) == (False, 5)
    page = b.get(f"/dashboard/webhooks/{hook['id']}")
    reason = re.search(r'data-testid="disabled-reason">([^<]*)<time datetime="([^"]+)"', page.text)
    assert reason
    assert reason.group(1).startswith("Disabled after 5 consecutive failures")
    assert reason.group(2) == stored["disabledAt"]
    assert 'data-testid="last-failure">HTTP 500<' in page.text
    assert "No retries of earlier failures are scheduled" in page.text  # what Enable will (not) retry
    assert "Disabled after 5 consecutive failures" in b.get("/dashboard/webhooks").text
    assert b.post(f"/dashboard/webhooks/{hook['id']}/enable", {"csrf_token": b.csrf()}).status_code == 303
    enabled = webhooks_repo.get(hook["id"]) or {}
    assert not {"disabledAt", "disabledReason", "lastFailure"} & set(enabled)
    assert "disabled-reason" not in b.get(f"/dashboard/webhooks/{hook['id']}").text


def test_enable_names_the_retries_still_scheduled(api: Api, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.webhooks.delivery import attempt_log

    hook = make_webhook(api, alice)
    due = clock.iso(clock.now() + timedelta(minutes=30))
    attempt_log.log_attempt(hook["id"], {
        "deliveryId": "dlv_1", "eventId": "evt_retrying", "event": "message.new", "attempt": 1, "attemptedAt": clock.iso(),
        "messageId": "msg_x", "success": False, "statusCode": 500, "durationMs": 3, "nextAttemptAt": due,
    })
    b = signed_in(api, alice)
    assert b.post(f"/dashboard/webhooks/{hook['id']}/disable", {"csrf_token": b.csrf()}).status_code == 303
    page = b.get(f"/dashboard/webhooks/{hook['id']}")
    effect = re.search(r'data-testid="enable-effect">(.*?)</p>', page.text, re.S)
    assert effect
    assert "1 failed delivery has a retry still scheduled" in effect.group(1)
    assert f'datetime="{due}"' in effect.group(1)
    assert "Disabled by its owner" in page.text


def _log(webhook_id: str, event_id: str, event: str, success: bool, at: datetime, attempt: int = 1) -> None:
    from chalicelib.webhooks.delivery import attempt_log

    attempt_log.log_attempt(webhook_id, {
        "deliveryId": clock.new_id("dlv"), "eventId": event_id, "event": event, "attempt": attempt,
        "attemptedAt": clock.iso(at), "messageId": f"msg_{event_id}", "success": success,
        "statusCode": 200 if success else 500, "durationMs": 3,
    })


def test_delivery_log_filters_by_outcome_and_event_type(api: Api, alice: User) -> None:
    hook = make_webhook(api, alice)
    now = clock.now()
    _log(hook["id"], "evt_ok_message", "message.new", True, now - timedelta(minutes=3))
    _log(hook["id"], "evt_bad_message", "message.new", False, now - timedelta(minutes=2))
    _log(hook["id"], "evt_bad_request", "match_request.received", False, now - timedelta(minutes=1))
    b = signed_in(api, alice)

    def shown(query: str) -> set[str]:
        page = b.get(f"/dashboard/webhooks/{hook['id']}{query}")
        assert page.status_code == 200, page.text[:300]
        return set(re.findall(r"webhook-id <span[^>]*>msg_(evt_[a-z_]+)<", page.text))

    assert shown("") == {"evt_ok_message", "evt_bad_message", "evt_bad_request"}
    assert shown("?outcome=failed") == {"evt_bad_message", "evt_bad_request"}
    assert shown("?outcome=succeeded") == {"evt_ok_message"}
    assert shown("?event=message.new") == {"evt_ok_message", "evt_bad_message"}
    assert shown("?outcome=failed&event=match_request.received") == {"evt_bad_request"}
    assert 'value="failed" selected' in b.get(f"/dashboard/webhooks/{hook['id']}?outcome=failed").text
    assert b.get(f"/dashboard/webhooks/{hook['id']}?outcome=maybe").status_code == 400
    assert b.get(f"/dashboard/webhooks/{hook['id']}?event=no.such").status_code == 400


def test_recover_resends_exactly_the_failed_deliveries_since_the_chosen_time(
    api: Api, alice: User, runner: Any, monkeypatch: pytest.MonkeyPatch, receivers: Any
) -> None:
    from tests.clocks import frozen_clock
    from tests.integration.webhook_helpers import fast_delivery_settings

    fast_delivery_settings(monkeypatch, delays="")  # no automatic retries: only the recover re-sends
    start = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
    receiver = receivers("ok")
    hook = make_webhook(api, alice, receiver.url)
    with frozen_clock(start) as frozen:
        b = signed_in(api, alice)

        def deliver(ok: bool) -> str:
            receiver.status = 200 if ok else 500
            before = len(receiver.requests)
            test_event = {"csrf_token": b.csrf(), "event_type": "message.new"}
            assert b.post(f"/dashboard/webhooks/{hook['id']}/test", test_event).status_code == 303
            runner.drain()
            assert len(receiver.requests) == before + 1
            return receiver.requests[-1].headers["webhook-id"]

        old_failure = deliver(False)  # 08:00, before the chosen time
        frozen.advance(3 * 3600)  # 11:00
        recent_failure = deliver(False)
        recent_success = deliver(True)  # a success resets failCount; never re-sent
        frozen.advance(600)
        third_failure = deliver(False)
        frozen.advance(1800)  # 11:40: "1 hour" reaches back to 10:40
        receiver.status = 200
        assert {recent_success} & {old_failure, recent_failure, third_failure} == set()
        sent_before = len(receiver.requests)
        answer = b.post(f"/dashboard/webhooks/{hook['id']}/recover", {"csrf_token": b.csrf(), "since": "1 hour"})
        assert answer.status_code == 303
        runner.drain()
        resent = [r.headers["webhook-id"] for r in receiver.requests[sent_before:]]
        assert resent == [recent_failure, third_failure]  # exactly those, oldest first, same webhook-id
        page = b.get(answer.headers["Location"])
        assert "Recovery queued: 2 failed deliveries" in page.text
        assert b.get(answer.headers["Location"]).status_code == 200  # a reload re-sends nothing
        for crafted in ("Call+0800", "-5", "007", "101", ""):  # a notice shows only a count the recover can queue
            assert "Recovery queued" not in b.get(f"/dashboard/webhooks/{hook['id']}?done=recovered&queued={crafted}").text
        runner.drain()
        assert len(receiver.requests) == sent_before + 2
        # Recovered deliveries succeeded: a second recover over 24 hours finds only the old one's period
        # outside, and nothing failed inside it any more.
        again = b.post(f"/dashboard/webhooks/{hook['id']}/recover", {"csrf_token": b.csrf(), "since": "1 hour"})
        assert "queued=0" in again.headers["Location"]
        wide = b.post(f"/dashboard/webhooks/{hook['id']}/recover", {"csrf_token": b.csrf(), "since": "6 hours"})
        assert "queued=1" in wide.headers["Location"]
        runner.drain()
        assert receiver.requests[-1].headers["webhook-id"] == old_failure
        attempts = re.findall(r"<span>attempt (\d+)</span>", b.get(f"/dashboard/webhooks/{hook['id']}").text)
        assert attempts.count("2") == 3  # each re-send was a new attempt (2) of its delivery
        assert b.post(f"/dashboard/webhooks/{hook['id']}/recover", {"csrf_token": b.csrf(), "since": "2 weeks"}).status_code == 400


def test_recover_is_refused_while_the_webhook_is_inactive(api: Api, alice: User) -> None:
    hook, b = _disabled_webhook(api, alice)
    assert ">Recover failed deliveries</button>" not in b.get(f"/dashboard/webhooks/{hook['id']}").text
    assert b.post(f"/dashboard/webhooks/{hook['id']}/recover", {"csrf_token": b.csrf(), "since": "1 hour"}).status_code == 409


def test_event_catalog_lists_every_event_of_the_registry_with_schema_and_a_valid_example(api: Api, alice: User) -> None:
    import json as jsonlib

    from chalicelib.openapi.webhooks import webhooks_section
    from chalicelib.webhooks.catalogue import EVENT_TYPES, envelope_model

    b = signed_in(api, alice)
    page = b.get("/dashboard/event-catalog")
    assert page.status_code == 200
    assert '>Event catalog</a>' in page.text
    # the OpenAPI webhooks section is generated from the same registry: the same names
    assert set(webhooks_section({envelope_model(n).__name__: "#" for n in EVENT_TYPES})) == set(EVENT_TYPES)
    for name, entry in EVENT_TYPES.items():
        section = re.search(rf'<section class="card" id="{name.replace(".", "-")}".*?</section>', page.text, re.S)
        assert section, name
        assert entry.summary in html.unescape(section.group(0))
        schema, example = re.findall(r'<pre tabindex="0"[^>]*>(.*?)</pre>', section.group(0), re.S)
        assert jsonlib.loads(html.unescape(schema)) == envelope_model(name).model_json_schema()
        envelope_model(name).model_validate(jsonlib.loads(html.unescape(example)))


def test_a_flash_is_shown_once_to_its_own_session_only_and_expires(api: Api, alice: User) -> None:
    from tests.clocks import frozen_clock

    with frozen_clock(datetime(2026, 11, 24, 9, 0, tzinfo=UTC)) as frozen:
        mine = sessions.sign_in(alice.key)
        other = sessions.sign_in(alice.key)
        sessions.put_flash(mine, "webhook-rotated", {"secret": "whsec_x"})
        stored = sessions.resolve(mine.session_id)
        assert stored is not None
        assert stored.flash
        assert "whsec_x" not in stored.flash
        # another session cannot open it (its key derives from the session id, which only the cookie holds)
        stolen = sessions.Session(other.session_id, other.caller, other.expires_at, stored.flash)
        assert sessions.take_flash(stolen, "webhook-rotated") is None
        assert sessions.take_flash(stored, "user-created") is None  # another kind: left in place
        assert sessions.take_flash(stored, "webhook-rotated") == {"secret": "whsec_x"}
        assert sessions.take_flash(stored, "webhook-rotated") is None  # shown once
        sessions.put_flash(mine, "webhook-rotated", {"secret": "whsec_y"})
        frozen.advance(sessions.FLASH_SECONDS + 1)
        late = sessions.resolve(mine.session_id)
        assert late is not None
        assert sessions.take_flash(late, "webhook-rotated") is None  # too old: dropped
        assert (sessions.resolve(mine.session_id) or late).flash is None


def test_every_post_redirects_and_reloading_the_page_it_leads_to_changes_nothing(api: Api, alice: User, bob: User) -> None:
    """Each Dashboard action answers 303 to a GET page; GETting that page twice (a reload)
    leaves the webhooks, the listing and the conversation exactly as the action left them."""
    from tests.integration.request_helpers import active_listing, match_request

    listing = active_listing(api, alice)
    request_id = match_request(api, bob, listing["id"]).json["requestId"]
    b = signed_in(api, alice)
    created = b.post("/dashboard/webhooks", {"csrf_token": b.csrf(), "name": "Reload", "url": "http://127.0.0.1:9/r"})
    hook_id = created.headers["Location"].split("/")[-1].split("?")[0]

    def state() -> Any:
        conversations = api.call("GET", "/v1/conversations", alice.key).json["conversations"]
        messages = [api.call("GET", f"/v1/conversations/{c['conversationId']}/messages", alice.key).json["messages"]
                    for c in conversations]
        return (webhooks_repo.list_by_owner(alice.user_id), api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json,
                conversations, messages)

    actions: list[tuple[str, dict[str, str]]] = [
        (f"/dashboard/webhooks/{hook_id}/rotate", {}),  # the rotate case first
        (f"/dashboard/webhooks/{hook_id}", {"name": "Renamed", "url": "http://127.0.0.1:9/s"}),
        (f"/dashboard/webhooks/{hook_id}/test", {"event_type": "message.new"}),
        (f"/dashboard/webhooks/{hook_id}/recover", {"since": "1 hour"}),
        (f"/dashboard/webhooks/{hook_id}/disable", {}),
        (f"/dashboard/webhooks/{hook_id}/enable", {}),
        (f"/dashboard/listings/{listing['id']}/pause", {}),
        (f"/dashboard/listings/{listing['id']}/resume", {}),
        (f"/dashboard/requests/{request_id}/accept", {}),
    ]
    for path, form in actions:
        answer = b.post(path, {"csrf_token": b.csrf(), **form})
        assert answer.status_code == 303, (path, answer.text[:300])
        after = state()
        for _ in range(2):
            assert b.get(answer.headers["Location"]).status_code == 200
        assert state() == after, path
    conversation_id = api.call("GET", "/v1/conversations", alice.key).json["conversations"][0]["conversationId"]
    sent = b.post(f"/dashboard/conversations/{conversation_id}/messages", {"csrf_token": b.csrf(), "content": "Hi once"})
    assert sent.status_code == 303
    b.get(sent.headers["Location"])
    b.get(sent.headers["Location"])
    contents = [m["content"] for m in api.call("GET", f"/v1/conversations/{conversation_id}/messages", alice.key).json["messages"]]
    assert contents.count("Hi once") == 1
    for path in (f"/dashboard/listings/{listing['id']}/delete", f"/dashboard/webhooks/{hook_id}/delete"):
        answer = b.post(path, {"csrf_token": b.csrf()})
        assert answer.status_code == 303
        assert b.get(answer.headers["Location"]).status_code == 200
    assert webhooks_repo.list_by_owner(alice.user_id) == []
