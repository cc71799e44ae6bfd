"""Listing ``meta`` against its category: per-type value encoding, rich-text sanitizing, required and
unknown fields, and location coordinates (given, validated, or geocoded).

Most cases call :func:`chalicelib.listings.meta.validate_meta` directly (the exact function
``POST``/``PATCH /v1/listings`` run, no AWS needed); tests/integration/test_listing_meta_api.py
checks the same rules through the API, including that a rejected body stores nothing.
"""

from __future__ import annotations

import pytest

from chalicelib.categories.registry import get_category
from chalicelib.edge import http
from chalicelib.kernel import errors
from chalicelib.listings.meta import validate_meta
from tests.listing_bodies import VALID_META


def valid(category: str, role: str, **meta: str | None) -> dict[str, str]:
    """``validate_meta`` of the role's valid default meta with ``meta`` applied (``None`` removes a key)."""
    merged: dict[str, str] = dict(VALID_META[(category, role)])
    for key, value in meta.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return validate_meta(get_category(category), role, merged)


def invalid(category: str, role: str, **meta: str | None) -> list[errors.FieldIssue]:
    """The ``details`` of the RuleViolation that ``validate_meta`` must raise."""
    with pytest.raises(errors.RuleViolation) as caught:
        valid(category, role, **meta)
    assert http.error_status(caught.value) == (400, "VALIDATION_ERROR")
    return caught.value.details or []


def fields_of(issues: list[errors.FieldIssue]) -> list[str]:
    return [i.field for i in issues]


# --- value encoding per type -----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "stored"),
    [("85000", "85000"), ("85000.50", "85000.5"), (" 12.50 ", "12.5"), ("-3.25", "-3.25"),
     ("0.00000001", "0.00000001"), ("007", "7"), ("-0", "0"), ("0.0", "0")],
)
def test_number_is_stored_as_a_canonical_decimal_string(value: str, stored: str) -> None:
    assert valid("jobs", "hiring", salary=value)["salary"] == stored


@pytest.mark.parametrize("value", [
    "abc", "85,000", "1/2", "NaN", "Infinity", "-inf", "12 000", "1e10000000", "0x10",
    "1e3", "+650", "6_50", "\uff11\uff12", "\u0666\u0665\u0660", "650.", ".5", "1" * 101,
])
def test_number_rejects_non_decimal_strings(value: str) -> None:
    assert fields_of(invalid("jobs", "hiring", salary=value)) == ["meta.salary"]


@pytest.mark.parametrize(("value", "stored"), [("3", "3"), ("007", "7"), ("-2", "-2"), (" 12 ", "12")])
def test_integer_is_stored_in_base_10(value: str, stored: str) -> None:
    assert valid("housing", "offering", bedrooms=value)["bedrooms"] == stored


@pytest.mark.parametrize("value", ["3.5", "three", "+3", "1e3", "٣", "--1", "1" * 5000])
def test_integer_rejects_anything_but_ascii_digits(value: str) -> None:
    assert fields_of(invalid("housing", "offering", bedrooms=value)) == ["meta.bedrooms"]


@pytest.mark.parametrize(("value", "stored"), [("true", "true"), ("FALSE", "false"), (" True ", "true")])
def test_boolean_is_stored_lower_case(value: str, stored: str) -> None:
    assert valid("housing", "offering", furnished=value)["furnished"] == stored


@pytest.mark.parametrize("value", ["yes", "1", "0", "on", "truee"])
def test_boolean_rejects_other_words(value: str) -> None:
    assert fields_of(invalid("housing", "offering", furnished=value)) == ["meta.furnished"]


def test_select_accepts_an_option_key() -> None:
    assert valid("jobs", "hiring", employmentType=" contract ")["employmentType"] == "contract"


@pytest.mark.parametrize("value", ["Contract", "Full Time", "freelance", "full_time,contract"])
def test_select_rejects_labels_and_unknown_keys(value: str) -> None:
    issues = invalid("jobs", "hiring", employmentType=value)
    assert fields_of(issues) == ["meta.employmentType"]
    assert "full_time" in issues[0].issue  # names the allowed keys


def test_multiselect_is_stored_trimmed_and_deduplicated_in_given_order() -> None:
    assert valid("jobs", "hiring", skills=" python, aws ,python,,sql ")["skills"] == "python,aws,sql"


@pytest.mark.parametrize("value", ["python,cobol", "Python", ",", " , "])
def test_multiselect_rejects_unknown_or_no_options(value: str) -> None:
    assert fields_of(invalid("jobs", "hiring", skills=value)) == ["meta.skills"]


def test_date_accepts_an_iso_calendar_date() -> None:
    assert valid("housing", "offering", availableFrom="2026-03-01")["availableFrom"] == "2026-03-01"


