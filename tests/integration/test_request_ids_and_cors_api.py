"""X-Request-Id on every response, requestId in error bodies, correlated JSON logs; CORS headers and
the preflight the local server answers as API Gateway does."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest

from chalicelib.edge.request_context import logger
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error, http_request
from tests.integration.webhook_helpers import use_settings

# --- request ids over the API ------------------------------------------------------------------


def test_every_response_carries_a_request_id_and_errors_repeat_it(api: Api, alice: User) -> None:
    ok = api.call("GET", "/v1/me", alice.key)
    assert len(ok.headers["X-Request-Id"]) == 36
    missing = api.call("GET", "/v1/listings/lst_nope", alice.key)
    assert_error(missing, 404, "NOT_FOUND")  # asserts requestId == X-Request-Id
    wrong_method = api.call("PUT", "/v1/me", alice.key)
    assert_error(wrong_method, 405, "METHOD_NOT_ALLOWED")
    assert_error(api.call("GET", "/v1/me"), 401, "UNAUTHORIZED")


def test_a_caller_request_id_is_echoed_and_correlates_the_logs(api: Api, alice: User) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)  # powertools' JSON formatter, as in production
    logging.getLogger(logger.name).addHandler(handler)
    try:
        response = api.call("GET", "/v1/listings/lst_nope", alice.key, headers={"x-request-id": "client-trace-42"})
    finally:
        logging.getLogger(logger.name).removeHandler(handler)
    assert response.headers["X-Request-Id"] == "client-trace-42"
    assert response.json["requestId"] == "client-trace-42"
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    [access] = [line for line in lines if line.get("message") == "request"]
    assert access["correlation_id"] == "client-trace-42"
    assert (access["method"], access["path"], access["status"]) == ("GET", "/v1/listings/lst_nope", 404)
    assert isinstance(access["durationMs"], float)


def test_a_forged_request_id_is_not_echoed(api: Api, alice: User) -> None:
    response = api.call("GET", "/v1/me", alice.key, headers={"x-request-id": "x y"})
    assert response.headers["X-Request-Id"] != "x y"


# --- CORS over the API and the local server's preflight ---------------------------------------


@pytest.fixture
def allow_app_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allow one origin; settings are re-read now, outside any request (see ``use_settings``)."""
    use_settings(monkeypatch, CORS_ALLOWED_ORIGINS="https://app.example")


@pytest.mark.usefixtures("allow_app_origin")
def test_api_responses_carry_cors_headers_for_an_allowed_origin(api: Api, alice: User) -> None:
    ok = api.call("GET", "/v1/me", alice.key, headers={"origin": "https://app.example"})
    assert ok.headers["Access-Control-Allow-Origin"] == "https://app.example"
    error = api.call("GET", "/v1/listings/lst_x", alice.key, headers={"origin": "https://app.example"})
    assert error.headers["Access-Control-Allow-Origin"] == "https://app.example"  # errors are readable too
    other = api.call("GET", "/v1/me", alice.key, headers={"origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


@pytest.mark.usefixtures("allow_app_origin")
def test_local_server_answers_preflight_as_the_gateway_does(local_server: str) -> None:
    status, headers, body = http_request(f"{local_server}/v1/listings/lst_1", "OPTIONS", {
        "Origin": "https://app.example", "Access-Control-Request-Method": "PATCH",
        "Access-Control-Request-Headers": "authorization, if-match, idempotency-key",
    })
    assert (status, body) == (204, b"")
    assert headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert headers["Access-Control-Allow-Methods"] == "DELETE, GET, OPTIONS, PATCH"
    assert "If-Match" in headers["Access-Control-Allow-Headers"]
    assert headers["X-Request-Id"]
    status, headers, _ = http_request(f"{local_server}/v1/listings/lst_1", "OPTIONS", {"Origin": "https://evil.example"})
    assert status == 204
    assert "Access-Control-Allow-Origin" not in headers
    status, headers, body = http_request(f"{local_server}/v1/nowhere", "OPTIONS", {"Origin": "https://app.example"})
    assert status == 404
    error: dict[str, Any] = json.loads(body)
    assert error["requestId"] == headers["X-Request-Id"]


def test_an_options_request_with_a_body_keeps_the_connection_in_step(local_server: str) -> None:
    import http.client

    host, port = local_server.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("OPTIONS", "/v1/health", body=b'{"ignored": true}', headers={"Content-Type": "application/json"})
    first = connection.getresponse()
    first.read()
    connection.request("GET", "/v1/health")  # same connection: the OPTIONS body must have been consumed
    second = connection.getresponse()
    assert (first.status, second.status) == (204, 200)
    assert json.loads(second.read()) == {"status": "ok"}


def test_local_server_no_route_404_carries_a_request_id(local_server: str) -> None:
    status, headers, body = http_request(f"{local_server}/v1/nowhere", "GET", {"X-Request-Id": "trace-7"})
    assert status == 404
    assert headers["X-Request-Id"] == "trace-7"
    assert json.loads(body) == {"code": "NOT_FOUND", "error": "No route matches GET /v1/nowhere", "requestId": "trace-7"}
