"""Spec §1 Creator and Listing-seeker flows (up to the listing detail) over HTTP against the local stack."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Stack, approve_listing, free_port, start_stack, stop_stack, wait_until

pytestmark = pytest.mark.e2e


def test_health_needs_no_key_and_errors_use_the_spec_body(stack: Stack) -> None:
    anonymous = stack.client()
    assert anonymous.get("/v1/health").status_code == 200
    missing = anonymous.get("/v1/categories")
    assert missing.status_code == 401
    assert missing.json()["code"] == "UNAUTHORIZED"
    unknown = stack.admin().get("/v1/no-such-route")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "NOT_FOUND")
    wrong_method = stack.admin().put("/v1/categories")
    assert (wrong_method.status_code, wrong_method.json()["code"]) == (405, "METHOD_NOT_ALLOWED")
    malformed = stack.admin().post("/v1/listings", content=b"{not json", headers={"Content-Type": "application/json"})
    assert (malformed.status_code, malformed.json()["code"]) == (400, "VALIDATION_ERROR")
    huge = stack.admin().post("/v1/listings", content=b"{" + b" " * (300 * 1024) + b"}", headers={"Content-Type": "application/json"})
    assert (huge.status_code, huge.json()["code"]) == (413, "PAYLOAD_TOO_LARGE")


def test_creator_flow(stack: Stack) -> None:
    owner_id, owner = stack.new_user("Clara Creator", country="de")
    categories = owner.get("/v1/categories").json()["categories"]
    assert {"jobs", "cofounders", "mentoring", "housing"} <= {c["key"] for c in categories}
    jobs = owner.get("/v1/categories/jobs").json()
    hiring_required = {f["key"] for f in jobs["fields"] if "hiring" in f["requiredFor"]}
    assert {"title", "description", "location", "employmentType"} <= hiring_required

    assert owner.put("/v1/me/channels/discord", json={"handle": "clara#1234"}).status_code == 200
    channels = owner.get("/v1/me/channels").json()["channels"]
    assert {c["key"] for c in channels} == {"telegram", "discord"}

    body = {
        "categoryKey": "jobs", "roleKey": "hiring", "channels": ["telegram", "signal"],
        "meta": {"title": "Staff engineer", "description": "<p>Own our platform</p>", "location": "Hamburg, Germany",
                 "employmentType": "full_time", "salary": "120000"},
    }
    rejected = owner.post("/v1/listings", json=body)
    assert rejected.status_code == 400
    assert rejected.json()["details"][0]["field"] == "channels"

    body["channels"] = ["telegram", "discord"]
    created = owner.post("/v1/listings", json=body)
    assert created.status_code == 201, created.text
    listing = created.json()
    assert listing["status"] == "PENDING"
    assert float(listing["meta"]["location_lat"]) == pytest.approx(53.55, abs=0.1)  # geocoded server-side
    mine = owner.get("/v1/listings/mine").json()
    assert [(x["id"], x["status"]) for x in mine["listings"]] == [(listing["id"], "PENDING")]

    approved = approve_listing(stack, listing["id"])
    assert approved["status"] == "ACTIVE"
    assert owner.get(f"/v1/listings/{listing['id']}").json()["status"] == "ACTIVE"
    assert owner.get("/v1/listings/mine").json()["listings"][0]["profile"]["userId"] == owner_id


def test_listing_seeker_flow(stack: Stack) -> None:
    owner_id, owner = stack.new_user("Olga Owner", country="pl")
    created = owner.post("/v1/listings", json={
        "categoryKey": "housing", "roleKey": "offering", "channels": ["telegram"],
        "meta": {"title": "Sunny room near the Vistula", "description": "<p>Quiet flat</p>", "location": "Warsaw",
                 "location_lat": "52.2300", "location_lng": "21.0100", "propertyType": "room", "rentMonthly": "900",
                 "amenities": "furnished,balcony"},
    })
    assert created.status_code == 201, created.text
    listing_id = created.json()["id"]
    approve_listing(stack, listing_id)

    _, seeker = stack.new_user("Sam Seeker")

    def vistula() -> dict[str, Any] | None:
        found: dict[str, Any] = seeker.get("/v1/listings/search", params={"category": "housing", "q": "vistula"}).json()
        return found if found["listings"] else None

    by_category = wait_until(vistula)  # posting lists follow the Listings stream (docs/search.md, "Consistency")
    assert [x["id"] for x in by_category["listings"]] == [listing_id]
    assert by_category["listings"][0]["distanceKm"] is None

    fields = {f["key"]: f for f in seeker.get("/v1/categories/housing").json()["fields"]}
    assert fields["amenities"]["type"] == "multiselect"
    def by_meta() -> list[str] | None:
        found = seeker.get("/v1/listings/search", params={"category": "housing", "meta.amenities": "balcony",
                                                          "meta.rentMonthly_max": "1000"}).json()
        ids = [x["id"] for x in found["listings"]]
        return ids if listing_id in ids else None

    # Each posting list and its size follow the stream on their own (docs/search.md, "Consistency"):
    # a listing found by its word may reach a value list's size a moment later.
    assert listing_id in wait_until(by_meta)
    too_expensive = seeker.get("/v1/listings/search", params={"category": "housing", "meta.rentMonthly_max": "500",
                                                              "q": "vistula"}).json()
    assert too_expensive["total"] == 0

    place = seeker.get("/v1/geocode", params={"q": "Warszawa"})
    assert place.status_code == 200, place.text
    geo = place.json()
    nearby = seeker.get("/v1/listings/search", params={
        "category": "housing", "meta.location_lat": geo["latitude"], "meta.location_lng": geo["longitude"], "radiusKm": 25,
    }).json()
    hit = next(x for x in nearby["listings"] if x["id"] == listing_id)
    assert hit["distanceKm"] < 25
    distances = [x["distanceKm"] for x in nearby["listings"]]
    assert distances == sorted(distances)
    far = seeker.get("/v1/listings/search", params={
        "category": "housing", "meta.location_lat": 48.85, "meta.location_lng": 2.35, "radiusKm": 25, "q": "vistula",
    }).json()
    assert far["total"] == 0

    detail = seeker.get(f"/v1/listings/{listing_id}")
    assert detail.status_code == 200
    assert detail.json()["profile"]["userId"] == owner_id
    assert detail.json()["channels"] == ["telegram"]
    assert detail.json()["myRequest"] is None


def test_stack_stops_with_its_children_on_sigterm() -> None:
    running = start_stack()
    moto_port = int(running.moto_url.rsplit(":", 1)[1])
    assert stop_stack(running) == 0
    with __import__("socket").socket() as sock:
        assert sock.connect_ex(("127.0.0.1", moto_port)) != 0, "moto server still listening after SIGTERM"
    assert free_port()
