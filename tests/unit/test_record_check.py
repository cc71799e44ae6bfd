"""Records are checked where they enter: a malformed stored item fails at its read, naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.kernel.subject_types import SubjectType
from chalicelib.listings import records as listings
from chalicelib.listings.status import ListingStatus
from chalicelib.match_requests import records as requests
from chalicelib.match_requests.models import RequestStatus
from chalicelib.persistence.record_check import MalformedRecord
from chalicelib.users import records as users


def _user(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "userId": "usr_1", "displayName": "Ada", "verifiedLevel": 2, "socialLinks": {}, "recruiting": {},
        "requestPolicy": {}, "channels": {"email": {"handle": "a@example.com", "connectedAt": "2026-01-01T00:00:00Z"}},
        "searchShard": "S3", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
    }
    item.update(changes)
    return item


def _listing(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "listingId": "lst_1", "ownerId": "usr_1", "categoryKey": "jobs", "roleKey": "offer", "title": "Cook",
        "meta": {}, "channels": ["email"], "webhookIds": [], "status": "ACTIVE", "version": 1, "searchText": "cook",
        "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z", "activeNewest": "x",
    }
    item.update(changes)
    return item


def test_a_well_formed_item_is_the_record_itself_with_undeclared_attributes_kept() -> None:
    item = _user(byCountry="DE")
    assert users.record(item) is item
    listing = listings.record(_listing())
    assert listing["status"] is ListingStatus.ACTIVE
    assert listing["activeNewest"] == "x"  # type: ignore[typeddict-item]  # an index attribute stays


def test_a_missing_field_fails_naming_record_item_and_field() -> None:
    item = _user()
    del item["displayName"]
    with pytest.raises(MalformedRecord) as caught:
        users.record(item)
    assert (caught.value.record_type, caught.value.item_id, caught.value.field) == ("UserRecord", "usr_1", "displayName")
    assert str(caught.value) == "malformed UserRecord item 'usr_1': field 'displayName': Field required"


def test_a_value_of_another_type_fails_naming_the_nested_field() -> None:
    with pytest.raises(MalformedRecord) as caught:
        users.record(_user(channels={"email": {"handle": ["not", "text"], "connectedAt": "2026-01-01T00:00:00Z"}}))
    assert caught.value.field == "channels.email.handle"
    assert "valid string" in caught.value.problem


def test_text_where_a_number_belongs_fails() -> None:
    with pytest.raises(MalformedRecord) as caught:
        listings.record(_listing(version="three"))
    assert caught.value.field == "version"


def test_an_unknown_enum_value_fails_naming_the_field() -> None:
    with pytest.raises(MalformedRecord) as caught:
        listings.record(_listing(status="SOLD"))
    assert (caught.value.field, caught.value.item_id) == ("status", "lst_1")
    assert "ListingStatus" in caught.value.problem


def test_a_missing_key_attribute_is_reported_as_unknown_item() -> None:
    item = {"subjectType": SubjectType.LISTING.value, "status": RequestStatus.PENDING.value}
    with pytest.raises(MalformedRecord) as caught:
        requests.record(item)
    assert caught.value.item_id == "?"
    assert caught.value.record_type == "RequestRecord"


def test_search_candidates_are_converted_without_the_check() -> None:
    item = _listing()
    del item["title"]
    assert listings.scanned(item)["status"] is ListingStatus.ACTIVE
