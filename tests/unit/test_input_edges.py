"""The input limits of the HTTP edge as pure functions: JSON depth, control characters, number
bounds (chalicelib.edge.json_input) and the path-id rule (chalicelib.edge.path_ids)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.categories.models import CategoryField, FieldType
from chalicelib.edge import json_input, path_ids
from chalicelib.kernel import errors


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def rejected_field(data: Any) -> str:
    with pytest.raises(errors.RuleViolation) as caught:
        json_input.check_document(data)
    [detail] = caught.value.details or []
    return detail.field


def test_nesting_up_to_the_cap_passes_and_one_more_level_names_body() -> None:
    json_input.check_document(nested(json_input.MAX_DEPTH))
    assert rejected_field(nested(json_input.MAX_DEPTH + 1)) == "body"
    assert rejected_field({"meta": nested(json_input.MAX_DEPTH)}) == "body"


def test_very_deep_documents_are_checked_without_recursion() -> None:
    assert rejected_field(nested(100_000)) == "body"


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x1f"])
def test_c0_control_characters_are_rejected_naming_the_field(char: str) -> None:
    assert rejected_field({"meta": {"title": f"a{char}b"}}) == "meta.title"
    assert rejected_field({"webhookIds": ["ok", f"whk{char}"]}) == "webhookIds.1"
    assert rejected_field({"q": char}) == "q"


@pytest.mark.parametrize("char", ["\t", "\n", "\r"])
def test_tab_and_newlines_are_allowed_in_values_but_not_in_keys(char: str) -> None:
    json_input.check_document({"content": f"line{char}next"})
    assert rejected_field({"meta": {f"ti{char}tle": "x"}}) == f"meta.ti{char}tle"


def test_printable_unicode_and_del_pass() -> None:
    json_input.check_document({"name": "Zoë 🚀 \u00a0 \x7f \u2028"})


@pytest.mark.parametrize("value", [2**53, -(2**53), 10**30, float("inf"), float("-inf"), float("nan"), 1e300])
def test_numbers_beyond_the_exact_json_range_are_rejected(value: float) -> None:
    assert rejected_field({"page": value}) == "page"


@pytest.mark.parametrize("value", [0, 2**53 - 1, -(2**53 - 1), 1.5, -1e15, True, None])
def test_numbers_within_the_range_pass(value: Any) -> None:
    json_input.check_document({"page": value})


@pytest.mark.parametrize("digits", [17, 4_300, 4_301, 100_000])
def test_integer_literals_beyond_the_int_string_limit_are_refused_naming_their_field(digits: int) -> None:
    for sign in ("", "-"):
        data = json.loads(f'{{"a": {{"b": [{sign}{"9" * digits}]}}}}', parse_int=json_input.parse_int)
        assert rejected_field(data) == "a.b.0"
    assert json.loads(str(json_input.MAX_SAFE_INTEGER), parse_int=json_input.parse_int) == json_input.MAX_SAFE_INTEGER


@pytest.mark.parametrize(
    ("name", "value", "valid"),
    [
        ("listingId", "lst_01JD0000000000000000000000", True),
        ("key", "telegram", True),
        ("listingId", "x" * path_ids.MAX_LENGTH, True),
        ("listingId", "x" * (path_ids.MAX_LENGTH + 1), False),
        ("approvalId", "A" * 1500, True),
        ("approvalId", "A" * 2049, False),
        ("listingId", "", False),
        ("listingId", "lst_1\x00", False),
        ("listingId", "lst 1", False),
        ("listingId", "lst_1/../x", False),
        ("listingId", "lst_ü", False),
        ("webhookId", "whk.1", False),
    ],
)
def test_path_ids(name: str, value: str, valid: bool) -> None:
    assert path_ids.is_valid(name, value) is valid


def test_number_and_integer_fields_carry_their_bounds_in_the_category_record() -> None:
    integer = CategoryField(key="years", label="Years", type=FieldType.INTEGER, roles=["r"])
    assert (integer.minimum, integer.maximum) == (-(2**53 - 1), 2**53 - 1)
    bounded = CategoryField(key="pct", label="Pct", type=FieldType.NUMBER, roles=["r"], minimum=0, maximum=100)
    assert (bounded.minimum, bounded.maximum) == (0, 100)
    text = CategoryField(key="t", label="T", type=FieldType.TEXT, roles=["r"])
    assert (text.minimum, text.maximum) == (None, None)
    with pytest.raises(ValueError, match="only number and integer"):
        CategoryField(key="t", label="T", type=FieldType.TEXT, roles=["r"], minimum=1)
    with pytest.raises(ValueError, match="minimum above maximum"):
        CategoryField(key="n", label="N", type=FieldType.NUMBER, roles=["r"], minimum=5, maximum=1)


def test_the_openapi_document_states_the_path_id_rule_and_the_number_bounds() -> None:
    import app  # noqa: F401 -- registers the routes
    from chalicelib.openapi import document as openapi

    doc = openapi.document()
    for path, item in doc["paths"].items():
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path":
                    schema = parameter["schema"]
                    assert schema["pattern"] == path_ids.PATTERN, path
                    assert schema["maxLength"] == path_ids.LONG_IDS.get(parameter["name"], path_ids.MAX_LENGTH), path

    def numbers(node: Any) -> list[dict[str, Any]]:
        if isinstance(node, dict):
            own = [node] if node.get("type") in ("integer", "number") else []
            return own + [n for v in node.values() for n in numbers(v)]
        if isinstance(node, list):
            return [n for v in node for n in numbers(v)]
        return []

    parameters = [op.get("parameters", []) for item in doc["paths"].values() for op in item.values()]
    bounded = numbers(parameters)
    assert bounded  # page, pageSize, limit, radiusKm, ...
    for schema in bounded:  # an exclusive bound bounds that side too (Redocly forbids mixing the two kinds)
        assert "minimum" in schema or "exclusiveMinimum" in schema
        assert "maximum" in schema or "exclusiveMaximum" in schema
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        assert -json_input.MAX_SAFE_INTEGER <= low <= high <= json_input.MAX_SAFE_INTEGER
