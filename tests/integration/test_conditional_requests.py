"""Conditional requests over the API: ETag on listing and profile reads, If-None-Match
-> 304, If-Match on PATCH, status changes and DELETE -> 412 PRECONDITION_FAILED on a mismatch."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, assert_error, create_listing, get_listing

# --- listings ----------------------------------------------------------------------------------


def _etag(api: Api, user: User, path: str) -> str:
    response = api.call("GET", path, user.key)
    assert response.status_code == 200, response.json
    tag: str = response.headers["ETag"]
    return tag


def _listing_and_path(api: Api, owner: User) -> tuple[dict[str, Any], str]:
    """A new listing of ``owner``'s and its path."""
    listing = create_listing(api, owner)
    return listing, f"/v1/listings/{listing['id']}"


def test_listing_read_has_an_etag_and_if_none_match_answers_304(api: Api, alice: User) -> None:
    _listing, path = _listing_and_path(api, alice)
    tag = _etag(api, alice, path)
    assert tag.startswith('"1-')
    cached = api.call("GET", path, alice.key, headers={"if-none-match": tag})
    assert cached.status_code == 304
    assert cached.body in (b"", None)
    assert cached.headers["ETag"] == tag
    assert api.call("GET", path, alice.key, headers={"if-none-match": '"9-0123456789abcdef"'}).status_code == 200


def test_a_change_changes_the_etag(api: Api, alice: User) -> None:
    _listing, path = _listing_and_path(api, alice)
    before = _etag(api, alice, path)
    assert api.call("PATCH", path, alice.key, {"meta": {"title": "New title"}}).status_code == 200
    after = _etag(api, alice, path)
    assert after != before
    assert after.startswith('"2-')
    assert api.call("GET", path, alice.key, headers={"if-none-match": before}).status_code == 200


def test_patch_with_the_current_etag_applies_and_with_a_stale_one_is_412(api: Api, alice: User) -> None:
    listing, path = _listing_and_path(api, alice)
    tag = _etag(api, alice, path)
    ok = api.call("PATCH", path, alice.key, {"meta": {"title": "First edit"}}, headers={"if-match": tag})
    assert ok.status_code == 200, ok.json
    stale = api.call("PATCH", path, alice.key, {"meta": {"title": "Lost update"}}, headers={"if-match": tag})
    assert_error(stale, 412, "PRECONDITION_FAILED")
    assert get_listing(api, alice, listing["id"]).json["title"] == "First edit"


def test_if_match_star_only_requires_existence(api: Api, alice: User) -> None:
    _listing, path = _listing_and_path(api, alice)
    assert api.call("PATCH", path, alice.key, {"meta": {"title": "Any"}}, headers={"if-match": "*"}).status_code == 200


