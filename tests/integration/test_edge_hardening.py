"""Edge hardening: cursors bound to their caller on every list, If-Match and
If-None-Match in the idempotency fingerprint, the Dashboard's security headers on every answer,
no CORS on the Dashboard, Retry-After on every 503."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.kernel import errors
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error, create_listing, http_request, index_listings
from tests.integration.request_helpers import active_listing
from tests.integration.test_dashboard import signed_in

SECURITY = ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy")


def _assert_security_headers(response: Any) -> None:
    for name in SECURITY:
        assert response.headers.get(name), (name, response.status_code, dict(response.headers))
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "Access-Control-Allow-Origin" not in response.headers


@pytest.mark.parametrize("path", ["/v1/listings/search?pageSize=1", "/v1/profiles/search?pageSize=1"])
def test_a_cursor_made_for_one_user_is_refused_for_another(
    api: Api, alice: User, bob: User, runner: Any, path: str
) -> None:
    for _ in range(2):
        active_listing(api, alice)
        active_listing(api, bob)
    runner.drain()  # profile postings
    index_listings()
    first = api.call("GET", path, bob.key)
    assert first.status_code == 200, first.json
    cursor = first.json["nextCursor"]
    assert cursor
    assert api.call("GET", f"{path}&cursor={cursor}", bob.key).status_code == 200  # its holder may use it
    body = assert_error(api.call("GET", f"{path}&cursor={cursor}", alice.key), 400, "VALIDATION_ERROR", "cursor")
    assert "another caller" in body["error"]


@pytest.mark.parametrize("header", ["If-Match", "If-None-Match"])
def test_same_key_with_another_conditional_header_is_422(api: Api, alice: User, header: str) -> None:
    listing = create_listing(api, alice)
    path = f"/v1/listings/{listing['id']}"
    etag = api.call("GET", path, alice.key).headers["ETag"]
    body = {"meta": {"title": "Renamed once"}}
    sent = {"idempotency-key": "key-1", header: etag}
    first = api.call("PATCH", path, alice.key, body, headers=sent)
    assert first.status_code == 200, first.json
    again = api.call("PATCH", path, alice.key, body, headers=sent)
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (200, "true")
    for other in ('"bogus"', "*", None):  # another tag, any tag, none: another request
        headers = {"idempotency-key": "key-1", **({header: other} if other else {})}
        assert_error(api.call("PATCH", path, alice.key, body, headers=headers), 422, "IDEMPOTENCY_KEY_REUSED")
    # a tag no version matches is still 412 with a fresh key (and that answer is replayed too)
    stale = {"idempotency-key": "key-2", "If-Match": '"bogus"'}
    assert_error(api.call("PATCH", path, alice.key, body, headers=stale), 412, "PRECONDITION_FAILED")
    assert api.call("PATCH", path, alice.key, body, headers=stale).headers.get("Idempotent-Replayed") == "true"


def test_every_dashboard_answer_carries_the_security_headers(api: Api, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    browser = signed_in(api, alice)
    token = browser.csrf()
    pages = [
        browser.get("/dashboard/webhooks"),  # 200
        browser.get("/dashboard/listings/lst_01JD0000000000000000000000"),  # 404 of the app
        browser.get("/dashboard/listings/" + "x" * 300),  # 404 at the edge (malformed id)
        browser.post("/dashboard/webhooks/whk_1/delete", {"csrf_token": "wrong"}),  # 403
    ]
    statuses = [p.status_code for p in pages]
    assert statuses == [200, 404, 404, 403], statuses
    # answers Chalice gives before any view runs: 415 (not a form) and 405 (wrong method)
    unsupported = api.client.http.post("/dashboard/webhooks", headers={"content-type": "application/json"}, body=b"{}")
    assert unsupported.status_code == 415
    wrong_method = api.client.http.delete("/dashboard/webhooks")
    assert wrong_method.status_code == 405
    # a dependency that does not answer: the 503 page says when to retry
    from chalicelib.webhooks import service as webhook_service

    def down(*_: Any, **__: Any) -> Any:
        raise errors.DependencyUnavailable("ReadTimeoutError: stalled")

    monkeypatch.setattr(webhook_service, "overview", down)
    unavailable = browser.get("/dashboard/webhooks")
    assert unavailable.status_code == 503
    assert unavailable.headers["Retry-After"].isdigit()
    assert "csrf" not in unavailable.headers  # nothing else leaks along
    for response in [*pages, unsupported, wrong_method, unavailable]:
        _assert_security_headers(response)
    assert token


def test_every_api_503_carries_retry_after(api: Api, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.listings import service as listing_service

    def down(*_: Any, **__: Any) -> Any:
        raise errors.DependencyUnavailable("ReadTimeoutError: stalled")

    monkeypatch.setattr(listing_service, "list_my_listings", down)
    response = api.call("GET", "/v1/listings/mine", alice.key)
    assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert response.headers["Retry-After"].isdigit()


@pytest.mark.usefixtures("aws")
def test_the_local_edge_gives_the_dashboard_no_cors_and_its_security_headers(local_server: str) -> None:
    origin = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    for path in ("/dashboard/webhooks", "/dashboard/nowhere"):
        status, headers, body = http_request(f"{local_server}{path}", "OPTIONS", origin)
        assert status == 404, (path, status)
        assert "Access-Control-Allow-Origin" not in headers
        assert json.loads(body)["code"] == "NOT_FOUND"
        for name in SECURITY:
            assert headers.get(name), (path, name)
    status, headers, _ = http_request(f"{local_server}/dashboard/nowhere", "GET", {"Origin": "https://evil.example"})
    assert status == 404
    assert "Access-Control-Allow-Origin" not in headers
    assert all(headers.get(name) for name in SECURITY), headers
    status, headers, _ = http_request(f"{local_server}/v1/listings/lst_1", "OPTIONS", origin)
    assert status == 204  # the API's preflight is unchanged


@pytest.mark.parametrize(
    ("title", "issue"),
    [("\u200b", "format character U+200B"), ("Pay\u202eday", "bidirectional control character U+202E"),
     ("del\x7f", "control character U+007F"), ("c1\x85x", None)],
)
def test_a_title_that_shows_nothing_or_lies_about_its_direction_is_refused(
    api: Api, alice: User, title: str, issue: str | None
) -> None:
    from tests.listing_bodies import listing_body

    response = api.call("POST", "/v1/listings", alice.key, listing_body(meta={"title": title}))
    if issue is None:  # NEL is white space to a text field: folded into a space, as a tab would be
        assert response.status_code == 201, response.json
        assert response.json["meta"]["title"] == "c1 x"
        return
    body = assert_error(response, 400, "VALIDATION_ERROR", "meta.title")
    assert issue in body["details"][0]["issue"]
    response = api.call("PATCH", "/v1/me/profile", alice.key, {"displayName": title})
    assert_error(response, 400, "VALIDATION_ERROR", "displayName")
