"""``details`` of a pydantic validation error (chalicelib.kernel.errors.from_pydantic): one item
per field as the client sent it, without the union members and ``[key]`` parts pydantic adds."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from chalicelib.kernel import errors
from chalicelib.kernel.json_types import NON_BLANK, PATTERN_RULES


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: dict[str, Annotated[str, StringConstraints(max_length=3)] | int] = {}
    channels: dict[Literal["telegram", "signal"], str] = {}
    items: list[int] = []
    name: str


def details(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as caught:
        Body.model_validate(data)
    return [(d.field, d.issue) for d in errors.from_pydantic(caught.value, data=data).details or []]


def test_a_value_no_union_member_takes_is_one_item_with_every_members_issue() -> None:
    assert details({"name": "x", "query": {"q": ["x"]}}) == [
        ("query.q", "Input should be a valid string; Input should be a valid integer"),
    ]


def test_the_member_whose_type_matched_gives_the_issue() -> None:
    assert details({"name": "x", "query": {"q": "long"}}) == [("query.q", "String should have at most 3 characters")]


def test_a_dict_keys_error_names_the_key_without_the_key_marker() -> None:
    [(field, issue)] = details({"name": "x", "channels": {"icq": "x"}})
    assert field == "channels.icq"
    assert "'telegram'" in issue


def test_list_items_missing_and_extra_fields_keep_their_paths() -> None:
    assert [field for field, _ in details({"items": [1, "a"], "extra": 1})] == ["items.1", "name", "extra"]


class Texts(BaseModel):
    note: Annotated[str, StringConstraints(pattern=NON_BLANK)] = "x"
    code: Annotated[str, StringConstraints(pattern=r"^[a-z]+$")] = "x"


@pytest.mark.parametrize(("data", "issue"), [
    ({"note": " \t "}, PATTERN_RULES[NON_BLANK]),  # a shared pattern: its rule in words
    ({"code": "A1"}, "String should match pattern '^[a-z]+$'"),  # a field's own pattern: the expression
])
def test_a_pattern_mismatch_names_the_rule(data: dict[str, Any], issue: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Texts.model_validate(data)
    assert [(d.field, d.issue) for d in errors.from_pydantic(caught.value, data=data).details or []] == [(next(iter(data)), issue)]
