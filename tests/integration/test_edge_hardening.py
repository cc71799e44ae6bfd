"""Edge hardening: cursors bound to their caller on every list, If-Match and
If-None-Match in the idempotency fingerprint, the Dashboard's security headers on every answer,
no CORS on the Dashboard, Retry-After on every 503."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from chalicelib.kernel import errors
from tests.integration.conftest import Api, User, serve_locally
from tests.integration.helpers import assert_error, create_listing, http_request, index_listings
from tests.integration.request_helpers import active_listing
from tests.integration.test_dashboard import signed_in
from tests.waiting import wait_until

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


def _chunked_post(base: str, path: str, key: str, chunks: Iterator[bytes]) -> tuple[int, dict[str, Any]]:
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=10)
    try:
        connection.request("POST", path, body=chunks, encode_chunked=True,
                           headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_local_edge_reads_a_chunked_body_as_api_gateway_does(local_server: str, alice: User) -> None:
    chunks = iter([b'{"url": "http://127.0.0.1:9/', b'chunked", "name": "Sent in ', b'chunks"}'])
    status, created = _chunked_post(local_server, "/v1/webhooks", alice.key, chunks)
    assert status == 201, created
    assert (created["url"], created["name"]) == ("http://127.0.0.1:9/chunked", "Sent in chunks")


def test_the_local_edge_keeps_a_semicolon_in_the_path_as_api_gateway_does(local_server: str, api: Api, alice: User) -> None:
    """``;x`` after an id is part of the id (404 before any read), not parameters to drop."""
    listing = create_listing(api, alice)
    for method, path in (("DELETE", f"/v1/listings/{listing['id']};x"), ("GET", f"/v1/listings/{listing['id']};x=%00"),
                         ("GET", "/v1/categories/jobs;x"), ("GET", "/v1/health;x"), ("OPTIONS", "/v1/health;x")):
        status, _, body = http_request(local_server + path, method, {"Authorization": f"Bearer {alice.key}"})
        assert (status, json.loads(body)["code"]) == (404, "NOT_FOUND"), (method, path)
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).status_code == 200  # nothing deleted


def test_a_malformed_chunked_body_is_refused_naming_the_body(local_server: str, alice: User) -> None:
    address = urlsplit(local_server)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=10)
    try:
        connection.putrequest("POST", "/v1/webhooks")
        for name, value in (("Authorization", f"Bearer {alice.key}"), ("Content-Type", "application/json"),
                            ("Transfer-Encoding", "chunked")):
            connection.putheader(name, value)
        connection.endheaders(b"zz\r\n{}\r\n0\r\n\r\n")  # "zz" is no chunk size
        response = connection.getresponse()
        body = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 400
    assert (body["code"], body["details"][0]["field"]) == ("VALIDATION_ERROR", "body")


def test_the_local_edge_wakes_the_event_runner_after_a_write_and_not_after_a_read(api: Api, alice: User) -> None:
    woken: list[str] = []
    with serve_locally(lambda: woken.append("woken")) as base:
        status, _, _ = http_request(f"{base}/v1/me", "GET", {"Authorization": f"Bearer {alice.key}"})
        assert status == 200
        status, _ = _chunked_post(base, "/v1/webhooks", alice.key, iter([b'{"url": "http://127.0.0.1:9/w"}']))
        assert status == 201
        wait_until(lambda: woken)  # the server wakes the runner once its answer is sent
        assert woken == ["woken"]  # by the write alone


def test_the_local_edge_refuses_a_body_over_the_gateway_limit_before_reading_it(local_server: str, alice: User) -> None:
    address = urlsplit(local_server)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=10)
    try:
        connection.putrequest("POST", "/v1/webhooks")
        connection.putheader("Authorization", f"Bearer {alice.key}")
        connection.putheader("Content-Length", str(11 * 1024 * 1024))
        connection.endheaders()  # no body sent: the answer comes without it
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())["code"]) == (413, "PAYLOAD_TOO_LARGE")
    finally:
        connection.close()


def _send_lines(base: str, method: str, path: str, lines: list[tuple[str, str]], body: bytes = b"") -> tuple[int, dict[str, Any]]:
    """``method path`` with the header field lines ``lines`` as given (a name may repeat) and ``body``."""
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=10)
    try:
        connection.putrequest(method, path)
        for name, value in [*lines, ("Content-Length", str(len(body)))]:
            connection.putheader(name, value)
        connection.endheaders(body or None)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_repeated_header_lines_read_as_their_joined_field_not_as_one_of_them(
    api: Api, local_server: str, alice: User, bob: User
) -> None:
    def webhooks() -> int:
        return len(api.call("GET", "/v1/webhooks", alice.key).json["webhooks"])

    two_keys = [("Authorization", f"Bearer {alice.key}"), ("Authorization", f"Bearer {bob.key}")]
    status, body = _send_lines(local_server, "GET", "/v1/me", two_keys)
    assert (status, body["code"]) == (401, "UNAUTHORIZED")  # "Bearer A, Bearer B" is no key
    sent = b'{"url": "http://127.0.0.1:9/twice"}'
    before = webhooks()
    lines = [("Authorization", f"Bearer {alice.key}"), ("Content-Type", "application/json"),
             ("Idempotency-Key", "first"), ("Idempotency-Key", "second")]
    status, body = _send_lines(local_server, "POST", "/v1/webhooks", lines, sent)
    assert (status, body["code"], body["details"][0]["field"]) == (400, "VALIDATION_ERROR", "Idempotency-Key")
    for types in (("application/json", "text/plain"), ("text/plain", "application/json")):
        lines = [("Authorization", f"Bearer {alice.key}"), *(("Content-Type", t) for t in types)]
        status, body = _send_lines(local_server, "POST", "/v1/webhooks", lines, sent)
        assert (status, body["code"], body["details"][0]["field"]) == (415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type")
    assert webhooks() == before


@pytest.mark.parametrize("encoding", ["gzip", "br", "identity, gzip"])
def test_a_body_sent_with_a_content_coding_is_refused_and_changes_nothing(api: Api, alice: User, encoding: str) -> None:
    response = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/coded"}, headers={"Content-Encoding": encoding})
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding")
    assert api.call("GET", "/v1/webhooks", alice.key).json["webhooks"] == []
    plain = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/plain"}, headers={"Content-Encoding": "identity"})
    assert plain.status_code == 201, plain.json


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-32"])
def test_a_body_not_in_utf8_is_refused_and_changes_nothing(api: Api, alice: User, codec: str) -> None:
    body = json.dumps({"url": "http://127.0.0.1:9/wide"}).encode(codec)
    assert_error(api.call("POST", "/v1/webhooks", alice.key, raw=body), 400, "VALIDATION_ERROR", "body")
    assert api.call("GET", "/v1/webhooks", alice.key).json["webhooks"] == []
    marked = api.call("POST", "/v1/webhooks", alice.key, raw=b"\xef\xbb\xbf" + json.dumps({"url": "http://127.0.0.1:9/bom"}).encode())
    assert marked.status_code == 201, marked.json  # a UTF-8 byte order mark is ignored (RFC 8259, section 8.1)


def test_a_get_refuses_a_body_as_any_operation_that_takes_none(api: Api, alice: User) -> None:
    assert_error(api.call("GET", "/v1/me", alice.key, {"displayName": "x"}), 400, "VALIDATION_ERROR", "displayName")
    assert_error(api.call("GET", "/v1/me", alice.key, raw=b"{"), 400, "VALIDATION_ERROR", "body")
    assert_error(api.call("GET", "/v1/me", alice.key, raw=b"x", headers={"content-type": "text/plain"}),
                 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type")
    assert api.call("GET", "/v1/me", alice.key, {}).status_code == 200  # clients that always send an object work


def _raw_exchange(base: str, request: bytes) -> tuple[int, dict[str, Any]]:
    """Send ``request`` bytes as they are and read the one answer (the server closes after it)."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname or "", address.port or 80), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


