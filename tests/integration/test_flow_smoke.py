"""Creator flow through the test client: create, queue, approve, search."""

from __future__ import annotations

from tests.integration.conftest import Api, User


def test_creator_flow(api: Api, alice: User, admin: User, runner) -> None:  # type: ignore[no-untyped-def]
    body = {
        "categoryKey": "jobs",
        "roleKey": "hiring",
        "meta": {"title": "Backend engineer", "description": "<p>Python <script>x</script></p>", "location": "Berlin",
                 "employmentType": "full_time", "salary": "85000"},
        "channels": ["telegram"],
    }
    created = api.call("POST", "/v1/listings", alice.key, body)
    assert created.status_code == 201, created.json
    listing = created.json
    assert listing["status"] == "PENDING"
    assert listing["meta"]["description"] == "<p>Python </p>"
    assert runner.drain() >= 1
    claimed = api.call("POST", "/v1/admin/approvals/claims", admin.key, {"max": 5})
    assert claimed.status_code == 200, claimed.json
    assert [a["listingId"] for a in claimed.json["approvals"]] == [listing["id"]]
    decided = api.call("POST", f"/v1/admin/approvals/{claimed.json['approvals'][0]['approvalId']}", admin.key, {"decision": "approve"})
    assert decided.status_code == 200, decided.json
    assert decided.json["listing"]["status"] == "ACTIVE"
    runner.drain()  # the Listings stream files the listing in the search index
    found = api.call("GET", "/v1/listings/search?category=jobs&meta.location_lat=52.5&meta.location_lng=13.4&radiusKm=25", alice.key)
    assert found.status_code == 200, found.json
    assert found.json["total"] == 1
    assert found.json["listings"][0]["distanceKm"] < 25
