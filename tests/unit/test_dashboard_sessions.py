"""Pure rules of Dashboard sessions and cookies: CSRF tokens, stored hashes, cookie attributes."""

from __future__ import annotations

import hashlib
import hmac
from types import SimpleNamespace
from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.dashboard import sessions, web


def session(session_id: str = "s3cr3t-session-id") -> sessions.Session:
    return sessions.Session(session_id, Caller("usr_1"), expires_at=2_000_000_000)


def request(headers: dict[str, str], stage: str = "local") -> Any:
    return SimpleNamespace(headers=headers, context={"stage": stage})


def test_csrf_token_is_the_hmac_of_the_session_id() -> None:
    expected = hmac.new(b"s3cr3t-session-id", b"dashboard-csrf", hashlib.sha256).hexdigest()
    assert session().csrf_token == expected
    assert sessions.csrf_token("other") != expected


def test_csrf_valid_only_for_the_sessions_own_token() -> None:
    current = session()
    assert sessions.csrf_valid(current, current.csrf_token)
    assert not sessions.csrf_valid(current, session("another").csrf_token)
    assert not sessions.csrf_valid(current, None)
    assert not sessions.csrf_valid(current, "")


def test_the_stored_form_is_the_sha256_of_the_id() -> None:
    assert sessions.session_hash("abc") == hashlib.sha256(b"abc").hexdigest()


def test_http_cookie_is_httponly_strict_without_secure_or_prefix() -> None:
    value = web.cookie(request({}), "dashboard_session", "v", 43200)
    assert value == "dashboard_session=v; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict"


def test_https_cookie_gets_host_prefix_and_secure() -> None:
    value = web.cookie(request({"x-forwarded-proto": "https"}), "dashboard_session", "v", 43200)
    assert value.startswith("__Host-dashboard_session=v; Path=/;")
    assert value.endswith("; Secure")
    assert "Domain" not in value  # __Host- forbids it


def test_read_cookie_takes_only_the_schemes_name() -> None:
    headers = {"cookie": "dashboard_session=plain; __Host-dashboard_session=secure"}
    assert web.read_cookie(request(headers), "dashboard_session") == "plain"
    assert web.read_cookie(request({**headers, "x-forwarded-proto": "https"}), "dashboard_session") == "secure"
    assert web.read_cookie(request({}), "dashboard_session") is None


def test_base_path_has_the_stage_only_on_execute_api_hosts() -> None:
    assert web.base_path(request({"host": "abc.execute-api.eu-west-1.amazonaws.com"}, "prod")) == "/prod"
    assert web.base_path(request({"host": "api.example.com"}, "prod")) == ""
    assert web.base_path(request({"host": "127.0.0.1:8000"}, "local")) == ""


def test_csp_allows_no_inline_script_and_no_framing() -> None:
    assert "script-src 'self'" in web.CSP
    assert "unsafe-inline" not in web.CSP
    assert "frame-ancestors 'none'" in web.CSP
