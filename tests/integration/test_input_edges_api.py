"""The input edges over HTTP: JSON depth, control characters, number bounds, path ids
validated at the edge for every route (404 without a read), and webhookIds in the owner's view only."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from chalicelib.edge import http
from tests.integration.conftest import Api, User
from tests.integration.helpers import (
    Stack,
    activate,
    assert_error,
    aws_calls,
    class_stack,  # noqa: F401  (the class-scoped ``stack`` fixture)
    create_listing,
    my_listings,
)
from tests.integration.webhook_helpers import create_webhook
from tests.listing_bodies import listing_body


def test_a_body_of_20000_nested_arrays_is_a_validation_error_naming_body(api: Api, alice: User) -> None:
    raw = b"[" * 20_000 + b"]" * 20_000
    assert_error(api.call("POST", "/v1/listings", alice.key, raw=raw), 400, "VALIDATION_ERROR", "body")
    deep = {"meta": {"title": "x"}}
    cursor: Any = deep
    for _ in range(40):
        cursor["x"] = {}
        cursor = cursor["x"]
    assert_error(api.call("POST", "/v1/listings", alice.key, body=deep), 400, "VALIDATION_ERROR", "body")


@pytest.mark.parametrize("title", ["\u0000", "Backend\u0000engineer", "bell\u0007", "esc\u001b[31m"])
def test_control_characters_in_a_text_field_are_rejected_and_nothing_is_stored(api: Api, alice: User, title: str) -> None:
    response = api.call("POST", "/v1/listings", alice.key, listing_body(meta={"title": title}))
    assert_error(response, 400, "VALIDATION_ERROR", "meta.title")
    assert my_listings(api, alice)["total"] == 0


def test_control_characters_in_ids_names_and_queries_are_rejected(api: Api, alice: User) -> None:
    body = listing_body(webhookIds=["whk_\u0000"])
    assert_error(api.call("POST", "/v1/listings", alice.key, body), 400, "VALIDATION_ERROR", "webhookIds.0")
    response = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/hook", "name": "a\u0001b"})
    assert_error(response, 400, "VALIDATION_ERROR", "name")
    assert_error(api.call("GET", "/v1/listings/search?q=a%00b", alice.key), 400, "VALIDATION_ERROR", "q")


@pytest.mark.parametrize(("path", "name"), [
    ("/v1/profiles/search?skills=python&skills=aws", "skills"),
    ("/v1/listings/search?category=housing&category=jobs", "category"),
    ("/v1/events?type=message.new&type=match_request.received", "type"),
])
def test_a_query_parameter_given_twice_is_a_validation_error_naming_it(api: Api, alice: User, path: str, name: str) -> None:
    assert_error(api.call("GET", path, alice.key), 400, "VALIDATION_ERROR", name)


@pytest.mark.parametrize(("bad", "good", "name"), [
    ("/v1/profiles/search?pageSize=5.0", "/v1/profiles/search?pageSize=5", "pageSize"),
    ("/v1/profiles/search?openToWork=yes", "/v1/profiles/search?openToWork=TRUE", "openToWork"),
    ("/v1/profiles/search?remote=1", "/v1/profiles/search?remote=false", "remote"),
    ("/v1/profiles/search?minVerifiedLevel=%2B1", "/v1/profiles/search?minVerifiedLevel=1", "minVerifiedLevel"),
    ("/v1/listings/search?meta.location_lat=52.5&meta.location_lng=13.4&radiusKm=nan",
     "/v1/listings/search?meta.location_lat=52.5&meta.location_lng=13.4&radiusKm=1e2", "radiusKm"),
    ("/v1/conversations?page=%201", "/v1/conversations?page=1", "page"),
    ("/v1/admin/audit-log?pageSize=2_0", "/v1/admin/audit-log?pageSize=20", "pageSize"),
])
def test_a_number_or_boolean_query_parameter_takes_only_its_json_text(
    api: Api, alice: User, admin: User, bad: str, good: str, name: str
) -> None:
    key = admin.key if bad.startswith("/v1/admin/") else alice.key
    assert_error(api.call("GET", bad, key), 400, "VALIDATION_ERROR", name)
    assert api.call("GET", good, key).status_code == 200


@pytest.mark.parametrize("path", ["/v1/listings/search?q=%FF", "/v1/profiles/search?q=%ED%A0%80", "/v1/geocode?q=%C0%AF"])
def test_a_query_value_that_is_not_utf8_is_a_validation_error_naming_it(api: Api, alice: User, path: str) -> None:
    assert_error(api.call("GET", path, alice.key), 400, "VALIDATION_ERROR", "q")


@pytest.mark.parametrize(("body", "field"), [
    ('{"displayName": "a\\ud800b"}', "displayName"),
    ('{"displayName": "ok", "socialLinks": {"website": "https://x.example/\\udfff"}}', "socialLinks.website"),
])
def test_an_unpaired_surrogate_is_a_validation_error_naming_its_field(api: Api, alice: User, body: str, field: str) -> None:
    before = api.call("GET", "/v1/me", alice.key).json
    response = api.call("PATCH", "/v1/me/profile", alice.key, raw=body.encode())
    assert_error(response, 400, "VALIDATION_ERROR", field)
    assert "U+D" in response.json["details"][0]["issue"]
    assert api.call("GET", "/v1/me", alice.key).json == before


@pytest.mark.parametrize(("path", "body", "field", "issue"), [
    ("/v1/saved-searches", {"query": {"q": ["x"]}}, "query.q", "valid string"),
    ("/v1/saved-searches", {"query": {"q": "x" * 600}}, "query.q", "at most 512 characters"),
    ("/v1/admin/users", {"displayName": "Zoe", "channels": {"icq": "x"}}, "channels.icq", "'telegram'"),
])
def test_an_error_inside_a_union_or_a_dict_key_names_the_field_as_sent(
    api: Api, alice: User, admin: User, path: str, body: dict[str, Any], field: str, issue: str
) -> None:
    response = api.call("POST", path, admin.key if path.startswith("/v1/admin/") else alice.key, body)
    assert_error(response, 400, "VALIDATION_ERROR")
    [detail] = response.json["details"]
    assert detail["field"] == field
    assert issue in detail["issue"]


def test_an_array_query_parameter_is_documented_as_one_comma_separated_value(api: Api) -> None:
    document = api.call("GET", "/v1/openapi.json").json
    (skills,) = [p for p in document["paths"]["/v1/profiles/search"]["get"]["parameters"] if p["name"] == "skills"]
    assert (skills["schema"]["type"], skills["style"], skills["explode"]) == ("array", "form", False)


def test_newlines_stay_allowed_in_multi_line_text(api: Api, alice: User) -> None:
    listing = create_listing(api, alice, meta={"description": "<p>one</p>\n<p>two</p>\t"})
    assert "\n" in listing["meta"]["description"]


def test_integer_and_number_fields_are_bounded(api: Api, alice: User) -> None:
    huge = "1000000000000000000000000000000"
    response = api.call("POST", "/v1/listings", alice.key, listing_body(meta={"experienceYears": huge}))
    assert_error(response, 400, "VALIDATION_ERROR", "meta.experienceYears")
    response = api.call("POST", "/v1/listings", alice.key, listing_body(meta={"salary": "1" + "0" * 20}))
    assert_error(response, 400, "VALIDATION_ERROR", "meta.salary")
    assert my_listings(api, alice)["total"] == 0
    # the bounds are part of the category record
    fields = {f["key"]: f for f in api.call("GET", "/v1/categories/jobs", alice.key).json["fields"]}
    assert (fields["experienceYears"]["minimum"], fields["experienceYears"]["maximum"]) == (-(2**53 - 1), 2**53 - 1)
    # and of the OpenAPI document: a JSON integer beyond 2**53 - 1 is refused wherever it appears
    raw = json.dumps({"url": "http://127.0.0.1:9/hook"})[:-1] + ', "extra": 100000000000000000000000}'
    assert_error(api.call("POST", "/v1/webhooks", alice.key, raw=raw.encode()), 400, "VALIDATION_ERROR", "extra")


def _bad_ids(name: str) -> list[str]:
    long_limit = 2049 if name == "approvalId" else 129
    return ["x" * long_limit, "a%00b", "a%20b", "%C3%BC", "a.b"]


import app  # noqa: E402 -- registers every route in http.ROUTES

assert app.app  # every route of the API, not only those a previous test module happened to import
ROUTES = sorted({(spec.method, spec.path) for spec in http.ROUTES if "{" in spec.path})


class TestMalformedPathIds:
    """Refused at the edge before any read: one shared stack for every route."""

    @pytest.mark.parametrize(("method", "path"), ROUTES)
    def test_every_route_answers_a_malformed_path_id_404_without_reading(self, stack: Stack, method: str, path: str) -> None:
        key = stack.admin.key if path.startswith("/v1/admin") else stack.alice.key
        for name in re.findall(r"{([^}]+)}", path):
            for bad in _bad_ids(name):
                url = re.sub(r"{([^}]+)}", lambda m, n=name, b=bad: b if m.group(1) == n else "ok_1", path)
                with aws_calls("GetItem") as gets, aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches:
                    response = stack.api.call(method, url, key, body={} if method in ("POST", "PUT", "PATCH") else None)
                assert_error(response, 404, "NOT_FOUND")
                reads = [c for c in gets + batches + queries if "ApiKeys" not in json.dumps(c)]
                assert reads == [], (method, url, reads)


def test_webhook_ids_appear_only_in_the_owners_view(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    hook = create_webhook(api, alice, "http://127.0.0.1:9/hook")
    created = create_listing(api, alice, webhookIds=[hook["id"]])
    assert created["webhookIds"] == [hook["id"]]
    [approved] = activate(api, admin, runner, created["id"])
    assert "webhookIds" not in approved  # the administrator is not the owner
    own = api.call("GET", f"/v1/listings/{created['id']}", alice.key).json
    assert own["webhookIds"] == [hook["id"]]
    assert my_listings(api, alice)["listings"][0]["webhookIds"] == [hook["id"]]
    other = api.call("GET", f"/v1/listings/{created['id']}", bob.key)
    assert other.status_code == 200, other.json
    assert "webhookIds" not in other.json
    found = api.call("GET", "/v1/listings/search?category=jobs", bob.key).json["listings"]
    assert [item["id"] for item in found] == [created["id"]]
    assert all("webhookIds" not in item for item in found)
    mine_in_search = api.call("GET", "/v1/listings/search?category=jobs", alice.key).json["listings"]
    assert all("webhookIds" not in item for item in mine_in_search)  # search results never carry them
    updated = api.call("PATCH", f"/v1/listings/{created['id']}", alice.key, {"channels": ["telegram"]})
    assert updated.status_code == 200, updated.json
    assert updated.json["webhookIds"] == [hook["id"]]


def test_dashboard_pages_answer_a_malformed_path_id_404_without_reading(api: Api, alice: User) -> None:
    from tests.integration.test_dashboard import signed_in

    browser = signed_in(api, alice)
    for bad in ("x" * 129, "a%00b", "a.b"):
        with aws_calls("GetItem") as gets, aws_calls("Query") as queries:
            response = browser.get(f"/dashboard/listings/{bad}")
        assert response.status_code == 404
        assert [c for c in gets + queries if "Sessions" not in json.dumps(c) and "ApiKeys" not in json.dumps(c)] == []


@pytest.mark.parametrize("path", ["/v1/listings/{id}", "/v1/webhooks/{id}/deliveries"])
def test_a_5000_character_path_id_is_404_and_the_access_line_holds_at_most_its_first_128(
    api: Api, alice: User, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    long_id = "lst_" + "A" * 4996
    with caplog.at_level("INFO"):
        response = api.call("GET", path.format(id=long_id), alice.key)
    assert response.status_code == 404
    [line] = [r for r in caplog.records if r.getMessage() == "request"]
    logged = str(line.__dict__["path"])
    assert long_id not in logged
    assert f"{long_id[:128]}...(5000 characters)" in logged
    assert all(long_id not in r.getMessage() and long_id not in str(r.__dict__) for r in caplog.records)
