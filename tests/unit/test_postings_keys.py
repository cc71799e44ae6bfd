"""Posting keys of a listing and the order-preserving number keys (pure logic)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.listings.search.postings import (
    MAX_PREFIX,
    newest_of_number_sort,
    number_list,
    posting_keys,
    stem_list,
    value_list,
    word_list,
)
from chalicelib.search.postings import PostingKey, number_bounds, sortable_number

LISTING = {
    "listingId": "lst_1", "categoryKey": "jobs", "roleKey": "hiring", "status": "ACTIVE", "version": 3,
    "createdAt": "2026-01-02T03:04:05.000Z", "searchText": "rust developpeur go a",
    "meta": {"title": "Rust", "employmentType": "full_time", "skills": "python,rust", "salary": "85000.5",
             "experienceYears": "3", "visaSponsorship": "true", "startDate": "2026-02-01"},
}
NEWEST = "2026-01-02T03:04:05.000Z#lst_1"

decimals = st.decimals(min_value=Decimal("-1e15"), max_value=Decimal("1e15"), allow_nan=False, allow_infinity=False, places=6)


def test_an_active_listing_is_filed_under_its_word_prefixes_values_and_numbers() -> None:
    keys = posting_keys(LISTING)
    lists = {k.list_id for k in keys}
    assert {"listings.v5#jobs#q#ru", "listings.v5#jobs#q#rus", "listings.v5#jobs#q#rust", "listings.v5#jobs#q#go"} <= lists
    assert {"listings.v5#jobs#q#de", "listings.v5#jobs#q#dev", "listings.v5#jobs#q#deve", "listings.v5#jobs#q#devel"} <= lists
    assert f"listings.v5#jobs#q#{'developpeur'[:MAX_PREFIX + 1]}" not in lists  # capped at MAX_PREFIX letters
    assert "listings.v5#jobs#q#a" not in lists  # one-letter words have no list
    assert {stem_list("jobs", "rust"), stem_list("jobs", "developpeur"), stem_list("jobs", "go")} <= lists  # Snowball stems
    assert {value_list("jobs", "employmentType", "full_time"), value_list("jobs", "skills", "python"),
            value_list("jobs", "skills", "rust"), value_list("jobs", "salary", "85000.5"),
            value_list("jobs", "experienceYears", "3"), value_list("jobs", "visaSponsorship", "true")} <= lists
    assert not any("startDate" in name or "title" in name for name in lists)  # not filterable by value
    assert PostingKey(number_list("jobs", "salary"), f"{sortable_number('85000.5')}#{NEWEST}") in keys
    assert all(k.sort == NEWEST for k in keys if "#n#" not in k.list_id)


def test_a_listing_that_is_not_active_or_deleted_is_filed_nowhere() -> None:
    assert posting_keys({**LISTING, "status": "PAUSED"}) == set()
    assert posting_keys(None) == set()


def test_a_term_reads_its_capped_prefix_list() -> None:
    assert word_list("jobs", "a") is None
    assert word_list("jobs", "rust") == "listings.v5#jobs#q#rust"
    assert word_list("jobs", "developer") == "listings.v5#jobs#q#devel"
    assert newest_of_number_sort(f"{sortable_number('-3')}#{NEWEST}") == NEWEST


@given(a=decimals, b=decimals)
def test_sortable_numbers_sort_as_the_numbers_do(a: Decimal, b: Decimal) -> None:
    ka, kb = sortable_number(str(a)), sortable_number(str(b))
    assert (ka < kb) == (a < b)
    assert (ka == kb) == (a == b)
    assert (f"{ka}#x" < f"{kb}#x") == (a < b)


@given(value=decimals, low=decimals, high=decimals)
def test_number_bounds_select_exactly_the_closed_interval(value: Decimal, low: Decimal, high: Decimal) -> None:
    sort = f"{sortable_number(str(value))}#2026-01-01T00:00:00.000Z#lst_x"
    lo, hi = number_bounds(str(low), str(high))
    assert lo is not None
    assert hi is not None
    assert (lo <= sort <= hi) == (low <= value <= high)
    only_low, none = number_bounds(str(low), None)
    assert none is None
    assert only_low is not None
    assert (only_low <= sort) == (low <= value)


def test_a_number_that_does_not_parse_gets_no_range_entry_and_stops_nothing() -> None:
    keys = posting_keys({**LISTING, "meta": {**LISTING["meta"], "salary": "lots"}})  # never written by the service
    assert not any(k.list_id == number_list("jobs", "salary") for k in keys)
    assert PostingKey(value_list("jobs", "salary", "lots"), NEWEST) in keys