@pytest.mark.parametrize("value", ["2026-02-30", "01/03/2026", "2026-3-1", "20260301", "2026-03-01T10:00", "tomorrow",
                                   "2024-W09-4", "2024-060", "２０２６-03-01"])  # a week date, an ordinal date, other digits
def test_date_rejects_other_formats_and_impossible_dates(value: str) -> None:
    assert fields_of(invalid("housing", "offering", availableFrom=value)) == ["meta.availableFrom"]


@pytest.mark.parametrize("value", ["https://example.org/cv.pdf", "http://portfolio.example.com"])
def test_url_accepts_absolute_http_urls(value: str) -> None:
    assert valid("jobs", "seeking", portfolio=value)["portfolio"] == value


@pytest.mark.parametrize(
    "value", ["ftp://example.org/cv", "javascript:alert(1)", "example.org", "https://localhost", "https://exa mple.org",
              "https://" + "a" * 2048 + ".org"]
)
def test_url_rejects_other_schemes_relative_and_malformed(value: str) -> None:
    assert fields_of(invalid("jobs", "seeking", portfolio=value)) == ["meta.portfolio"]


@pytest.mark.parametrize(("value", "issue"), [
    ("https://" + "a" * 2048 + ".org", "must be at most 2048 characters"),
    ("https://exa mple.org", "must not contain spaces or control characters"),
    ("ftp://example.org/cv", "must be an absolute http(s) URL"),
    ("https://localhost", "must be an absolute http(s) URL"),
])
def test_a_refused_url_says_why(value: str, issue: str) -> None:
    assert [i.issue for i in invalid("jobs", "seeking", portfolio=value)] == [issue]


def test_text_whitespace_is_collapsed() -> None:
    assert valid("jobs", "hiring", title="  Senior \n  Python\tdeveloper ")["title"] == "Senior Python developer"


def test_title_is_limited_to_140_characters() -> None:
    assert valid("jobs", "hiring", title="x" * 140)["title"] == "x" * 140
    assert fields_of(invalid("jobs", "hiring", title="x" * 141)) == ["meta.title"]


# --- rich text -----------------------------------------------------------------------


def test_rich_text_keeps_safe_markup() -> None:
    html = '<p>We <strong>ship</strong> <em>daily</em></p><ul><li>Python</li></ul><a href="https://example.org">site</a>'
    stored = valid("jobs", "hiring", description=html)["description"]
    assert stored.startswith("<p>We <strong>ship</strong> <em>daily</em></p><ul><li>Python</li></ul>")
    assert 'href="https://example.org"' in stored


@pytest.mark.parametrize(
    ("html", "forbidden"),
    [
        ("<p>Hi<script>alert(1)</script></p>", ["<script", "alert(1)"]),
        ('<img src="x" onerror="alert(1)">', ["onerror", "alert"]),
        ('<a href="javascript:alert(1)">click</a>', ["javascript:", "alert"]),
        ('<p onclick="steal()">text</p>', ["onclick", "steal"]),
        ('<iframe src="https://evil.example"></iframe><p>ok</p>', ["<iframe", "evil"]),
        ("<style>body{display:none}</style><p>ok</p>", ["<style", "display:none"]),
    ],
    ids=["script", "onerror", "javascript-url", "onclick", "iframe", "style"],
)
def test_rich_text_is_sanitized(html: str, forbidden: list[str]) -> None:
    stored = valid("jobs", "hiring", description=html)["description"]
    for fragment in forbidden:
        assert fragment not in stored


@pytest.mark.parametrize("markup", ["<script>alert(1)</script>", "<p></p>", "<br>", "<p>&nbsp;</p>", "<b> &#x3164; </b>",
                                    "<img>", '<img src="javascript:alert(1)">', '<img alt="x" src="">'])
def test_required_rich_text_that_shows_no_text_counts_as_missing(markup: str) -> None:
    issues = invalid("jobs", "hiring", description=markup)
    assert fields_of(issues) == ["meta.description"]
    assert "required" in issues[0].issue


def test_rich_text_with_an_image_and_no_text_is_kept() -> None:
    assert valid("jobs", "hiring", description='<img src="https://example.org/a.png">')["description"].startswith("<img")


def test_optional_rich_text_that_sanitizes_to_nothing_is_dropped() -> None:
    assert "description" not in valid("jobs", "seeking", description="<script>alert(1)</script>")


# --- required, unknown and empty fields ----------------------------------------------


def test_every_missing_required_field_is_reported() -> None:
    issues = invalid("jobs", "hiring", title=None, employmentType=None)
    assert sorted(fields_of(issues)) == ["meta.employmentType", "meta.title"]
    assert all(i.issue == "required for role 'hiring'" for i in issues)


