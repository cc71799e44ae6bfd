"""Query parameter texts of integer, number and boolean parameters (chalicelib.kernel.query_text)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from chalicelib.kernel import errors, query_text


class Params(BaseModel):
    count: int = 1
    ratio: float | None = None
    flag: bool | None = None
    name: str | None = None


def refused(params: dict[str, str]) -> list[str]:
    with pytest.raises(errors.RuleViolation) as caught:
        query_text.check(Params, params)
    return [d.field for d in caught.value.details or []]


@pytest.mark.parametrize("text", ["5", "-3", "0", "-0", "10", "9007199254740991"])
def test_an_integer_as_json_writes_it_passes(text: str) -> None:
    query_text.check(Params, {"count": text})


@pytest.mark.parametrize(
    "text", ["5.0", "+5", " 5", "5 ", "5\n", "5_0", "1e2", "0x10", "", "five", "05", "007", "00", "-05", "٥"]
)
def test_an_integer_in_any_other_text_is_refused(text: str) -> None:
    assert refused({"count": text}) == ["count"]


@pytest.mark.parametrize("text", ["52.52", "-0.5", "0", "0.05", "1e2", "3E-4", "5.25e+1", "7", "1E05"])
def test_a_number_as_json_writes_it_passes(text: str) -> None:
    query_text.check(Params, {"ratio": text})


@pytest.mark.parametrize(
    "text", ["nan", "inf", "-Infinity", ".5", "5.", "+1", "1_000", "05", "052.5", "00.5", "-01", " 5", "5 ", "5\n", "1e", "٥"]
)
def test_a_number_in_any_other_text_is_refused(text: str) -> None:
    assert refused({"ratio": text}) == ["ratio"]


@pytest.mark.parametrize("text", ["true", "false", "True", "FALSE"])
def test_true_and_false_in_any_case_pass(text: str) -> None:
    query_text.check(Params, {"flag": text})


@pytest.mark.parametrize("text", ["yes", "no", "on", "1", "0", "t", ""])
def test_other_boolean_spellings_are_refused(text: str) -> None:
    assert refused({"flag": text}) == ["flag"]


def test_every_value_out_of_its_form_is_named_and_strings_and_unknown_names_pass_unread() -> None:
    assert refused({"count": "1.0", "flag": "yes", "name": "5.0", "other": "yes"}) == ["count", "flag"]
