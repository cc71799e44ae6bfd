"""The Dashboard's sign-in form: a signed double-submit token (a planted or stale token is refused)."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

from chalicelib.dashboard import views_auth
from tests.clocks import frozen_clock
from tests.integration.conftest import Api, User
from tests.integration.test_dashboard import Browser


def _form_token(browser: Browser) -> str:
    form = browser.get("/dashboard/sign-in")
    token = re.search(r'name="signin_token" value="([^"]+)"', form.text)
    assert token
    return token.group(1)


def test_a_planted_unsigned_token_is_refused_even_when_cookie_and_form_agree(api: Api, alice: User) -> None:
    browser = Browser(api.client)
    planted = secrets.token_urlsafe(24)
    browser.cookies["dashboard_signin"] = planted
    response = browser.post("/dashboard/sign-in", {"signin_token": planted, "api_key": alice.key})
    assert response.status_code == 403
    assert "dashboard_session" not in browser.cookies


def test_a_token_with_a_forged_signature_or_issue_time_is_refused(api: Api, alice: User) -> None:
    browser = Browser(api.client)
    nonce, issued, signature = _form_token(browser).split(".")
    for forged in (f"{nonce}.{issued}.{'0' * 64}", f"{nonce}.{int(issued) + 3600}.{signature}", f"x{nonce}.{issued}.{signature}"):
        browser.cookies["dashboard_signin"] = forged
        assert browser.post("/dashboard/sign-in", {"signin_token": forged, "api_key": alice.key}).status_code == 403


def test_the_servers_token_signs_in_until_the_form_expires(api: Api, alice: User) -> None:
    with frozen_clock(datetime(2026, 11, 28, 12, tzinfo=UTC)) as clock:
        browser = Browser(api.client)
        token = _form_token(browser)
        assert views_auth.signin_token_valid(token, token)
        clock.advance(views_auth.SIGNIN_FORM_SECONDS + 1)
        assert not views_auth.signin_token_valid(token, token)
        assert browser.post("/dashboard/sign-in", {"signin_token": token, "api_key": alice.key}).status_code == 403
        assert Browser(api.client).sign_in(alice.key).status_code == 303  # a fresh form works
