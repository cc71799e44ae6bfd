"""Listing meta rules through the API: canonical values stored, rich text sanitized, locations geocoded,
invalid meta refused naming the field with nothing stored (the rules themselves: tests/unit/test_listing_meta.py)."""

from __future__ import annotations

import pytest

from tests.integration.conftest import Api, User
from tests.integration.helpers import (
    Stack,
    assert_error,
    class_stack,  # noqa: F401  (the class-scoped ``stack`` fixture)
    error_fields,
    listing_body,
    my_listings,
)


def test_create_stores_canonical_values(api: Api, alice: User) -> None:
    body = listing_body("housing", "offering", meta={"rentMonthly": "650.50", "bedrooms": "02", "furnished": "TRUE",
                                                      "amenities": "balcony, parking,balcony", "availableFrom": "2026-04-01"})
    response = api.call("POST", "/v1/listings", alice.key, body)
    assert response.status_code == 201, response.json
    meta = response.json["meta"]
    assert (meta["rentMonthly"], meta["bedrooms"], meta["furnished"], meta["amenities"], meta["availableFrom"]) == (
        "650.5", "2", "true", "balcony,parking", "2026-04-01")
    stored = api.call("GET", f"/v1/listings/{response.json['id']}", alice.key).json["meta"]
    assert stored == meta


def test_create_sanitizes_rich_text_before_storing(api: Api, alice: User) -> None:
    html = '<p onclick="x()">Hi</p><script>alert(1)</script><img src="a.png" onerror="alert(2)"><a href="javascript:alert(3)">l</a>'
    listing = api.call("POST", "/v1/listings", alice.key, listing_body(meta={"description": html})).json
    stored = api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["meta"]["description"]
    assert stored.startswith("<p>Hi</p>")
    for fragment in ("script", "onerror", "onclick", "javascript:", "alert"):
        assert fragment not in stored


@pytest.mark.parametrize("url", ["https://[x", "https://example.com/\u202egpj.exe", "https://bank.example@evil.example/",
                                 "https://例え.jp/", "https://example.com:70000/"])
def test_a_link_that_cannot_be_read_or_hides_its_host_is_refused_naming_it(api: Api, alice: User, url: str) -> None:
    """A listing's url field and a profile link: a 400 naming the field (an unclosed IPv6 literal was a 500)."""
    assert_error(api.call("POST", "/v1/listings", alice.key, listing_body("jobs", "seeking", meta={"portfolio": url})),
                 400, "VALIDATION_ERROR", "meta.portfolio")
    assert_error(api.call("PATCH", "/v1/me/profile", alice.key, {"socialLinks": {"website": url}}),
                 400, "VALIDATION_ERROR", "socialLinks.website")
    assert my_listings(api, alice)["total"] == 0
    assert api.call("GET", "/v1/me", alice.key).json["socialLinks"]["website"] is None


def test_create_geocodes_a_location_without_coordinates(api: Api, alice: User) -> None:
    body = listing_body(meta={"location": "Hamburg", "location_lat": None, "location_lng": None})
    meta = api.call("POST", "/v1/listings", alice.key, body).json["meta"]
    assert float(meta["location_lat"]) == pytest.approx(53.55, abs=0.05)
    assert float(meta["location_lng"]) == pytest.approx(9.99, abs=0.05)


class TestInvalidMeta:
    """Refused creates on one shared stack (they store nothing: what each asserts)."""

    @pytest.mark.parametrize(
        ("meta", "field"),
        [
            ({"salary": "a lot"}, "meta.salary"),
            ({"salary": "1e10000000"}, "meta.salary"),
            ({"experienceYears": "9" * 5000}, "meta.experienceYears"),
            ({"employmentType": "gig"}, "meta.employmentType"),
            ({"skills": "python,cobol"}, "meta.skills"),
            ({"startDate": "2026-13-01"}, "meta.startDate"),
            ({"visaSponsorship": "maybe"}, "meta.visaSponsorship"),
            ({"title": None}, "meta.title"),
            ({"description": "<script>x</script>"}, "meta.description"),
            ({"nonsense": "1"}, "meta.nonsense"),
            ({"location_lat": "95"}, "meta.location_lat"),
            ({"location_lng": None}, "meta.location_lng"),
            ({"location": "Xyzzyqwv Nowhere", "location_lat": None, "location_lng": None}, "meta.location"),
        ],
    )
    def test_invalid_meta_through_the_api_names_the_field_and_stores_nothing(
        self, stack: Stack, meta: dict[str, str | None], field: str
    ) -> None:
        response = stack.api.call("POST", "/v1/listings", stack.alice.key, listing_body(meta=meta))
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]
        assert my_listings(stack.api, stack.alice)["total"] == 0
        assert stack.runner.drain() == 0  # nothing written: no stream record
