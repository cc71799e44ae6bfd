"""The OpenAPI document: generated from the route table, valid and complete (served without a key,
against real responses: tests/integration/test_openapi_api.py)."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from chalicelib.edge.http import ROUTES, RouteSpec
from chalicelib.openapi.document import ERROR_RESPONSES, build_document, document, error_statuses, path_params


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    import app  # noqa: F401  (registers every route)

    return document()


def _operation(doc: dict[str, Any], spec: RouteSpec) -> dict[str, Any]:
    return dict(doc["paths"][spec.path][spec.method.lower()])


def _validator(doc: dict[str, Any], ref: str) -> Draft202012Validator:
    """A JSON Schema validator for ``ref`` (``#/components/schemas/X``) with the document as registry."""
    registry: Registry[Any] = Registry().with_resource("urn:openapi", DRAFT202012.create_resource(doc))
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "urn:openapi" + ref}
    return Draft202012Validator(schema, registry=registry.crawl())


def test_document_is_valid_openapi_3_1(doc: dict[str, Any]) -> None:
    assert doc["openapi"] == "3.1.0"
    validate(doc)


def test_every_route_is_an_operation_with_a_unique_id(doc: dict[str, Any]) -> None:
    assert ROUTES, "no routes registered"
    operations = [(path, method) for path, methods in doc["paths"].items() for method in methods]
    assert sorted(operations) == sorted((s.path, s.method.lower()) for s in ROUTES)
    ids = [op["operationId"] for methods in doc["paths"].values() for op in methods.values()]
    assert len(ids) == len(set(ids))


def test_success_response_is_the_response_model(doc: dict[str, Any]) -> None:
    for spec in ROUTES:
        responses = _operation(doc, spec)["responses"]
        schema = responses[str(spec.status)]["content"]["application/json"]["schema"]
        if spec.response is not None:
            assert schema == {"$ref": f"#/components/schemas/{spec.response.__name__}"}, spec.path
            assert spec.response.__name__ in doc["components"]["schemas"]


def test_error_statuses_use_the_error_body(doc: dict[str, Any]) -> None:
    error_body = doc["components"]["schemas"]["ErrorBody"]
    assert set(error_body["required"]) == {"code", "error"}
    for status, (name, _) in ERROR_RESPONSES.items():
        response = doc["components"]["responses"][name]
        assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}, status
    assert "Retry-After" in doc["components"]["responses"]["RateLimited"]["headers"]
    assert "WWW-Authenticate" in doc["components"]["responses"]["Unauthorized"]["headers"]
    for spec in ROUTES:
        responses = _operation(doc, spec)["responses"]
        documented = {int(code) for code in responses if not code.startswith(("2", "3"))}
        assert documented == set(error_statuses(spec)), spec.path
        assert {429, 500} <= documented
        assert ("304" in responses) == spec.etag, spec.path


def test_request_ids_retries_and_conditions_are_documented(doc: dict[str, Any]) -> None:
    for spec in ROUTES:
        operation = _operation(doc, spec)
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert "X-Request-Id" in headers, spec.path
        assert ("Idempotency-Key" in headers) == (spec.method in ("POST", "PATCH")), spec.path
        assert ("If-Match" in headers) == spec.conditional, spec.path
        assert ("If-None-Match" in headers) == spec.etag, spec.path
        success = operation["responses"][str(spec.status)]
        assert "X-Request-Id" in success["headers"], spec.path
        assert ("ETag" in success["headers"]) == spec.etag, spec.path
        if spec.method in ("POST", "PATCH"):
            assert {"409", "422"} <= set(operation["responses"]), spec.path
        if spec.conditional:
            assert "412" in operation["responses"], spec.path
    for name, response in doc["components"]["responses"].items():
        assert "X-Request-Id" in response["headers"], name
    assert "requestId" in doc["components"]["schemas"]["ErrorBody"]["properties"]


def test_rate_limits_are_documented(doc: dict[str, Any]) -> None:
    """429 carries Retry-After (always) and the IETF RateLimit fields (not on API Gateway's own throttling);
    every authenticated operation's success carries them, public ones none (chalicelib.rate_limits)."""
    limited = doc["components"]["responses"]["RateLimited"]["headers"]
    assert limited["Retry-After"]["required"] is True
    assert limited["RateLimit-Policy"] == {"$ref": "#/components/headers/RateLimit-Policy"}
    assert limited["RateLimit"] == {"$ref": "#/components/headers/RateLimit"}
    for name in ("RateLimit-Policy", "RateLimit"):
        assert doc["components"]["headers"][name]["required"] is False
    for spec in ROUTES:
        success = _operation(doc, spec)["responses"][str(spec.status)]["headers"]
        assert ({"RateLimit-Policy", "RateLimit"} <= set(success)) == (spec.auth != "none"), spec.path
    assert "429 `RATE_LIMITED`" in doc["info"]["description"]


def test_listing_and_profile_writes_are_conditional(doc: dict[str, Any]) -> None:  # doc: every route registered
    conditional = {(s.method, s.path) for s in ROUTES if s.conditional}
    assert {
        ("PATCH", "/v1/listings/{listingId}"), ("PATCH", "/v1/listings/{listingId}/status"),
        ("DELETE", "/v1/listings/{listingId}"), ("PATCH", "/v1/me/profile"),
    } <= conditional
    assert {(s.method, s.path) for s in ROUTES if s.etag} == {
        ("GET", "/v1/listings/{listingId}"), ("GET", "/v1/profiles/{userId}"), ("GET", "/v1/me"), ("GET", "/v1/me/unread")
    }


