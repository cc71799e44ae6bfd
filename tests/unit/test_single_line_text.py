"""Single-line text (issue 21 part 4): no bidi controls, DEL or C1 controls, and something visible
(Unicode TR36 / UTS #39), as a VALIDATION_ERROR naming the field."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib import errors, http, text
from chalicelib.categories.models import CategoryField, FieldType
from chalicelib.listings.meta import InvalidValue, parse_value

REFUSED = {
    "\u200b": "has no visible character",
    "\u200b\u200c\u2060\ufeff": "has no visible character",
    "\u3164\u3164": "has no visible character",  # Hangul filler: a letter that displays as nothing
    "\u2800": "has no visible character",
    "\U000e0041\U000e0042": "has no visible character",  # tag characters (astral Cf)
    "Invoice\u202egnp.exe": "contains the bidirectional control character U+202E",
    "\u2066admin\u2069": "contains the bidirectional control character U+2066",
    "a\u200fb": "contains the bidirectional control character U+200F",
    "a\u061cb": "contains the bidirectional control character U+061C",
    "bell\x7f": "contains the control character U+007F",
    "next\x85line": "contains the control character U+0085",
    "\x9b31m": "contains the control character U+009B",
}
ACCEPTED = ["Backend engineer", "Zoë", "שלום", "مرحبا", "日本語", "🚀", "e\u0301", "a\u200db", "x\u00a0y", "\ue000", ""]


@pytest.mark.parametrize(("value", "issue"), REFUSED.items())
def test_refused_text_names_its_issue(value: str, issue: str) -> None:
    assert text.single_line_issue(value) == issue


@pytest.mark.parametrize("value", ACCEPTED)
def test_ordinary_text_of_any_script_passes(value: str) -> None:
    assert text.single_line_issue(value) is None


def test_the_invisible_class_holds_every_format_character_of_the_bmp() -> None:
    invisible = re.compile(f"[{text.INVISIBLE_CLASS}]")
    missing = [f"U+{c:04X}" for c in range(0x10000) if unicodedata.category(chr(c)) == "Cf" and not invisible.match(chr(c))]
    assert missing == [], f"Unicode {unicodedata.unidata_version} added format characters: {missing}"
    assert sys.maxunicode == 0x10FFFF


_BMP_TEXT = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]).filter(
    lambda c: not ("\x00" <= c <= "\x1f")), max_size=6)
_INTERESTING = st.text(st.sampled_from(["a", " ", "\u200b", "\u202e", "\x7f", "\x85", "\u3164", "\u00ad", "\t", "é"]), max_size=4)


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(_BMP_TEXT, _INTERESTING))
def test_the_json_schema_pattern_states_the_validator_rule_in_the_bmp(value: str) -> None:
    assert bool(re.search(text.SINGLE_LINE_PATTERN, value)) == (text.single_line_issue(value) is None), ascii(value)


def _refusal(model: object, data: dict[str, object]) -> list[tuple[str, str]]:
    with pytest.raises(errors.RuleViolation) as caught:
        http.parse_model(model, data)  # type: ignore[arg-type]
    return [(d.field, d.issue) for d in caught.value.details or []]


@pytest.mark.parametrize("value", ["\u200b", "Ada\u202e", "Ada\x7f", "A\x85b"])
def test_models_refuse_it_naming_the_field(value: str) -> None:
    from chalicelib.saved_searches.models import SavedSearchCreate
    from chalicelib.users.models import AdminUserCreate, ProfilePatch
    from chalicelib.webhooks.models import WebhookCreate

    assert _refusal(AdminUserCreate, {"displayName": value})[0][0] == "displayName"
    assert _refusal(ProfilePatch, {"recruiting": {"headline": value}})[0][0] == "recruiting.headline"
    assert _refusal(ProfilePatch, {"recruiting": {"skills": ["python", value]}})[0][0] == "recruiting.skills.1"
    assert _refusal(WebhookCreate, {"url": "https://example.com/h", "name": value})[0][0] == "name"
    assert _refusal(SavedSearchCreate, {"query": {"q": "x"}, "name": value})[0][0] == "name"


def test_listing_text_fields_refuse_it() -> None:
    title = CategoryField(key="title", label="Title", type=FieldType.TEXT, roles=["r"])
    with pytest.raises(InvalidValue, match="bidirectional control character U\\+202E"):
        parse_value(title, "Senior \u202eengineer")
    with pytest.raises(InvalidValue, match="has no visible character"):
        parse_value(title, "\u200b\u200b")
    assert parse_value(title, "  Senior   engineer ") == "Senior engineer"
