"""The Dashboard's generated listing form and the review diff: pure functions over the category data."""

from __future__ import annotations

import pytest

from chalicelib.categories.models import FieldType
from chalicelib.categories.registry import get_category
from chalicelib.dashboard.content import changed_fields, content_fields
from chalicelib.dashboard.listing_form import api_number, form_fields, meta_from_form, meta_patch, plain_issue
from chalicelib.listings import meta

JOBS = get_category("jobs")


def test_controls_follow_the_field_types_and_required_flags_of_the_role() -> None:
    fields = {f.key: f for f in form_fields(JOBS, "hiring", {"skills": "aws,python"})}
    assert (fields["title"].control, fields["title"].required) == ("text", True)
    assert fields["description"].control == "textarea"
    assert (fields["skills"].control, fields["skills"].required, fields["skills"].selected) == ("checkboxes", False, {"aws", "python"})
    assert fields["remote"].control == "select"
    assert "looked up when you save" in fields["location"].hint
    seeking = {f.key: f for f in form_fields(JOBS, "seeking", {})}
    assert (seeking["skills"].required, seeking["description"].required) == (True, False)  # required per role


def test_meta_from_form_joins_checkboxes_in_option_order_and_drops_blanks() -> None:
    form = {"meta.title": ["  Dev  "], "meta.skills": ["python", "aws", ""], "meta.remote": [""], "meta.unknown": ["x"]}
    assert meta_from_form(JOBS, "hiring", form) == {"title": "Dev", "skills": "python,aws"}


@pytest.mark.parametrize(("field_type", "typed", "sent"), [
    (FieldType.NUMBER, ".5", "0.5"), (FieldType.NUMBER, "1e5", "100000"), (FieldType.NUMBER, "12.50", "12.5"),
    (FieldType.NUMBER, "1E-3", "0.001"), (FieldType.INTEGER, "2.0", "2"), (FieldType.INTEGER, "1e1", "10"),
    # not a browser's number, a fraction for an integer, an exponent no accepted value has: as typed
    (FieldType.INTEGER, "2.5", "2.5"), (FieldType.NUMBER, "1e999999999", "1e999999999"), (FieldType.NUMBER, "1_000", "1_000"),
    (FieldType.NUMBER, "\u0661\u0662", "\u0661\u0662"),
])
def test_a_number_control_posts_the_apis_decimal_for_what_the_browser_accepted(field_type: FieldType, typed: str, sent: str) -> None:
    assert api_number(field_type, typed) == sent


def test_meta_from_form_writes_numbers_as_the_api_does() -> None:
    form = {"meta.title": ["Dev"], "meta.salary": [" 1e5 "], "meta.experienceYears": ["3.0"]}
    assert meta_from_form(JOBS, "seeking", form) == {"title": "Dev", "salary": "100000", "experienceYears": "3"}
    for typed, sent in (("1e5", "100000"), (".5", "0.5")):
        assert meta.parse_value(next(f for f in JOBS.fields if f.key == "salary"), sent) == sent  # the API takes it as is
        assert api_number(FieldType.NUMBER, typed) == sent


def test_meta_patch_sends_changes_and_null_for_emptied_fields_only() -> None:
    stored = {"title": "A", "remote": "onsite", "location": "Berlin", "location_lat": "52.5", "location_lng": "13.4"}
    posted = {"title": "B", "location": "Berlin"}
    assert meta_patch(JOBS, "hiring", stored, posted) == {"title": "B", "remote": None}  # coordinates are the service's
    reordered = {"title": "A", "skills": "aws,python"}
    assert meta_patch(JOBS, "hiring", reordered, {"title": "A", "skills": "python,aws"}) == {}  # a multiselect is a set
    assert meta_patch(JOBS, "hiring", reordered, {"title": "A", "skills": "python"}) == {"skills": "python"}


def test_review_diff_lists_changed_added_and_removed_fields_and_hides_coordinates() -> None:
    approved = {"title": "A", "location": "Berlin", "location_lat": "52.5", "location_lng": "13.4", "remote": "onsite"}
    now = {"title": "B", "location": "Berlin", "location_lat": "52.6", "location_lng": "13.5", "salary": "90000"}
    changes = [(c.key, c.old, c.new) for c in changed_fields("jobs", "hiring", now, approved)]
    assert changes == [("title", "A", "B"), ("salary", None, "90000"), ("remote", "On-site", None)]  # option labels
    assert "location_lat" not in {f.key for f in content_fields("jobs", "hiring", now)}


def test_options_show_the_category_labels_and_hints_speak_plain_words() -> None:
    fields = {f.key: f for f in form_fields(JOBS, "hiring", {})}
    assert ("javascript", "JavaScript") in fields["skills"].options
    assert ("sql", "SQL") in fields["skills"].options
    assert fields["skills"].hint == "Pick any."
    api_words = ("string", "ISO 8601", "option key", '"true"', "YYYY")
    for f in fields.values():
        assert not any(word in f.hint for word in api_words), (f.key, f.hint)
    shown = {f.key: f.value for f in content_fields("jobs", "hiring", {"skills": "javascript,aws,unknown", "remote": "hybrid"})}
    assert shown == {"skills": "JavaScript, AWS, unknown", "remote": "Hybrid"}
    housing = {f.key: f.value for f in content_fields("housing", "offering", {"furnished": "true"})}
    assert housing == {"furnished": "Yes"}


#: A value each control can send that its field refuses (a person typing into the form's control).
_REFUSED = {FieldType.NUMBER: "85,000", FieldType.INTEGER: "3.5", FieldType.BOOLEAN: "maybe", FieldType.SELECT: "other",
            FieldType.MULTISELECT: "nothing", FieldType.DATE: "31/12/2026", FieldType.URL: "example"}


def test_every_issue_a_control_can_meet_is_worded_for_the_form() -> None:
    """Each field type's refusal of a value its control can send, a required field left out and an
    unknown place read in the form's words: no API encoding (``decimal string``, ``ISO 8601``, option
    keys, ``meta.<key>_lat``); a length or a range is the API's sentence, capitalized."""
    issues = {"required for role 'hiring'", "address could not be geocoded; give meta.<key>_lat and _lng"}
    for category in (get_category(key) for key in ("jobs", "housing", "mentoring", "cofounders")):
        for field in category.fields:
            if field.type in _REFUSED:
                with pytest.raises(meta.InvalidValue) as refused:
                    meta.parse_value(field, _REFUSED[field.type])
                issues.add(str(refused.value))
    worded = {plain_issue(issue) for issue in issues}
    assert worded == {
        "Fill this in: it is required for this kind of listing.",
        "This place could not be found: enter a city, or a street address with its city.",
        "Enter a number, such as 85000 or 12.5.", "Enter a whole number, such as 3.", "Choose Yes or No.",
        "Choose one of the options.", "Choose among the options shown.", "Enter a date.",
        "Enter a web address starting with https:// or http://.",
    }
    assert plain_issue("must be between 0 and 100") == "Must be between 0 and 100."