def test_required_depends_on_the_role() -> None:
    assert "description" not in valid("jobs", "seeking")  # optional for seekers
    assert fields_of(invalid("jobs", "seeking", skills=None)) == ["meta.skills"]  # required for seekers only


def test_blank_required_value_is_missing_and_blank_optional_value_is_dropped() -> None:
    assert fields_of(invalid("jobs", "hiring", title="   ")) == ["meta.title"]
    assert "salary" not in valid("jobs", "hiring", salary="  ")


def test_unknown_field_is_rejected() -> None:
    issues = invalid("jobs", "hiring", favouriteColour="blue")
    assert fields_of(issues) == ["meta.favouriteColour"]
    assert "not a field of this category" in issues[0].issue


def test_field_of_another_role_is_rejected() -> None:
    issues = invalid("jobs", "hiring", portfolio="https://example.org")
    assert fields_of(issues) == ["meta.portfolio"]
    assert "another role" in issues[0].issue


def test_all_problems_are_reported_at_once() -> None:
    issues = invalid("jobs", "hiring", salary="lots", title=None, bogus="1", employmentType="gig")
    assert sorted(fields_of(issues)) == ["meta.bogus", "meta.employmentType", "meta.salary", "meta.title"]


# --- location ------------------------------------------------------------------------


def test_location_is_geocoded_when_coordinates_are_missing() -> None:
    meta = valid("jobs", "hiring", location="Paris", location_lat=None, location_lng=None)
    assert meta["location"] == "Paris"
    assert float(meta["location_lat"]) == pytest.approx(48.85, abs=0.05)
    assert float(meta["location_lng"]) == pytest.approx(2.35, abs=0.05)


def test_geocoding_folds_accents() -> None:
    meta = valid("jobs", "hiring", location="Zürich", location_lat=None, location_lng=None)
    assert float(meta["location_lat"]) == pytest.approx(47.37, abs=0.05)


def test_given_coordinates_are_kept_not_geocoded() -> None:
    meta = valid("jobs", "hiring", location="Paris", location_lat="40.0", location_lng="-3.700000")
    assert (meta["location_lat"], meta["location_lng"]) == ("40", "-3.7")


def test_coordinates_are_stored_with_at_most_six_decimals() -> None:
    meta = valid("jobs", "hiring", location_lat="52.123456789", location_lng="13.1")
    assert meta["location_lat"] == "52.123457"


@pytest.mark.parametrize(
    ("lat", "lng", "field"),
    [("91", "13.4", "meta.location_lat"), ("-90.5", "13.4", "meta.location_lat"), ("52.5", "180.01", "meta.location_lng"),
     ("52.5", "-181", "meta.location_lng"), ("north", "13.4", "meta.location_lat"), ("52.5", "nan", "meta.location_lng"),
     ("inf", "13.4", "meta.location_lat"), ("052.5", "13.4", "meta.location_lat"), ("52.5", "+13.4", "meta.location_lng")],
)
def test_coordinates_out_of_range_or_not_numbers_are_rejected(lat: str, lng: str, field: str) -> None:
    assert fields_of(invalid("jobs", "hiring", location_lat=lat, location_lng=lng)) == [field]


def test_coordinate_range_edges_are_accepted() -> None:
    meta = valid("jobs", "hiring", location_lat="-90", location_lng="180")
    assert (meta["location_lat"], meta["location_lng"]) == ("-90", "180")


@pytest.mark.parametrize(("given", "missing"), [("location_lat", "meta.location_lng"), ("location_lng", "meta.location_lat")])
def test_half_a_coordinate_pair_is_rejected_naming_the_missing_half(given: str, missing: str) -> None:
    other = "location_lng" if given == "location_lat" else "location_lat"
    assert fields_of(invalid("jobs", "hiring", **{other: None})) == [missing]


def test_coordinates_without_an_address_are_rejected() -> None:
    issues = invalid("jobs", "seeking", location_lat="52.5", location_lng="13.4")
    assert sorted(fields_of(issues)) == ["meta.location_lat", "meta.location_lng"]


@pytest.mark.parametrize("address", ["B" * 201, "Berlin\u202e"])
def test_a_refused_address_is_the_one_issue_not_its_valid_coordinates(address: str) -> None:
    assert fields_of(invalid("jobs", "hiring", location=address, location_lat="52.52", location_lng="13.405")) == ["meta.location"]


def test_ungeocodable_address_is_rejected_naming_the_location_field() -> None:
    issues = invalid("jobs", "hiring", location="Xyzzyqwv Nowhere", location_lat=None, location_lng=None)
    assert fields_of(issues) == ["meta.location"]
    assert "geocoded" in issues[0].issue


def test_optional_location_may_be_left_out() -> None:
    meta = valid("mentoring", "mentor")
    assert not {"location", "location_lat", "location_lng"} & set(meta)
