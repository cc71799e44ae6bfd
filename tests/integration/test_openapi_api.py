"""The OpenAPI document served without a key, and real responses against it (the document itself:
tests/unit/test_openapi.py)."""

from __future__ import annotations

from typing import Any

import pytest
from openapi_spec_validator import validate

from chalicelib.openapi.document import document
from tests.integration.conftest import Api, make_user
from tests.unit.test_openapi import _validator


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    import app  # noqa: F401  (registers every route)

    return document()


def test_served_without_a_key_with_the_server_url(api: Api) -> None:
    response = api.call("GET", "/v1/openapi.json", headers={"host": "api.example.org", "x-forwarded-proto": "https"})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    served = response.json
    assert served["paths"] == document()["paths"]
    assert served["servers"] == [{"url": "https://api.example.org"}]
    validate(served)


def test_real_responses_match_their_schemas(api: Api, doc: dict[str, Any]) -> None:
    user = make_user("Grace")
    for path, ref in [("/v1/me", "Profile"), ("/v1/categories", "CategoryList"), ("/v1/me/channels", "ChannelList")]:
        response = api.call("GET", path, key=user.key)
        assert response.status_code == 200, response.json
        _validator(doc, f"#/components/schemas/{ref}").validate(response.json)
    missing = api.call("GET", "/v1/listings/nope", key=user.key)
    assert missing.status_code == 404
    _validator(doc, "#/components/schemas/ErrorBody").validate(missing.json)


def test_wrong_method_lists_the_routes_methods_in_allow(api: Api) -> None:
    user = make_user("Edsger")
    response = api.call("PUT", "/v1/listings/abc", key=user.key, body={})
    assert response.status_code == 405
    assert response.json["code"] == "METHOD_NOT_ALLOWED"
    assert response.headers["Allow"] == "DELETE, GET, OPTIONS, PATCH"  # the gateway answers OPTIONS (preflight) too


@pytest.mark.parametrize(
    ("body", "field"),
    [({"displayName": "Ada", "verifiedLevel": False}, "verifiedLevel"), ({"displayName": "Ada", "admin": 0}, "admin"),
     ({"displayName": "Ada", "verifiedLevel": "2"}, "verifiedLevel")],
)
def test_body_values_must_have_the_documented_json_type(api: Api, body: dict[str, Any], field: str) -> None:
    admin = make_user("Root", admin=True)
    response = api.call("POST", "/v1/admin/users", key=admin.key, body=body)
    assert response.status_code == 400
    assert [d["field"] for d in response.json["details"]] == [field]


def test_the_reference_page_with_a_trailing_slash_redirects_to_the_url_its_assets_resolve_from(local_server: str) -> None:
    """``/docs/`` reaches the page's route (Chalice and API Gateway ignore the slash), but its relative
    asset URLs would resolve under ``/docs/docs/``: a 308 to ``/docs``."""
    import httpx

    slashed = httpx.get(f"{local_server}/docs/", follow_redirects=False, timeout=10)
    assert (slashed.status_code, slashed.headers["location"]) == (308, "/docs")
    assert httpx.get(f"{local_server}/docs/", follow_redirects=True, timeout=10).text.startswith("<!doctype html>")
