"""Hypothesis strategies of listings and saved-search queries for the percolator property tests.

Listings and queries are drawn from small vocabularies (a few cities, words, options), so that
random pairs match often enough to test both directions of every filter kind: category, role,
select, multiselect, number and integer ranges, boolean, ``q`` word prefixes and geo circles.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from chalicelib.categories.registry import all_categories
from chalicelib.kernel.text import words

CITIES = {
    "lisbon": (38.7223, -9.1393), "cascais": (38.6979, -9.4215), "porto": (41.1579, -8.6291),
    "berlin": (52.52, 13.405), "potsdam": (52.3906, 13.0645), "auckland": (-36.8485, 174.7633),
    "fiji": (-17.7134, 178.065),  # the antimeridian is near
}
WORDS = ["python", "pythonic", "rust", "mentor", "mentoring", "data", "design", "startup", "lisbon", "berlin", "go"]
RADII = [1, 5, 30, 80, 400, 2500, 15000]

#: Per category: role keys, and meta fields with the values drawn for them.
SHAPES: dict[str, dict[str, Any]] = {
    "mentoring": {
        "roles": ["mentor", "mentee"],
        "fields": {"topics": ["career", "data", "career,data", "design,product"], "format": ["online", "both"],
                   "hourlyRate": ["20", "40", "60.5"], "yearsExperience": ["1", "10"]},
        "required": {"mentor": {"topics": "career"}, "mentee": {"topics": "career"}},
    },
    "jobs": {
        "roles": ["hiring", "seeking"],
        "fields": {"skills": ["python", "rust", "python,rust"], "employmentType": ["full_time", "contract"],
                   "salary": ["50000", "90000"], "visaSponsorship": ["true", "false"]},
        "required": {"hiring": {"employmentType": "full_time"}, "seeking": {"skills": "python"}},
    },
}


@st.composite
def listings(draw: st.DrawFn) -> dict[str, Any]:
    """A valid listing of a drawn category and role (fields its role may set, required ones always),
    as the Listings table stores it while ACTIVE, without ids or owner (callers add them)."""
    category_key = draw(st.sampled_from(sorted(SHAPES)))
    shape = SHAPES[category_key]
    role = draw(st.sampled_from(shape["roles"]))
    category = all_categories()[category_key]
    meta: dict[str, str] = {"title": " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))}
    for field in category.fields:
        if role not in field.roles or field.key == "title":
            continue
        required = role in field.requiredFor
        if not (required or draw(st.booleans())):
            continue
        if field.key == "description":
            meta["description"] = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
        elif field.key == "location":
            city = draw(st.sampled_from(sorted(CITIES)))
            lat, lng = CITIES[city]
            meta.update(location=city.title(), location_lat=str(lat), location_lng=str(lng))
        elif field.key in shape["fields"]:
            meta[field.key] = draw(st.sampled_from(shape["fields"][field.key]))
        elif required:
            meta[field.key] = shape["required"][role][field.key]
    text = " ".join(meta.get(k, "") for k in ("title", "description", "location"))
    return {
        "categoryKey": category_key, "roleKey": role, "meta": meta, "title": meta["title"],
        "searchText": " ".join(dict.fromkeys(words(text))),
    }


@st.composite
def queries(draw: st.DrawFn) -> dict[str, str]:
    """Listing-search parameters as a saved search stores them (valid; alerts-compatible)."""
    query: dict[str, str] = {}
    category = draw(st.sampled_from([None, *sorted(SHAPES)]))
    if category:
        query["category"] = category
        if draw(st.booleans()):
            query["role"] = draw(st.sampled_from(SHAPES[category]["roles"]))
        key = draw(st.sampled_from([None, *sorted(SHAPES[category]["fields"])]))
        if key:
            value = draw(st.sampled_from(SHAPES[category]["fields"][key]))
            suffix = draw(st.sampled_from(["", "_min", "_max"])) if key in ("hourlyRate", "salary", "yearsExperience") else ""
            query[f"meta.{key}{suffix}"] = value
    if draw(st.booleans()):
        terms = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=2))
        query["q"] = " ".join(t[: draw(st.integers(min_value=1, max_value=len(t)))] for t in terms)
    if draw(st.booleans()):
        lat, lng = CITIES[draw(st.sampled_from(sorted(CITIES)))]
        query.update({"meta.location_lat": str(lat), "meta.location_lng": str(lng), "radiusKm": str(draw(st.sampled_from(RADII)))})
    return query
