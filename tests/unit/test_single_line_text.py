"""The one text policy (Unicode TR36 / UTS #39, by general category): single-line fields refuse
controls, format characters (but the joiners emoji and some scripts need), surrogates, private-use,
unassigned and noncharacter code points and the line and paragraph separators, and need a visible
character; multi-line fields refuse the same except line feed and carriage return."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.categories.models import CategoryField, FieldType
from chalicelib.edge import http
from chalicelib.kernel import errors, text
from chalicelib.listings.meta import InvalidValue, parse_value

REFUSED = {
    "\u3164\u3164": "has no visible character",  # Hangul filler: a letter that displays as nothing
    "\u2800": "has no visible character",
    "\u200b": "contains the format character U+200B",
    "a\ufeffb": "contains the format character U+FEFF",
    "a\u200db": "contains the format character U+200D",  # a ZWJ between Latin letters only hides
    "a\u200cb": "contains the format character U+200C",
    "\U000e0041\U000e0042": "contains the tag character U+E0041",
    "x\U000e0067\U000e007f": "contains the tag character U+E0067",  # tags without the 🏴 base
    "Invoice\u202egnp.exe": "contains the bidirectional control character U+202E",
    "\u2066admin\u2069": "contains the bidirectional control character U+2066",
    "a\u200fb": "contains the bidirectional control character U+200F",
    "a\u061cb": "contains the bidirectional control character U+061C",
    "bell\x7f": "contains the control character U+007F",
    "next\x85line": "contains the control character U+0085",
    "\x9b31m": "contains the control character U+009B",
    "two\nlines": "contains the control character U+000A",
    "a\u2028b": "contains the line separator U+2028",
    "a\u2029b": "contains the paragraph separator U+2029",
    "a\uffff": "contains the noncharacter U+FFFF",
    "a\ufdd0": "contains the noncharacter U+FDD0",
    "a\U0010fffe": "contains the noncharacter U+10FFFE",
    "\ue000": "contains the private-use character U+E000",
    "a\U000f0000": "contains the private-use character U+F0000",
    "a\u0378": "contains the unassigned code point U+0378",
}
EMOJI_AND_SCRIPTS = [
    "\U0001f469\u200d\U0001f4bb",  # 👩‍💻: an emoji ZWJ sequence
    "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # with a skin-tone modifier
    "\U0001f3f3\ufe0f\u200d\U0001f308",  # 🏳️‍🌈: with a presentation selector
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # the flag of Scotland (tag sequence)
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, ZWNJ between letters
    "\u0915\u094d\u200d\u0937",  # Devanagari, ZWJ after a virama
]
ACCEPTED = ["Backend engineer", "Zoë", "שלום", "مرحبا", "日本語", "🚀", "e\u0301", "x\u00a0y", "a\tb", "", *EMOJI_AND_SCRIPTS]


@pytest.mark.parametrize(("value", "issue"), REFUSED.items())
def test_refused_text_names_its_issue(value: str, issue: str) -> None:
    assert text.single_line_issue(value) == issue


@pytest.mark.parametrize("value", ACCEPTED)
def test_ordinary_text_of_any_script_passes(value: str) -> None:
    assert text.single_line_issue(value) is None
    assert text.multi_line_issue(value) is None


@pytest.mark.parametrize(("value", "issue"), [(v, i) for v, i in REFUSED.items() if "U+000A" not in i])
def test_multi_line_text_refuses_the_same_code_points_and_invisible_text(value: str, issue: str) -> None:
    assert text.multi_line_issue(value) == issue


@pytest.mark.parametrize("value", ["two\nlines", "crlf\r\nline", "\n\nparagraph", "tab\tbed"])
def test_multi_line_text_allows_line_feed_and_carriage_return(value: str) -> None:
    assert text.multi_line_issue(value) is None


def test_every_refused_category_is_refused_by_category_not_by_a_list() -> None:
    from chalicelib.kernel.text import REFUSED_CATEGORIES

    samples = {"Cc": "\x85", "Cf": "\u2062", "Cs": "\ud800", "Co": "\U00100000", "Cn": "\U0003ffff", "Zl": "\u2028", "Zp": "\u2029"}
    assert set(samples) == set(REFUSED_CATEGORIES)
    for category, char in samples.items():
        assert unicodedata.category(char) == category
        assert text.single_line_issue(f"a{char}b") is not None
        assert text.multi_line_issue(f"a{char}b") is not None


def test_the_invisible_class_holds_every_format_character_of_the_bmp() -> None:
    invisible = re.compile(f"[{text.INVISIBLE_CLASS}]")
    missing = [f"U+{c:04X}" for c in range(0x10000) if unicodedata.category(chr(c)) == "Cf" and not invisible.match(chr(c))]
    assert missing == [], f"Unicode {unicodedata.unidata_version} added format characters: {missing}"
    assert sys.maxunicode == 0x10FFFF


# The pattern states the rule for the assigned code points of the BMP and leaves the joiners' context
# to the validator (unassigned code points differ between Unicode versions).
_BMP_TEXT = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs", "Cn"]).filter(
    lambda c: not ("\x00" <= c <= "\x1f") and c not in "\u200c\u200d"), max_size=6)
_INTERESTING = st.text(st.sampled_from(["a", " ", "\u200b", "\u202e", "\x7f", "\x85", "\u3164", "\u00ad", "\t", "é"]), max_size=4)


@given(value=st.one_of(_BMP_TEXT, _INTERESTING))
def test_the_json_schema_pattern_states_the_validator_rule_in_the_bmp(value: str) -> None:
    assert bool(re.search(text.single_line_pattern(), value)) == (text.single_line_issue(value) is None), ascii(value)


_MULTI_LINE_TEXT = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs", "Cn"]).filter(
    lambda c: not ("\x00" <= c <= "\x1f" and c not in "\t\n\r") and c not in "\u200c\u200d"), max_size=6)


@given(value=st.one_of(_MULTI_LINE_TEXT, _INTERESTING))
def test_the_multi_line_pattern_states_the_validator_rule_in_the_bmp(value: str) -> None:
    assert bool(re.search(text.multi_line_pattern(), value)) == (text.multi_line_issue(value) is None), ascii(value)


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
    with pytest.raises(InvalidValue, match="format character U\\+200B"):
        parse_value(title, "\u200b\u200b")
    with pytest.raises(InvalidValue, match="has no visible character"):
        parse_value(title, "\u3164")
    assert parse_value(title, "  Senior   engineer ") == "Senior engineer"
