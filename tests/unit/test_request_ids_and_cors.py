"""Request ids and CORS, the pure rules: which id a request gets, which CORS headers an origin gets."""

from __future__ import annotations

import pytest

from chalicelib.edge import cors
from chalicelib.edge.request_context import choose_request_id

# --- request ids: pure rules -------------------------------------------------------------------


@pytest.mark.parametrize("supplied", ["abc-123", "trace:1.2_3", "A" * 128])
def test_a_safe_caller_id_is_kept(supplied: str) -> None:
    assert choose_request_id(supplied, "gw-id") == supplied


@pytest.mark.parametrize("supplied", ["", "has space", "a\nforged log line", 'quote"', "A" * 129, "-leading"])
def test_an_unsafe_caller_id_is_replaced_by_the_gateway_id(supplied: str) -> None:
    assert choose_request_id(supplied, "gw-id") == "gw-id"


def test_without_gateway_id_a_uuid_is_generated() -> None:
    first, second = choose_request_id(None, None), choose_request_id(None, None)
    assert first != second
    assert len(first) == 36


# --- CORS: pure rules --------------------------------------------------------------------------


def test_no_origin_is_allowed_by_default() -> None:
    assert cors.allowed_origins("") == frozenset()
    assert "Access-Control-Allow-Origin" not in cors.response_headers("https://app.example", frozenset())


def test_a_listed_origin_is_echoed_with_vary_and_others_are_not() -> None:
    allowed = cors.allowed_origins("https://app.example, https://admin.example/")
    assert allowed == {"https://app.example", "https://admin.example"}
    headers = cors.response_headers("https://admin.example", allowed)
    assert headers["Access-Control-Allow-Origin"] == "https://admin.example"
    assert headers["Vary"] == "Origin"
    assert "ETag" in headers["Access-Control-Expose-Headers"]
    assert "Access-Control-Allow-Origin" not in cors.response_headers("https://evil.example", allowed)


def test_star_allows_any_origin_without_credentials() -> None:
    headers = cors.response_headers("https://anything.example", frozenset({"*"}))
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in headers


def test_preflight_lists_methods_and_request_headers() -> None:
    headers = cors.preflight_headers("https://app.example", ["PATCH", "GET"], frozenset({"https://app.example"}))
    assert headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert headers["Access-Control-Allow-Methods"] == "GET, OPTIONS, PATCH"
    for name in ("Authorization", "Content-Type", "Idempotency-Key", "If-Match", "If-None-Match", "X-Request-Id"):
        assert name in headers["Access-Control-Allow-Headers"]
    refused = cors.preflight_headers("https://evil.example", ["GET"], frozenset({"https://app.example"}))
    assert "Access-Control-Allow-Origin" not in refused
