"""Numbers in a listing search's ``meta.*`` parameters (``chalicelib.listings.search.query``): written
as JSON writes them (``chalicelib.kernel.json_numbers``), and every value a listing's number or integer
field may store is a value a filter on it takes and matches."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib.categories.registry import all_categories
from chalicelib.kernel import errors
from chalicelib.listings import meta as listing_meta
from chalicelib.listings.search.filters import evaluate
from chalicelib.listings.search.query import parse_search

SALARY = all_categories()["jobs"].field("salary")
YEARS = all_categories()["jobs"].field("experienceYears")
#: The longest value a number field stores: its length limit, 28 significant digits (``Decimal``'s precision).
LONGEST = "-0." + "0" * 69 + "1234567890123456789012345678"


def job(**meta: str) -> dict[str, Any]:
    return {"listingId": "lst_1", "categoryKey": "jobs", "roleKey": "hiring", "meta": {"title": "Engineer", **meta},
            "searchText": "engineer"}


def refused(params: dict[str, str]) -> list[str]:
    with pytest.raises(errors.RuleViolation) as caught:
        parse_search(params)
    return [d.field for d in caught.value.details or []]


def stored(field: Any, text: str) -> str | None:
    """What a listing stores for ``text`` in ``field``, or ``None`` when it refuses it."""
    try:
        return listing_meta.parse_value(field, text)
    except listing_meta.InvalidValue:
        return None


@given(st.from_regex(listing_meta.SENT_DECIMAL, fullmatch=True))
@example("9007199254740991")
@example("-9007199254740991")
@example("0.00000001")
@example("-0")
@example("1234567.1234567")
@example(LONGEST)
@example("9007199254740990.1234567890123456789")
def test_every_number_a_listing_stores_is_found_by_filters_on_its_stored_text(text: str) -> None:
    value = stored(SALARY, text)
    if value is None:
        return
    listing = job(salary=value)
    for suffix in ("", "_min", "_max"):
        query = parse_search({"category": "jobs", f"meta.salary{suffix}": value})
        assert evaluate(query, listing) is not None, (suffix, value)


@given(st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1))
@example(2**53 - 1)
@example(-(2**53 - 1))
def test_every_integer_a_listing_stores_is_found_by_filters_on_its_stored_text(number: int) -> None:
    value = stored(YEARS, str(number))
    assert value is not None
    listing = job(experienceYears=value)
    for suffix in ("", "_min", "_max"):
        assert evaluate(parse_search({"category": "jobs", f"meta.experienceYears{suffix}": value}), listing) is not None


def test_the_longest_stored_number_is_its_own_text_and_other_values_miss_it() -> None:
    assert stored(SALARY, LONGEST) == LONGEST
    assert len(LONGEST) == listing_meta.DEFAULT_MAX_LENGTH
    assert evaluate(parse_search({"category": "jobs", "meta.salary": LONGEST}), job(salary=LONGEST)) is not None
    query = parse_search({"category": "jobs", "meta.salary": LONGEST[:-1] + "9"})
    assert evaluate(query, job(salary=LONGEST)) is None


def test_a_number_filter_written_with_trailing_fraction_zeros_is_the_same_number() -> None:
    assert evaluate(parse_search({"category": "jobs", "meta.salary": "85000.50"}), job(salary="85000.5")) is not None


@pytest.mark.parametrize("name", ["meta.salary", "meta.salary_min", "meta.experienceYears", "meta.experienceYears_max"])
@pytest.mark.parametrize("text", ["085000", "00", "-07", " 85000", "85000 ", "85000\n", "+85000", "8.5e4", "85_000", "٨٥"])
def test_a_number_filter_in_any_other_text_is_refused_naming_it(name: str, text: str) -> None:
    assert refused({"category": "jobs", name: text}) == [name]


@pytest.mark.parametrize(("lat", "lng", "field"), [
    ("052.5", "13", "meta.location_lat"),
    ("52.5", "013.4", "meta.location_lng"),
    (" 52.5", "13", "meta.location_lat"),
    ("52.5 ", "13", "meta.location_lat"),
    ("52.5", "13\n", "meta.location_lng"),
    ("-00.5", "13", "meta.location_lat"),
])
def test_a_coordinate_in_any_other_text_than_json_is_refused_naming_it(lat: str, lng: str, field: str) -> None:
    assert refused({"meta.location_lat": lat, "meta.location_lng": lng}) == [field]


@pytest.mark.parametrize(("text", "degrees"), [("52.5e0", 52.5), ("5.25E+1", 52.5), ("525e-1", 52.5), ("0", 0.0), ("-0.5", -0.5)])
def test_a_coordinate_as_json_writes_it_passes_exponents_included(text: str, degrees: float) -> None:
    geo = parse_search({"meta.location_lat": text, "meta.location_lng": "13"}).geo
    assert geo is not None
    assert geo.lat == degrees
