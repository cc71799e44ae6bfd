"""The HTTP edge: every failure carries the spec's error body ``{code, error, details?}`` (spec §7, DESIGN §2).

Almost every case here is a rejected request that must change nothing, so they share one
stack per class (:func:`tests.integration.helpers.shared_stack`); the one that writes data uses the
per-test fixtures.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from chalicelib.edge.http import MAX_BODY_BYTES
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User
from tests.integration.helpers import Stack, assert_error, create_listing, error_fields, listing_body, my_listings, shared_stack

SECRET = "s3cr3t-connection-string"


@pytest.fixture(scope="class")
def stack(aws_resources: Resources) -> Iterator[Stack]:
    with shared_stack(aws_resources) as built:
        yield built


def _assert_nothing_created(stack: Stack) -> None:
    assert my_listings(stack.api, stack.alice)["total"] == 0
    assert stack.runner.drain() == 0, "a rejected request must not write an outbox event"


def _json_of_size(size: int) -> bytes:
    """A JSON object body of exactly ``size`` bytes."""
    skeleton = json.dumps({"categoryKey": ""}).encode()
    return json.dumps({"categoryKey": "x" * (size - len(skeleton))}).encode()


def _explode(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(f"database password is {SECRET}")


class TestValidationErrors:
    """400 VALIDATION_ERROR, ``details[].field`` naming the offending field."""

    def test_malformed_json_names_body(self, stack: Stack) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, raw=b'{"categoryKey": "jobs",')
        body = assert_error(response, 400, "VALIDATION_ERROR", field="body")
        assert body["details"][0]["issue"].startswith("malformed JSON")
        _assert_nothing_created(stack)

    def test_invalid_utf8_body_names_body(self, stack: Stack) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, raw=b'{"title": "\xff\xfe"}')
        assert_error(response, 400, "VALIDATION_ERROR", field="body")

    @pytest.mark.parametrize("raw", [b"", b"   \n"], ids=["empty", "whitespace"])
    def test_empty_body_names_body(self, stack: Stack, raw: bytes) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, raw=raw)
        body = assert_error(response, 400, "VALIDATION_ERROR", field="body")
        assert body["error"] == "Request body is empty"
        _assert_nothing_created(stack)

    @pytest.mark.parametrize("raw", [b"[1, 2]", b"null", b'"text"', b"42"], ids=["array", "null", "string", "number"])
    def test_json_that_is_not_an_object_names_body(self, stack: Stack, raw: bytes) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, raw=raw)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["body"]

    @pytest.mark.parametrize(("raw", "field"), [(b'{"title": "a", "title": "b"}', "title"),
                                                (b'{"meta": {"salary": 1, "salary": 2}}', "meta.salary"),
                                                (b'{"title": "a", "meta": {"title": 1, "title": 2}}', "meta.title"),
                                                (b'{"meta": {"x": [{"a": 1}, {"a": 1, "a": 1}]}}', "meta.x.1.a")],
                             ids=["top", "nested", "nested-name-of-a-top-field", "in-a-list"])
    def test_a_member_name_given_twice_is_named_not_resolved(self, stack: Stack, raw: bytes, field: str) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, raw=raw)
        body = assert_error(response, 400, "VALIDATION_ERROR")
        assert body["details"] == [{"field": field, "issue": "is given more than once in one object: send each member once"}]
        _assert_nothing_created(stack)

    def test_wrong_types_name_each_offending_field(self, stack: Stack) -> None:
        body = listing_body()
        body["meta"]["title"] = 5
        body["channels"] = "telegram"
        body["categoryKey"] = ["jobs"]
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert sorted(error_fields(response)) == ["categoryKey", "channels", "meta.title"]
        _assert_nothing_created(stack)

    def test_missing_required_body_field_is_named(self, stack: Stack) -> None:
        body = listing_body()
        del body["roleKey"]
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["roleKey"]

    def test_unknown_body_field_is_rejected_and_named(self, stack: Stack) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, listing_body(priority="high"))
        body = assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["priority"]
        assert "priority" in body["error"]
        _assert_nothing_created(stack)

    def test_unknown_field_in_a_patch_body_is_rejected(self, stack: Stack) -> None:
        response = stack.api.call("PATCH", "/v1/me/profile", stack.alice.key, {"displayName": "A", "nickname": "x"})
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["nickname"]
        assert stack.api.call("GET", "/v1/me", stack.alice.key).json["displayName"] == "Alice"

    def test_invalid_query_parameter_is_named(self, stack: Stack) -> None:
        response = stack.api.call("GET", "/v1/listings/mine?pageSize=0", stack.alice.key)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["pageSize"]

    @pytest.mark.parametrize("path", ["/v1/webhooks?foo=1", "/v1/me/unread?since=x", "/v1/me?fields=displayName"])
    def test_a_query_parameter_of_a_route_that_takes_none_is_named(self, stack: Stack, path: str) -> None:
        response = stack.api.call("GET", path, stack.alice.key)
        body = assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [path.split("?")[1].split("=")[0]]
        assert body["details"][0]["issue"] == "not a parameter of this operation: it takes none"


class TestAuthErrors:
    """401 UNAUTHORIZED (with a Bearer challenge) and 403 FORBIDDEN."""

    def test_missing_authorization_header_is_401_with_challenge(self, stack: Stack) -> None:
        response = stack.api.call("GET", "/v1/categories")
        body = assert_error(response, 401, "UNAUTHORIZED")
        assert "details" not in body
        assert response.headers["WWW-Authenticate"].startswith("Bearer")

    @pytest.mark.parametrize(
        "header",
        ["Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Token {key}", "{key}", "Bearer", "Bearer   ", "Bearer{key}"],
        ids=["basic", "token-scheme", "no-scheme", "bearer-without-key", "bearer-blank", "no-space"],
    )
    def test_wrong_scheme_or_missing_token_is_401(self, stack: Stack, header: str) -> None:
        response = stack.api.call("GET", "/v1/categories", headers={"authorization": header.format(key=stack.alice.key)})
        assert_error(response, 401, "UNAUTHORIZED")

    def test_unknown_api_key_is_401(self, stack: Stack) -> None:
        body = assert_error(stack.api.call("GET", "/v1/categories", stack.alice.key + "x"), 401, "UNAUTHORIZED")
        assert body["error"] == "Invalid API key"

    def test_health_needs_no_key(self, stack: Stack) -> None:
        response = stack.api.call("GET", "/v1/health")
        assert response.status_code == 200
        assert response.json == {"status": "ok"}

    @pytest.mark.parametrize(
        ("method", "path", "body"),
        [
            ("GET", "/v1/admin/approvals", None),
            ("POST", "/v1/admin/approvals/claims", {"max": 1}),
            ("POST", "/v1/admin/approvals/anything", {"decision": "approve"}),
            ("POST", "/v1/admin/users", {"displayName": "Mallory"}),
            ("PATCH", "/v1/admin/users/usr_x", {"verifiedLevel": 3}),
        ],
        ids=["pending", "claim", "decide", "create-user", "patch-user"],
    )
    def test_non_admin_key_gets_403_on_admin_routes(self, stack: Stack, method: str, path: str, body: Any) -> None:
        assert_error(stack.api.call(method, path, stack.alice.key, body), 403, "FORBIDDEN")

    def test_admin_route_without_key_is_401_not_403(self, stack: Stack) -> None:
        assert_error(stack.api.call("GET", "/v1/admin/approvals"), 401, "UNAUTHORIZED")


class TestOtherClientErrors:
    """404, 405, 413 and 415."""

    def test_unknown_listing_is_404(self, stack: Stack) -> None:
        body = assert_error(stack.api.call("GET", "/v1/listings/lst_doesnotexist", stack.alice.key), 404, "NOT_FOUND")
        assert "lst_doesnotexist" in body["error"]

    def test_unknown_category_is_404(self, stack: Stack) -> None:
        body = assert_error(stack.api.call("GET", "/v1/categories/spaceships", stack.alice.key), 404, "NOT_FOUND")
        assert "spaceships" in body["error"]

    @pytest.mark.parametrize(
        ("method", "path"),
        [("DELETE", "/v1/categories"), ("PUT", "/v1/listings"), ("POST", "/v1/listings/search"), ("PUT", "/v1/me/profile")],
    )
    def test_wrong_method_is_405_with_spec_body(self, stack: Stack, method: str, path: str) -> None:
        body = assert_error(stack.api.call(method, path, stack.alice.key, {}), 405, "METHOD_NOT_ALLOWED")
        assert method in body["error"]

    def test_body_over_256_kib_is_413(self, stack: Stack) -> None:
        raw = _json_of_size(MAX_BODY_BYTES + 1)
        assert len(raw) == 256 * 1024 + 1
        body = assert_error(stack.api.call("POST", "/v1/listings", stack.alice.key, raw=raw), 413, "PAYLOAD_TOO_LARGE")
        assert str(MAX_BODY_BYTES) in body["error"]
        _assert_nothing_created(stack)

    def test_body_of_exactly_256_kib_is_parsed_not_413(self, stack: Stack) -> None:
        raw = _json_of_size(MAX_BODY_BYTES)
        assert len(raw) == 256 * 1024
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, raw=raw)
        assert_error(response, 400, "VALIDATION_ERROR")  # parsed, then rejected on its fields
        assert "categoryKey" in error_fields(response)

    def test_oversized_body_on_a_route_without_body_model_is_413(self, stack: Stack) -> None:
        response = stack.api.call("DELETE", "/v1/listings/lst_x", stack.alice.key, raw=b"x" * (MAX_BODY_BYTES + 1))
        assert_error(response, 413, "PAYLOAD_TOO_LARGE")

    def test_non_json_content_type_is_415(self, stack: Stack) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, raw=json.dumps(listing_body()).encode(),
                                  headers={"content-type": "text/plain"})
        body = assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type")
        assert "text/plain" in body["details"][0]["issue"]
        _assert_nothing_created(stack)

    def test_a_content_type_without_a_body_is_no_reason_to_refuse(self, stack: Stack) -> None:
        """Only a body is held to ``application/json``; a request without one passes whatever it is labelled."""
        listing = create_listing(stack.api, stack.alice)
        for method, path in (("GET", "/v1/listings/mine"), ("DELETE", f"/v1/listings/{listing['id']}")):
            response = stack.api.call(method, path, stack.alice.key, raw=b"", headers={"content-type": "text/plain"})
            assert response.status_code == 200, (method, response.json)
        assert stack.api.call("GET", f"/v1/listings/{listing['id']}", stack.alice.key).status_code == 404


class TestInternalErrors:
    """500 INTERNAL_ERROR: a fixed body, never a traceback or the exception's text."""

    def test_unexpected_exception_is_500_without_traceback(self, stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
        from chalicelib.listings import service

        monkeypatch.setattr(service, "create_listing", _explode)
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, listing_body())
        body = assert_error(response, 500, "INTERNAL_ERROR")
        assert body == {
            "code": "INTERNAL_ERROR", "error": "An internal error occurred", "requestId": response.headers["X-Request-Id"]
        }
        raw = response.body.decode()
        for leak in ("Traceback", "RuntimeError", SECRET, 'File "', "line "):
            assert leak not in raw

    def test_unexpected_exception_in_a_read_route_is_500_without_traceback(
        self, stack: Stack, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from chalicelib.search import engine

        monkeypatch.setattr(engine, "search", _explode)  # every search order goes through the engine
        response = stack.api.call("GET", "/v1/listings/search?category=jobs", stack.alice.key)
        assert assert_error(response, 500, "INTERNAL_ERROR") == {
            "code": "INTERNAL_ERROR", "error": "An internal error occurred", "requestId": response.headers["X-Request-Id"]
        }
        assert "Traceback" not in response.body.decode()

    def test_aws_failure_is_500_without_aws_details(self, stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
        from chalicelib.users import repository

        # An AWS error storage does not map (throttling is 503: test_dependency_throttling.py).
        def failed(*args: Any, **kwargs: Any) -> Any:
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": SECRET}}, "GetItem")

        monkeypatch.setattr(repository, "get_user", failed)
        response = stack.api.call("GET", "/v1/me", stack.alice.key)
        assert assert_error(response, 500, "INTERNAL_ERROR")["error"] == "An internal error occurred"
        assert "InternalServerError" not in response.body.decode()
        assert SECRET not in response.body.decode()


def test_invalid_state_change_is_409_conflict(api: Api, alice: User) -> None:
    listing = api.call("POST", "/v1/listings", alice.key, listing_body()).json
    response = api.call("PATCH", f"/v1/listings/{listing['id']}/status", alice.key, {"status": "PAUSED"})
    body = assert_error(response, 409, "CONFLICT")
    assert "PENDING" in body["error"]