@pytest.mark.parametrize(
    ("method", "path", "expected", "absent"),
    [
        # 400: a query parameter or a body it does not take; 413 and 415: any request may carry a body
        ("GET", "/v1/health", {400, 413, 415, 429, 500}, {401, 403}),
        ("GET", "/v1/categories", {400, 401, 413, 415, 429, 500}, {403, 404, 409}),
        ("POST", "/v1/listings", {400, 401, 403, 404, 409, 413, 415, 429, 500}, set()),
        ("GET", "/v1/geocode", {400, 401, 404}, {403, 409}),
        ("GET", "/v1/admin/approvals", {400, 401, 403, 413, 415}, {409}),
        ("POST", "/v1/admin/approvals/claims", {400, 401, 403, 413, 415}, set()),
        ("DELETE", "/v1/listings/{listingId}", {401, 403, 404, 409, 413, 415}, set()),
    ],
)
def test_error_statuses_follow_what_a_route_takes(
    doc: dict[str, Any], method: str, path: str, expected: set[int], absent: set[int]
) -> None:
    spec = next(s for s in ROUTES if s.method == method and s.path == path)
    statuses = set(error_statuses(spec))
    assert expected <= statuses
    assert not absent & statuses


def test_security_is_http_bearer_except_public_routes(doc: dict[str, Any]) -> None:
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer", "description": doc["components"]["securitySchemes"]["bearerAuth"]["description"]
    }
    assert doc["security"] == [{"bearerAuth": []}]
    for spec in ROUTES:
        expected: list[Any] = [] if spec.auth == "none" else [{"bearerAuth": []}]
        assert _operation(doc, spec)["security"] == expected, spec.path
    assert _operation(doc, next(s for s in ROUTES if s.path == "/v1/openapi.json"))["security"] == []


def test_parameters_come_from_the_path_and_the_query_model(doc: dict[str, Any]) -> None:
    for spec in ROUTES:
        params = _operation(doc, spec).get("parameters", [])
        in_path = [p["name"] for p in params if p["in"] == "path"]
        assert in_path == path_params(spec.path)
        assert all(p["required"] for p in params if p["in"] == "path")
        if spec.query is not None:
            in_query = {p["name"] for p in params if p["in"] == "query"}
            assert set(spec.query.model_fields) <= in_query, spec.path
    mine = _operation(doc, next(s for s in ROUTES if s.path == "/v1/listings/mine"))
    page_size = next(p for p in mine["parameters"] if p["name"] == "pageSize")
    assert page_size["schema"]["maximum"] == 100
    assert page_size["required"] is False


def test_search_filters_are_typed_parameters_generated_clients_can_send(doc: dict[str, Any]) -> None:
    search = next(s for s in ROUTES if s.path == "/v1/listings/search")
    params = {p["name"]: p for p in _operation(doc, search)["parameters"]}
    assert {"q", "category", "role", "radiusKm", "page", "pageSize"} <= set(params)
    assert params["page"]["schema"]["type"] == "integer"
    radius = params["radiusKm"]["schema"]
    assert (radius["type"], radius["exclusiveMinimum"], radius["maximum"]) == ("number", 0, 20_038)
    assert params["category"]["schema"]["enum"] == ["cofounders", "housing", "jobs", "mentoring"]
    # Every meta.<key> filter is its own parameter with the schema of its value.
    assert params["meta.location_lat"]["schema"] == {"type": "number", "minimum": -90, "maximum": 90}
    assert params["meta.location_lng"]["schema"] == {"type": "number", "minimum": -180, "maximum": 180}
    assert params["meta.propertyType"]["schema"]["enum"] == ["apartment", "house", "room", "studio"]
    assert {"meta.salary", "meta.salary_min", "meta.salary_max", "meta.skills", "meta.furnished"} <= set(params)
    assert params["meta.furnished"]["schema"]["pattern"] == "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$"
    assert not any("<" in name for name in params)


def test_nullable_fields_are_any_of_with_null(doc: dict[str, Any]) -> None:
    item = doc["components"]["schemas"]["ListingSearchItem"]["properties"]["distanceKm"]
    assert {"type": "null"} in item["anyOf"]
    assert {"type": "number"} in item["anyOf"]


def test_request_bodies_are_the_body_models(doc: dict[str, Any]) -> None:
    for spec in ROUTES:
        operation = _operation(doc, spec)
        if spec.body is None:
            assert "requestBody" not in operation
        else:
            body = operation["requestBody"]
            assert body["required"] is True
            assert body["content"]["application/json"]["schema"] == {"$ref": f"#/components/schemas/{spec.body.__name__}"}


def test_links_follow_identifiers_from_responses_to_path_parameters(doc: dict[str, Any]) -> None:
    created = doc["paths"]["/v1/listings"]["post"]["responses"]["201"]["links"]
    assert created["listings_detail"]["parameters"] == {"path.listingId": "$response.body#/id"}
    claimed = doc["paths"]["/v1/admin/approvals/claims"]["post"]["responses"]["200"]["links"]
    assert claimed["approvals_decide"]["parameters"] == {"path.approvalId": "$response.body#/approvals/0/approvalId"}
    # A category key never fills a channel key.
    categories = doc["paths"]["/v1/categories"]["get"]["responses"]["200"]["links"]
    assert set(categories) == {"categories_category_detail"}


def test_build_document_of_a_subset() -> None:
    import app  # noqa: F401

    health = [s for s in ROUTES if s.path == "/v1/health"]
    built = build_document(health)
    validate(built)
    assert list(built["paths"]) == ["/v1/health"]
