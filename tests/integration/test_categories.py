"""``GET /v1/categories`` and ``GET /v1/categories/{key}`` (spec §2 Category, DESIGN §2 "Categories")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.categories.models import ENCODINGS, FieldType
from tests.integration.aws_session import Resources
from tests.integration.helpers import Stack, assert_error, shared_stack

CATEGORY_KEYS = {"key", "name", "description", "roles", "fields", "language"}  # language: the search analyzer's
ROLE_KEYS = {"key", "name", "description"}
FIELD_KEYS = {"key", "label", "type", "roles", "requiredFor", "options", "encoding", "filterable", "description",
              "minimum", "maximum", "maxLength"}
FIELD_TYPES = {t.value for t in FieldType}
FILTERABLE = {"select", "multiselect", "number", "integer", "boolean", "location"}


@pytest.fixture(scope="module")
def stack(aws_resources: Resources) -> Iterator[Stack]:
    """Categories are read-only data files: one stack serves the whole module."""
    with shared_stack(aws_resources) as built:
        yield built


@pytest.fixture(scope="module")
def categories(stack: Stack) -> list[dict[str, Any]]:
    response = stack.api.call("GET", "/v1/categories", stack.alice.key)
    assert response.status_code == 200, response.json
    assert set(response.json) == {"categories"}
    result: list[dict[str, Any]] = response.json["categories"]
    return result


def test_at_least_four_seeded_categories(categories: list[dict[str, Any]]) -> None:
    keys = [c["key"] for c in categories]
    assert len(keys) >= 4
    assert {"jobs", "housing", "mentoring", "cofounders"} <= set(keys)
    assert len(keys) == len(set(keys))


def test_categories_together_use_the_core_field_types(categories: list[dict[str, Any]]) -> None:
    used = {f["type"] for c in categories for f in c["fields"]}
    assert {"text", "richtext", "location", "select", "multiselect", "number"} <= used
    assert used <= FIELD_TYPES


def test_each_category_has_the_core_field_types_and_role_specific_required_fields(categories: list[dict[str, Any]]) -> None:
    for category in categories:
        types = {f["type"] for f in category["fields"]}
        assert {"text", "richtext", "location", "select", "multiselect", "number"} <= types, category["key"]
        role_keys = {r["key"] for r in category["roles"]}
        assert len(role_keys) >= 2, category["key"]
        per_role = [f["key"] for f in category["fields"] if f["requiredFor"] and set(f["requiredFor"]) != role_keys]
        assert per_role, f"{category['key']}: no field is required for only some roles"


def test_every_record_has_the_documented_shape(categories: list[dict[str, Any]]) -> None:
    for category in categories:
        assert set(category) == CATEGORY_KEYS, category["key"]
        assert category["name"]
        assert category["description"]
        assert category["language"] == "english"  # every bundled category declares its stemmer
        assert category["roles"], category["key"]
        for role in category["roles"]:
            assert set(role) == ROLE_KEYS
            assert all(role[k] for k in ROLE_KEYS)
        for field in category["fields"]:
            assert set(field) == FIELD_KEYS, (category["key"], field["key"])
            assert field["type"] in FIELD_TYPES
            assert field["encoding"] == ENCODINGS[FieldType(field["type"])]
            assert field["filterable"] is (field["type"] in FILTERABLE)


def test_every_category_has_a_title_text_field_required_for_every_role(categories: list[dict[str, Any]]) -> None:
    for category in categories:
        title = next(f for f in category["fields"] if f["key"] == "title")
        role_keys = {r["key"] for r in category["roles"]}
        assert title["type"] == "text"
        assert set(title["requiredFor"]) == role_keys


def test_field_roles_and_required_flags_are_consistent(categories: list[dict[str, Any]]) -> None:
    for category in categories:
        role_keys = {r["key"] for r in category["roles"]}
        for field in category["fields"]:
            assert field["roles"], (category["key"], field["key"])
            assert set(field["roles"]) <= role_keys, (category["key"], field["key"])
            assert set(field["requiredFor"]) <= set(field["roles"]), (category["key"], field["key"])


def test_required_flags_differ_per_role(categories: list[dict[str, Any]]) -> None:
    jobs = next(c for c in categories if c["key"] == "jobs")
    fields = {f["key"]: f for f in jobs["fields"]}
    assert fields["description"]["requiredFor"] == ["hiring"]
    assert fields["skills"]["requiredFor"] == ["seeking"]
    assert fields["visaSponsorship"]["roles"] == ["hiring"]
    assert fields["portfolio"]["roles"] == ["seeking"]


def test_select_fields_carry_options_and_others_do_not(categories: list[dict[str, Any]]) -> None:
    for category in categories:
        for field in category["fields"]:
            if field["type"] in ("select", "multiselect"):
                assert field["options"], (category["key"], field["key"])
                keys = [o["key"] for o in field["options"]]
                assert len(keys) == len(set(keys))
                assert all(set(o) == {"key", "label"} and o["label"] for o in field["options"])
            else:
                assert field["options"] is None


def test_at_most_one_location_field_per_category(categories: list[dict[str, Any]]) -> None:
    for category in categories:
        assert sum(f["type"] == "location" for f in category["fields"]) <= 1


def test_detail_returns_the_same_record_as_the_list(stack: Stack, categories: list[dict[str, Any]]) -> None:
    for category in categories:
        response = stack.api.call("GET", f"/v1/categories/{category['key']}", stack.alice.key)
        assert response.status_code == 200
        assert response.json == category


def test_detail_describes_value_encodings(stack: Stack) -> None:
    fields = {f["key"]: f for f in stack.api.call("GET", "/v1/categories/housing", stack.alice.key).json["fields"]}
    assert fields["rentMonthly"]["encoding"] == 'decimal string, e.g. "85000" or "12.5"'
    assert fields["amenities"]["encoding"] == 'comma-separated option keys, e.g. "python,aws"'
    assert fields["furnished"]["encoding"] == '"true" or "false"'
    assert fields["availableFrom"]["encoding"] == "ISO 8601 calendar date, YYYY-MM-DD"
    assert "HTML" in fields["description"]["encoding"]
    assert "sanitized" in fields["description"]["encoding"]
    assert "meta.<key>_lat" in fields["location"]["encoding"]


def test_every_field_states_its_longest_value_and_a_listing_is_held_to_it(stack: Stack) -> None:
    from tests.listing_bodies import listing_body

    fields = {f["key"]: f for f in stack.api.call("GET", "/v1/categories/housing", stack.alice.key).json["fields"]}
    assert {k: fields[k]["maxLength"] for k in ("title", "description", "location", "rentMonthly", "furnished")} == {
        "title": 140, "description": 20_000, "location": 200, "rentMonthly": 100, "furnished": 100}
    jobs = {f["key"]: f for f in stack.api.call("GET", "/v1/categories/jobs", stack.alice.key).json["fields"]}
    too_long = listing_body(meta={"title": "x" * (jobs["title"]["maxLength"] + 1)})
    assert_error(stack.api.call("POST", "/v1/listings", stack.alice.key, too_long), 400, "VALIDATION_ERROR", "meta.title")


@pytest.mark.parametrize("key", ["unknown", "JOBS", "job"])
def test_unknown_category_key_is_404(stack: Stack, key: str) -> None:
    body = assert_error(stack.api.call("GET", f"/v1/categories/{key}", stack.alice.key), 404, "NOT_FOUND")
    assert key in body["error"]


def test_categories_need_a_key(stack: Stack) -> None:
    assert_error(stack.api.call("GET", "/v1/categories"), 401, "UNAUTHORIZED")
    assert_error(stack.api.call("GET", "/v1/categories/jobs"), 401, "UNAUTHORIZED")


def test_options_carry_the_labels_people_read(stack: Stack) -> None:
    fields = {f["key"]: f for f in stack.api.call("GET", "/v1/categories/jobs", stack.alice.key).json["fields"]}
    labels = {o["key"]: o["label"] for o in fields["skills"]["options"]}
    assert (labels["javascript"], labels["sql"], labels["aws"], labels["devops"]) == ("JavaScript", "SQL", "AWS", "DevOps")
    for category in ("jobs", "housing", "mentoring", "cofounders"):
        for field in stack.api.call("GET", f"/v1/categories/{category}", stack.alice.key).json["fields"]:
            for option in field.get("options") or []:
                assert option["label"].strip(), (category, field["key"], option)
