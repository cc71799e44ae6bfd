"""The one filter function (``chalicelib.listings.search.filters``): pure logic, no store."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from chalicelib.listings.search.filters import evaluate
from chalicelib.listings.search.query import parse_search

LISBON = {"location_lat": "38.7223", "location_lng": "-9.1393"}


def listing(**overrides: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "listingId": "lst_1", "categoryKey": "mentoring", "roleKey": "mentor",
        "meta": {"title": "Python mentor", "topics": "engineering,data", "hourlyRate": "40", "format": "online", **LISBON},
        "searchText": "python mentor lisbon",
    }
    item.update(overrides)
    return item


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, True),
        ({"category": "mentoring"}, True),
        ({"category": "jobs"}, False),
        ({"role": "mentor"}, True),
        ({"role": "mentee"}, False),
        ({"q": "pyth"}, True),
        ({"q": "python lisbon"}, True),
        ({"q": "java"}, False),
        ({"meta.format": "online"}, True),
        ({"meta.format": "both"}, False),
        ({"meta.topics": "data"}, True),
        ({"meta.topics": "data,career"}, False),
        ({"meta.hourlyRate_min": "40"}, True),
        ({"meta.hourlyRate_min": "40.01"}, False),
        ({"meta.hourlyRate_max": "39"}, False),
        ({"meta.location_lat": "38.7", "meta.location_lng": "-9.1", "radiusKm": "25"}, True),
        ({"meta.location_lat": "41.15", "meta.location_lng": "-8.61", "radiusKm": "25"}, False),  # Porto
        ({"meta.location_lat": "41.15", "meta.location_lng": "-8.61"}, True),  # no radius: sorts only
    ],
)
def test_each_filter_kind_both_ways(params: dict[str, str], expected: bool) -> None:
    assert (evaluate(parse_search(params), listing()) is not None) is expected


def test_distance_is_haversine_km_from_the_center() -> None:
    match = evaluate(parse_search({"meta.location_lat": "38.7223", "meta.location_lng": "-9.1393", "radiusKm": "5"}), listing())
    assert match is not None
    assert match.distance_km == pytest.approx(0.0, abs=1e-6)


def test_geo_filter_needs_the_location() -> None:
    query = parse_search({"meta.location_lat": "38.7", "meta.location_lng": "-9.1", "radiusKm": "25"})
    assert evaluate(query, listing(meta={"title": "x"})) is None


def test_a_cursor_scope_names_each_parameter_apart_from_the_characters_of_its_value() -> None:
    apart = parse_search({"category": "jobs", "q": "engineer", "role": "hiring"})
    within = parse_search({"category": "jobs", "q": "engineer&role=hiring"})
    assert apart.scope != within.scope
    assert apart.scope == parse_search({"role": "hiring", "q": "engineer", "category": "jobs", "pageSize": "5"}).scope


def test_importable_without_stores() -> None:
    code = (
        "import sys, chalicelib.listings.search.filters; "
        "bad = [m for m in sys.modules if m.startswith('boto3') or m.endswith('storage') or 'repository' in m]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