@pytest.mark.parametrize(("lengths", "status"), [
    (["2", "2"], 200), (["2, 2"], 200),  # the same length repeated (RFC 9112 §6.3 lets a recipient fold it)
    (["2", "3"], 400), (["abc"], 400), (["1.5"], 400), (["-2"], 400), ([""], 400),
])
def test_the_local_edge_answers_an_invalid_content_length_with_a_400_naming_it(
    local_server: str, alice: User, lengths: list[str], status: int
) -> None:
    lines = "".join(f"Content-Length: {value}\r\n" for value in lengths)
    request = (f"GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {alice.key}\r\n"
               f"Content-Type: application/json\r\n{lines}Connection: close\r\n\r\n{{}}").encode()
    answered, body = _raw_exchange(local_server, request)
    assert answered == status, body
    if status == 400:
        assert (body["code"], body["details"][0]["field"]) == ("VALIDATION_ERROR", "Content-Length")


def test_the_local_edge_reads_a_chunked_body_whatever_content_length_says(local_server: str, alice: User) -> None:
    body = b'{"url": "http://127.0.0.1:9/framed"}'
    request = (f"POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {alice.key}\r\n"
               "Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n"
               "Connection: close\r\n\r\n").encode() + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    status, created = _raw_exchange(local_server, request)
    assert (status, created["url"]) == (201, "http://127.0.0.1:9/framed")  # RFC 9112 §6.3: the chunked framing wins
