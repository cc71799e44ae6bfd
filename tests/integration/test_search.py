"""``GET /v1/listings/search`` (DESIGN §1 and §2 "Search").

Read-only searches run against one seeded world (class-scoped: built once, never changed) of
ACTIVE listings plus a PENDING, a PAUSED, a REJECTED and an updated-after-approval listing.
Tests that change listings use the ordinary per-test fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.kernel.config import settings
from chalicelib.listings.search.spec import NAMESPACE
from chalicelib.search import geo
from tests.clocks import distinct_milliseconds
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User, fresh_aws, make_user
from tests.integration.helpers import (
    activate,
    assert_error,
    aws_calls,
    claim,
    create_listing,
    decide,
    error_fields,
    release,
    search_reads,
)

BERLIN = "meta.location_lat=52.52&meta.location_lng=13.405"
ITEM_KEYS = {"id", "title", "categoryKey", "roleKey", "meta", "channels", "status", "statusReason",  # no webhookIds
             "profile", "createdAt", "updatedAt", "distanceKm", "score"}

def _at(location: str, lat: str, lng: str) -> dict[str, str]:
    """The meta fields of a place: its name and coordinates."""
    return {"location": location, "location_lat": lat, "location_lng": lng}


#: name -> (category, role, meta); created in this order, so newest first is the reverse.
SEED: dict[str, tuple[str, str, dict[str, str]]] = {
    "J1": ("jobs", "hiring", {"title": "Senior Python developer", "description": "<p>Django and <strong>Kubernetes</strong></p>",
                              **_at("Berlin", "52.52", "13.405"), "employmentType": "full_time", "skills": "python,aws",
                              "salary": "85000", "experienceYears": "5", "visaSponsorship": "true", "remote": "hybrid"}),
    "J2": ("jobs", "hiring", {"title": "Barista in Zürich", "description": "<p>Coffee</p>", **_at("Zürich", "47.3769", "8.5417"),
                              "employmentType": "part_time", "salary": "40000", "visaSponsorship": "false"}),
    "J3": ("jobs", "hiring", {"title": "Go engineer", "description": "<p>Backend</p>", **_at("Potsdam", "52.3906", "13.0645"),
                              "employmentType": "contract", "skills": "go,python", "salary": "95000", "experienceYears": "3"}),
    "J4": ("jobs", "seeking", {"title": "Data scientist looking for work", "skills": "python,machine_learning",
                               **_at("Hamburg", "53.5511", "9.9937"), "salary": "70000"}),
    "J5": ("jobs", "hiring", {"title": "DevOps lead", "description": "<p>Cloud</p>", **_at("Munich", "48.1351", "11.582"),
                              "employmentType": "full_time", "skills": "devops,aws", "salary": "60000"}),
    "H1": ("housing", "offering", {"title": "Sunny room in Kreuzberg", "description": "<p>Quiet</p>",
                                   **_at("Berlin", "52.4986", "13.403"), "propertyType": "room", "rentMonthly": "650",
                                   "furnished": "true", "amenities": "balcony,parking"}),
    "H2": ("housing", "offering", {"title": "Python-free studio", "description": "<p>Calm</p>", **_at("Paris", "48.8566", "2.3522"),
                                   "propertyType": "studio", "rentMonthly": "900", "furnished": "false"}),
    "M1": ("mentoring", "mentor", {"title": "Career mentor", "description": "<p>Leadership</p>", "topics": "career,leadership",
                                   "yearsExperience": "10"}),
    # never ACTIVE at search time:
    "P_PENDING": ("jobs", "hiring", {"title": "Python pending"}),
    "P_PAUSED": ("jobs", "hiring", {"title": "Python paused"}),
    "P_REJECTED": ("jobs", "hiring", {"title": "Python rejected"}),
    "P_UPDATED": ("jobs", "hiring", {"title": "Python updated"}),
}
ACTIVE = ["J1", "J2", "J3", "J4", "J5", "H1", "H2", "M1"]
NEWEST_FIRST = ACTIVE[::-1]
BERLIN_DEFAULTS = {"description": "<p>x</p>", "location": "Berlin", "location_lat": "52.52", "location_lng": "13.405",
                   "employmentType": "full_time"}


@dataclass
class World:
    api: Api
    alice: User
    names: dict[str, str]  # listing id -> seed name

    def search(self, query: str = "") -> Any:
        return self.api.call("GET", f"/v1/listings/search?{query}", self.alice.key)

    def found(self, query: str = "") -> list[str]:
        """The seed names of the results, in result order (asserts 200)."""
        response = self.search(query)
        assert response.status_code == 200, response.json
        return [self.names[item["id"]] for item in response.json["listings"]]


def _seed(api: Api, alice: User, bob: User, admin: User, runner: Any) -> dict[str, str]:
    ids: dict[str, str] = {}
    with distinct_milliseconds():  # distinct createdAt milliseconds, so "newest first" is well defined
        for name, (category, role, meta) in SEED.items():
            full = {**BERLIN_DEFAULTS, **meta} if name.startswith("P_") else meta
            owner = bob if name in ("J2", "H2") else alice
            ids[name] = api.call("POST", "/v1/listings", owner.key,
                                 {"categoryKey": category, "roleKey": role, "meta": full, "channels": ["telegram"]}).json["id"]
    activate(api, admin, runner, *(ids[n] for n in [*ACTIVE, "P_PAUSED", "P_UPDATED"]))
    for approval in claim(api, admin):
        if approval["listingId"] == ids["P_REJECTED"]:
            assert decide(api, admin, approval["approvalId"], "reject").status_code == 200
        else:
            release(approval["approvalId"])
    assert api.call("PATCH", f"/v1/listings/{ids['P_PAUSED']}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    assert api.call("PATCH", f"/v1/listings/{ids['P_UPDATED']}", alice.key, {"meta": {"title": "Python updated again"}}).status_code == 200
    runner.drain()  # the Listings stream: posting lists follow the changes (docs/search.md, "Consistency")
    return ids


@pytest.fixture(scope="class")
def world(aws_resources: Resources) -> Iterator[World]:
    """The emptied session moto, the app and seeded data for a whole class of read-only tests
    (the same setup as the ``aws``/``api`` fixtures of conftest, built once)."""
    from app import app
    from local_stack.runner import EventRunner

    with pytest.MonkeyPatch.context() as patch, fresh_aws(aws_resources, patch), Client(app) as client:
        api = Api(client)
        alice, bob, admin = make_user("Alice", country="de"), make_user("Bob", country="fr"), make_user("Admin", admin=True)
        ids = _seed(api, alice, bob, admin, EventRunner(app))
        yield World(api, alice, {v: k for k, v in ids.items()})


class TestSearchOnSeededData:
    # --- envelope, visibility, order --------------------------------------------------

    def test_no_filter_returns_every_active_listing_newest_first(self, world: World) -> None:
        response = world.search()
        assert response.json["total"] == len(ACTIVE)
        assert (response.json["page"], response.json["pageSize"]) == (1, 20)
        assert world.found() == NEWEST_FIRST

    def test_items_carry_listing_fields_and_null_distance_without_geo(self, world: World) -> None:
        items = world.search().json["listings"]
        assert all(set(item) == ITEM_KEYS for item in items)
        assert all(item["distanceKm"] is None and item["status"] == "ACTIVE" for item in items)
        j1 = next(i for i in items if world.names[i["id"]] == "J1")
        assert j1["profile"]["userId"] == world.alice.user_id
        assert j1["profile"]["displayName"] == "Alice"
        assert j1["meta"]["salary"] == "85000"

    def test_pending_paused_rejected_and_updated_listings_never_appear(self, world: World) -> None:
        for query in ("", "q=python", "category=jobs", "category=jobs&role=hiring", f"{BERLIN}&radiusKm=5", BERLIN):
            assert not [n for n in world.found(query) if n.startswith("P_")], query

    # --- q ----------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("q", "expected"),
        [
            ("pyth", ["H2", "J1"]),
            ("PYTHON", ["H2", "J1"]),
            ("ython", []),
            ("python senior", ["J1"]),
            ("python barista", []),
            ("zurich", ["J2"]),
            ("ZÜR", ["J2"]),
            ("kubernetes", ["J1"]),
            ("strong", []),
            ("berlin", ["H1", "J1"]),  # the address text is searched too
            ("kreuz", ["H1"]),
            ("leader", ["M1"]),
            ("", NEWEST_FIRST),
        ],
    )
    def test_q_matches_word_prefixes_folding_case_and_accents(self, world: World, q: str, expected: list[str]) -> None:
        assert world.found(f"q={q}&sort=newest") == expected
        assert sorted(world.found(f"q={q}")) == sorted(expected)  # by relevance: the same matches

    # --- category, role, meta filters --------------------------------------------------

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("category=jobs", ["J5", "J4", "J3", "J2", "J1"]),
            ("category=housing", ["H2", "H1"]),
            ("category=cofounders", []),
            ("category=jobs&role=seeking", ["J4"]),
            ("role=hiring", ["J5", "J3", "J2", "J1"]),
            ("role=mentor", ["M1"]),
            ("category=jobs&meta.employmentType=full_time", ["J5", "J1"]),
            ("meta.skills=python", ["J4", "J3", "J1"]),
            ("meta.skills=aws,python", ["J1"]),
            ("meta.skills=python,rust", []),
            ("meta.salary_min=60000&meta.salary_max=90000", ["J5", "J4", "J1"]),
            ("meta.salary=85000.0", ["J1"]),
            ("meta.salary_max=39999", []),
            ("meta.experienceYears_min=4", ["J1"]),
            ("meta.visaSponsorship=true", ["J1"]),
            ("meta.visaSponsorship=FALSE", ["J2"]),
            ("category=housing&meta.furnished=true&meta.rentMonthly_max=700", ["H1"]),
            ("meta.amenities=parking", ["H1"]),
            ("category=jobs&role=hiring&q=python&meta.salary_min=80000", ["J1"]),
        ],
    )
    def test_filters(self, world: World, query: str, expected: list[str]) -> None:
        assert world.found(query) == expected

    # --- geo --------------------------------------------------------------------------

    def test_geo_results_are_nearest_first_with_distance_and_cut_at_the_radius(self, world: World) -> None:
        response = world.search(f"category=jobs&{BERLIN}&radiusKm=300")
        items = response.json["listings"]
        assert [world.names[i["id"]] for i in items] == ["J1", "J3", "J4"]
        assert [i["distanceKm"] for i in items] == [0.0, pytest.approx(27.19, abs=0.02), pytest.approx(255.25, abs=0.02)]
        assert response.json["total"] == 3

    def test_radius_excludes_farther_listings(self, world: World) -> None:
        assert world.found(f"category=jobs&{BERLIN}&radiusKm=27") == ["J1"]
        assert world.found(f"category=jobs&{BERLIN}&radiusKm=28") == ["J1", "J3"]

    def test_geo_without_radius_sorts_every_located_listing(self, world: World) -> None:
        items = world.search(f"category=jobs&{BERLIN}").json["listings"]
        assert [world.names[i["id"]] for i in items] == ["J1", "J3", "J4", "J5", "J2"]
        assert [round(i["distanceKm"]) for i in items] == [0, 27, 255, 504, 669]

    def test_geo_leaves_out_listings_without_a_location(self, world: World) -> None:
        assert "M1" not in world.found(BERLIN)
        assert "M1" in world.found()

    def test_geo_without_category_spans_categories(self, world: World) -> None:
        items = world.search(f"{BERLIN}&radiusKm=10").json["listings"]
        assert [(world.names[i["id"]], round(i["distanceKm"], 1)) for i in items] == [("J1", 0.0), ("H1", 2.4)]

    def test_very_large_radius_still_cuts_by_distance(self, world: World) -> None:
        assert world.found(f"{BERLIN}&radiusKm=700") == ["J1", "H1", "J3", "J4", "J5", "J2"]
        assert world.found(f"{BERLIN}&radiusKm=5000") == ["J1", "H1", "J3", "J4", "J5", "J2", "H2"]

    def test_geo_combines_with_role_and_filters(self, world: World) -> None:
        assert world.found(f"category=jobs&role=hiring&meta.skills=python&{BERLIN}&radiusKm=50") == ["J1", "J3"]
        assert world.found(f"category=jobs&role=seeking&{BERLIN}&radiusKm=300") == ["J4"]

    # --- pagination -------------------------------------------------------------------

    def test_pages_are_slices_of_one_exact_total(self, world: World) -> None:
        pages = [world.search(f"pageSize=3&page={p}").json for p in (1, 2, 3, 4)]
        assert [p["total"] for p in pages] == [8, 8, 8, 8]
        assert [(p["page"], p["pageSize"]) for p in pages] == [(1, 3), (2, 3), (3, 3), (4, 3)]
        assert [len(p["listings"]) for p in pages] == [3, 3, 2, 0]
        assert [world.names[i["id"]] for p in pages for i in p["listings"]] == NEWEST_FIRST

    def test_geo_results_paginate_in_distance_order(self, world: World) -> None:
        first = world.found(f"category=jobs&{BERLIN}&pageSize=2")
        second = world.found(f"category=jobs&{BERLIN}&pageSize=2&page=2")
        assert first + second == ["J1", "J3", "J4", "J5"]

    @pytest.mark.parametrize("size", [1, 100])
    def test_page_size_bounds_are_inclusive(self, world: World, size: int) -> None:
        response = world.search(f"pageSize={size}")
        assert response.json["pageSize"] == size
        assert len(response.json["listings"]) == min(size, 8)

    # --- invalid parameters -----------------------------------------------------------

    @pytest.mark.parametrize(
        ("query", "field"),
        [
            ("category=spaceships", "category"),
            ("category=jobs&role=mentor", "role"),
            ("role=captain", "role"),
            ("meta.favouriteColour=blue", "meta.favouriteColour"),
            ("category=housing&meta.salary_min=1", "meta.salary_min"),
            ("meta.title=python", "meta.title"),
            ("meta.location=Berlin", "meta.location"),
            ("meta.employmentType=gig", "meta.employmentType"),
            ("meta.employmentType_min=1", "meta.employmentType_min"),
            ("meta.salary=lots", "meta.salary"),
            ("meta.salary=1e10000000", "meta.salary"),
            ("meta.experienceYears=--1", "meta.experienceYears"),
            ("meta.salary_lat=1&meta.salary_lng=2", "meta.salary_lat"),
            ("meta.location_lat=north&meta.location_lng=13.4", "meta.location_lat"),
            ("meta.location_lat=52.5&meta.location_lng=east", "meta.location_lng"),
            ("meta.location_lat=%2B52.5&meta.location_lng=13.4", "meta.location_lat"),
            ("meta.location_lat=52.5&meta.location_lng=1_3.4", "meta.location_lng"),
            ("meta.location_lat=nan&meta.location_lng=13.4", "meta.location_lat"),
            ("meta.location_lat=91&meta.location_lng=13.4", "meta.location_lat"),
            ("meta.location_lat=-90.1&meta.location_lng=13.4", "meta.location_lat"),
            ("meta.location_lat=52.5&meta.location_lng=180.5", "meta.location_lng"),
            ("meta.location_lat=52.5", "meta.location_lng"),
            ("meta.location_lng=13.4&radiusKm=10", "meta.location_lat"),
            ("radiusKm=10", "radiusKm"),
            (f"{BERLIN}&radiusKm=0", "radiusKm"),
            (f"{BERLIN}&radiusKm=-5", "radiusKm"),
            (f"{BERLIN}&radiusKm=far", "radiusKm"),
            (f"{BERLIN}&radiusKm=20039", "radiusKm"),
            ("pageSize=0", "pageSize"),
            ("pageSize=101", "pageSize"),
            ("page=0", "page"),
            ("page=two", "page"),
            ("sort=oldest", "sort"),
            ("meta.=x", "meta."),
            ("Category=jobs", "Category"),
            # numbers as JSON writes them: no leading zero, no white space around them
            ("pageSize=05", "pageSize"),
            ("pageSize=007", "pageSize"),
            ("page=01", "page"),
            ("pageSize=%2020", "pageSize"),
            ("page=1%20", "page"),
            (f"{BERLIN}&radiusKm=05", "radiusKm"),
            (f"{BERLIN}&radiusKm=%205", "radiusKm"),
            ("meta.location_lat=052.5&meta.location_lng=13", "meta.location_lat"),
            ("meta.location_lat=%2052.5&meta.location_lng=13", "meta.location_lat"),
            ("meta.location_lat=52.5%20&meta.location_lng=13", "meta.location_lat"),
            ("meta.location_lat=52.5&meta.location_lng=13%0A", "meta.location_lng"),
            ("meta.salary=085000", "meta.salary"),
            ("meta.salary_min=%2085000", "meta.salary_min"),
            ("meta.salary_max=85000%0A", "meta.salary_max"),
            ("meta.experienceYears=05", "meta.experienceYears"),
            ("meta.salary=8.5e4", "meta.salary"),
        ],
    )
    def test_invalid_parameter_is_a_validation_error_naming_it(self, world: World, query: str, field: str) -> None:
        response = world.search(query)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]

    # --- access pattern: indexes only, never a Scan ------------------------------------

    def test_no_search_ever_scans(self, world: World) -> None:
        queries = ["", "q=python", "category=jobs", "category=jobs&role=hiring&meta.salary_min=1", "role=mentor",
                   BERLIN, f"{BERLIN}&radiusKm=25", f"category=housing&{BERLIN}&radiusKm=200", f"{BERLIN}&radiusKm=5000"]
        with aws_calls("Scan") as scans, aws_calls("Query") as reads:
            for query in queries:
                assert world.search(query).status_code == 200
        assert scans == []
        assert len(reads) >= len(queries)  # the hook sees the product's calls

    def test_category_and_geo_search_reads_only_that_categorys_geo_cells(self, world: World) -> None:
        with aws_calls("Query") as reads:
            assert world.found(f"category=jobs&role=hiring&{BERLIN}&radiusKm=25") == ["J1"]
        reads = search_reads(reads)
        assert reads
        assert {r["TableName"] for r in reads} == {settings().SEARCH_INDEX_TABLE}
        assert all("IndexName" not in r for r in reads)
        partitions = [r["ExpressionAttributeValues"][":pk"]["S"] for r in reads]
        assert all(p.startswith(f"{NAMESPACE}|jobs|g") for p in partitions)

    def test_geo_search_reads_cells_around_the_centre(self, world: World) -> None:
        with aws_calls("Query") as reads:
            world.found(f"category=jobs&{BERLIN}&radiusKm=200")
        cells = [r["ExpressionAttributeValues"][":pk"]["S"].rsplit("|", 1)[1] for r in search_reads(reads)]
        assert cells
        assert all(geo.min_distance_km(52.52, 13.405, c) <= 3 * 1300 for c in cells)

    def test_category_search_reads_only_that_categorys_lists(self, world: World) -> None:
        with aws_calls("Query") as reads:
            assert world.found("category=jobs&role=seeking") == ["J4"]
        partitions = {r["ExpressionAttributeValues"][":pk"]["S"] for r in search_reads(reads)}
        assert partitions
        assert partitions <= {f"{NAMESPACE}|jobs|a", f"{NAMESPACE}|jobs|k|_role=seeking"}

    def test_q_reads_the_term_lists_of_every_category(self, world: World) -> None:
        """``q`` reads the impact lists of the terms its word matches, per category, never a category list."""
        with aws_calls("Query") as reads:
            world.found("q=python")
        partitions = {r["ExpressionAttributeValues"][":pk"]["S"] for r in search_reads(reads)}
        lists = {p for p in partitions if "|t|" in p}
        assert {f"{NAMESPACE}|jobs|t|python", f"{NAMESPACE}|housing|t|python"} <= lists
        assert not any(p.endswith("|a") for p in partitions)

    def test_one_letter_q_matches_its_exact_term_only(self, world: World) -> None:
        with aws_calls("Query") as reads:
            assert world.found("q=p") == []
        partitions = {r["ExpressionAttributeValues"][":pk"]["S"] for r in search_reads(reads)}
        assert {p for p in partitions if "|t|" in p} <= {f"{NAMESPACE}|{c}|t|p" for c in ("cofounders", "housing", "jobs", "mentoring")}

    def test_filtered_search_totals_are_exact_within_the_read_budget(self, world: World) -> None:
        result = world.search("category=jobs&meta.skills=python").json
        assert result["totalRelation"] == "eq"
        assert result["total"] == len(result["listings"])


# --- searches after changes (fresh data per test) --------------------------------------


def _found(api: Api, user: User, query: str) -> list[str]:
    response = api.call("GET", f"/v1/listings/search?{query}", user.key)
    assert response.status_code == 200, response.json
    return [item["id"] for item in response.json["listings"]]


def test_paused_listing_leaves_search_and_returns_on_resume(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    query = f"category=jobs&{BERLIN}&radiusKm=10"
    assert _found(api, bob, query) == [listing["id"]]
    api.call("PATCH", f"/v1/listings/{listing['id']}/status", alice.key, {"status": "PAUSED"})
    assert _found(api, bob, query) == []
    assert _found(api, bob, "category=jobs") == []
    api.call("PATCH", f"/v1/listings/{listing['id']}/status", alice.key, {"status": "ACTIVE"})
    assert _found(api, bob, query) == [listing["id"]]
    assert _found(api, bob, "category=jobs") == [listing["id"]]


def test_updated_listing_leaves_search_until_approved_again(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    api.call("PATCH", f"/v1/listings/{listing['id']}", alice.key, {"meta": {"location": "Hamburg", "location_lat": "53.55",
                                                                             "location_lng": "9.99"}})
    assert _found(api, bob, "category=jobs") == []
    activate(api, admin, runner, listing["id"])
    assert _found(api, bob, f"category=jobs&{BERLIN}&radiusKm=10") == []  # re-indexed at the new place
    assert _found(api, bob, "category=jobs&meta.location_lat=53.55&meta.location_lng=9.99&radiusKm=10") == [listing["id"]]


def test_deleted_listing_leaves_search(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key)
    assert _found(api, bob, "") == []
    assert _found(api, bob, f"{BERLIN}&radiusKm=10") == []


def test_extreme_stored_numbers_are_found_by_filters_on_their_stored_text(api: Api, alice: User, bob: User, admin: User,
                                                                           runner: Any) -> None:
    tiny = "0." + "0" * 70 + "1234567890123456789012345678"  # 100 characters, the longest stored value
    big = create_listing(api, alice, meta={"salary": "9007199254740991", "experienceYears": "-9007199254740991"})
    small = create_listing(api, alice, meta={"salary": tiny})
    activate(api, admin, runner, big["id"], small["id"])
    assert big["meta"]["salary"] == "9007199254740991"
    assert small["meta"]["salary"] == tiny
    assert _found(api, bob, "category=jobs&meta.salary=9007199254740991") == [big["id"]]
    assert _found(api, bob, "category=jobs&meta.experienceYears=-9007199254740991") == [big["id"]]
    assert _found(api, bob, "category=jobs&meta.salary_min=9007199254740991") == [big["id"]]
    assert _found(api, bob, f"category=jobs&meta.salary={tiny}") == [small["id"]]
    assert _found(api, bob, f"category=jobs&meta.salary_max={tiny}&meta.salary_min={tiny}") == [small["id"]]


def test_coordinates_with_an_exponent_are_numbers_as_json_writes_them(api: Api, alice: User, bob: User, admin: User,
                                                                     runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    assert _found(api, bob, "meta.location_lat=5.252e1&meta.location_lng=1340.5E-2&radiusKm=1e1") == [listing["id"]]


def test_search_needs_a_key(api: Api, aws: dict[str, str]) -> None:
    assert_error(api.call("GET", "/v1/listings/search"), 401, "UNAUTHORIZED")
