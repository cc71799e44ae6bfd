"""Listing documents of the search engine (chalicelib.listings.search.spec): field weights."""

from __future__ import annotations

from typing import Any

from chalicelib.listings.search import spec
from chalicelib.search import index


def job(title: str, location: str) -> dict[str, Any]:
    """An ACTIVE job listing item with ``title`` and the place name ``location``. Its coordinates
    are Zürich's whatever the name: only the name's text is scored."""
    return {
        "listingId": f"lst_{title[:4]}", "ownerId": "usr_owner", "categoryKey": "jobs", "roleKey": "hiring",
        "status": "ACTIVE", "version": 1, "createdAt": "2026-01-01T00:00:00.000000Z",
        "meta": {"title": title, "description": "<p>Weekend shifts at the coffee bar.</p>", "location": location,
                 "location_lat": "47.3769", "location_lng": "8.5417", "employmentType": "full_time"},
    }


def impact(listing: dict[str, Any], term: str) -> int:
    """The quantized BM25F impact (1..255) of ``term`` in ``listing``'s document."""
    doc = spec.document(listing)
    assert doc is not None
    return index.impacts(index.term_frequencies(spec.spec(), doc))[term]


def test_a_place_weighs_in_the_location_field_as_in_the_title() -> None:
    """Where a listing is weighs as what it is: the café located in Zürich holds ``zurich`` more
    strongly than a café mentor located elsewhere whose five-word title names Zürich, and than a
    listing that names it in its description."""
    located = impact(job("Café barista", "Zürich"), "zurich")
    assert located > impact(job("Café owner mentoring in Zürich", "Wien"), "zurich")
    described = job("Café barista", "Wien")
    described["meta"]["description"] = "<p>Zürich</p>"
    assert located > impact(described, "zurich")
    assert spec.spec().boosts["location"] == spec.spec().boosts["title"] > spec.spec().boosts["description"]