def test_status_change_and_delete_honour_if_match(api: Api, alice: User, admin: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    activate(api, admin, runner, listing["id"])
    path = f"/v1/listings/{listing['id']}"
    tag = _etag(api, alice, path)
    paused = api.call("PATCH", f"{path}/status", alice.key, {"status": "PAUSED"}, headers={"if-match": tag})
    assert paused.status_code == 200, paused.json
    resumed = api.call("PATCH", f"{path}/status", alice.key, {"status": "ACTIVE"}, headers={"if-match": tag})
    assert_error(resumed, 412, "PRECONDITION_FAILED")  # pausing changed the version
    assert_error(api.call("DELETE", path, alice.key, headers={"if-match": tag}), 412, "PRECONDITION_FAILED")
    assert get_listing(api, alice, listing["id"]).json["status"] == "PAUSED"
    fresh = _etag(api, alice, path)
    assert api.call("DELETE", path, alice.key, headers={"if-match": fresh}).status_code == 200
    assert_error(get_listing(api, alice, listing["id"]), 404, "NOT_FOUND")


def test_a_write_between_read_and_conditional_write_is_412_atomically(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The version check is the write's own condition: a change that lands after the service read
    the listing (simulated here) still makes the conditional write fail, without a lost update."""
    from chalicelib.listings import repository, service

    listing, path = _listing_and_path(api, alice)
    tag = _etag(api, alice, path)
    original_get = repository.get

    def read_then_someone_else_writes(listing_id: str) -> Any:
        item = original_get(listing_id)
        monkeypatch.setattr(repository, "get", original_get)
        assert api.call("PATCH", path, alice.key, {"meta": {"title": "Concurrent"}}).status_code == 200
        return item

    monkeypatch.setattr(repository, "get", read_then_someone_else_writes)
    monkeypatch.setattr(service.repository, "get", read_then_someone_else_writes)
    response = api.call("PATCH", path, alice.key, {"meta": {"title": "Mine"}}, headers={"if-match": tag})
    assert_error(response, 412, "PRECONDITION_FAILED")
    assert get_listing(api, alice, listing["id"]).json["title"] == "Concurrent"


def test_a_malformed_if_match_is_412_and_changes_nothing(api: Api, alice: User) -> None:
    listing, path = _listing_and_path(api, alice)
    assert_error(api.call("PATCH", path, alice.key, {"meta": {"title": "x"}}, headers={"if-match": "nope"}), 412,
                 "PRECONDITION_FAILED")
    assert get_listing(api, alice, listing["id"]).json["title"] == listing["title"]


@pytest.mark.parametrize("tag", ["nope", 'W/"1-0000000000000000"'])
def test_a_tag_that_cannot_match_still_answers_404_and_403_before_412(api: Api, alice: User, bob: User, admin: User,
                                                                     runner: Any, tag: str) -> None:
    listing, path = _listing_and_path(api, alice)
    activate(api, admin, runner, listing["id"])  # public: another user's write is 403, not 404
    missing = path.replace(listing["id"], "lst_01M8TJNX812KDJS021GBVVE5Q2")
    writes = (("PATCH", "", {"meta": {"title": "x"}}), ("PATCH", "/status", {"status": "PAUSED"}), ("DELETE", "", None))
    for method, suffix, body in writes:
        assert_error(api.call(method, missing + suffix, alice.key, body, headers={"if-match": tag}), 404, "NOT_FOUND")
        assert_error(api.call(method, path + suffix, bob.key, body, headers={"if-match": tag}), 403, "FORBIDDEN")
        assert_error(api.call(method, path + suffix, alice.key, body, headers={"if-match": tag}), 412, "PRECONDITION_FAILED")
    assert get_listing(api, alice, listing["id"]).json["status"] == "ACTIVE"


def test_if_match_naming_two_versions_is_a_400_in_either_order(api: Api, alice: User) -> None:
    listing, path = _listing_and_path(api, alice)
    current = api.call("GET", path, alice.key).headers["ETag"]
    stale = '"99-0000000000000000"'
    for tags in (f"{stale}, {current}", f"{current}, {stale}"):
        refused = api.call("PATCH", path, alice.key, {"meta": {"title": "x"}}, headers={"if-match": tags})
        assert_error(refused, 400, "VALIDATION_ERROR", "If-Match")
    assert get_listing(api, alice, listing["id"]).headers["ETag"] == current


# --- profiles ----------------------------------------------------------------------------------


def test_profile_reads_have_etags_and_if_match_guards_the_profile_patch(api: Api, alice: User, bob: User) -> None:
    tag = _etag(api, alice, "/v1/me")
    assert tag.startswith('"1-')
    assert api.call("GET", "/v1/me", alice.key, headers={"if-none-match": tag}).status_code == 304
    other = _etag(api, bob, f"/v1/profiles/{alice.user_id}")
    assert other.startswith('"1-')
    ok = api.call("PATCH", "/v1/me/profile", alice.key, {"displayName": "Alice B."}, headers={"if-match": tag})
    assert ok.status_code == 200, ok.json
    assert _etag(api, alice, "/v1/me").startswith('"2-')
    stale = api.call("PATCH", "/v1/me/profile", alice.key, {"displayName": "Lost"}, headers={"if-match": tag})
    assert_error(stale, 412, "PRECONDITION_FAILED")
    assert api.call("GET", "/v1/me", alice.key).json["displayName"] == "Alice B."
    assert api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key, headers={"if-none-match": other}).status_code == 200


def test_connecting_a_channel_changes_the_profile_version(api: Api, alice: User) -> None:
    tag = _etag(api, alice, "/v1/me")
    assert api.call("PUT", "/v1/me/channels/whatsapp", alice.key, {"handle": "+491701234567"}).status_code == 200
    assert_error(api.call("PATCH", "/v1/me/profile", alice.key, {"displayName": "X"}, headers={"if-match": tag}), 412,
                 "PRECONDITION_FAILED")
