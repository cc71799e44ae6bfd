"""API keys (stored only as SHA-256, Bearer scheme, admin scope, per-process cache) and the admin user routes.

Requests that must change nothing share one stack (class ``TestWithoutWrites``); tests that
create or change users use the per-test fixtures.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.auth.service import clear_cache
from chalicelib.kernel.config import settings
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User
from tests.integration.helpers import Stack, assert_error, aws_calls, error_fields, shared_stack, table_items


@pytest.fixture(scope="class")
def stack(aws_resources: Resources) -> Iterator[Stack]:
    with shared_stack(aws_resources) as built:
        yield built


def _create_user(api: Api, caller: User, **body: Any) -> Any:
    return api.call("POST", "/v1/admin/users", caller.key, {"displayName": "Carol", **body})


def _api_key_lookups(calls: list[dict[str, Any]]) -> int:
    return sum(1 for c in calls if c["TableName"] == settings().API_KEYS_TABLE)


def _user_count() -> int:
    return len(table_items(settings().USERS_TABLE))


class TestWithoutWrites:
    # --- Bearer scheme -----------------------------------------------------------------

    @pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
    def test_bearer_scheme_is_case_insensitive(self, stack: Stack, scheme: str) -> None:
        response = stack.api.call("GET", "/v1/me", headers={"authorization": f"{scheme} {stack.alice.key}"})
        assert response.status_code == 200, response.json
        assert response.json["userId"] == stack.alice.user_id

    def test_key_itself_is_case_sensitive(self, stack: Stack) -> None:
        swapped = "msk_" + stack.alice.key[4:].swapcase()
        assert swapped != stack.alice.key
        assert_error(stack.api.call("GET", "/v1/me", swapped), 401, "UNAUTHORIZED")

    def test_each_key_authenticates_its_own_user(self, stack: Stack) -> None:
        assert stack.api.call("GET", "/v1/me", stack.alice.key).json["userId"] == stack.alice.user_id
        assert stack.api.call("GET", "/v1/me", stack.bob.key).json["userId"] == stack.bob.user_id

    # --- admin scope -------------------------------------------------------------------

    def test_admin_key_reaches_admin_routes(self, stack: Stack) -> None:
        response = stack.api.call("GET", "/v1/admin/approvals", stack.admin.key)
        assert response.status_code == 200
        assert response.json == {"listings": [], "pageSize": 20, "nextCursor": None}

    def test_regular_key_is_refused_on_admin_routes(self, stack: Stack) -> None:
        assert_error(stack.api.call("GET", "/v1/admin/approvals", stack.alice.key), 403, "FORBIDDEN")

    # --- in-process key cache ----------------------------------------------------------

    def test_second_request_with_same_key_does_not_read_the_key_table(self, stack: Stack) -> None:
        clear_cache()
        with aws_calls("GetItem") as calls:
            assert stack.api.call("GET", "/v1/categories", stack.alice.key).status_code == 200
            assert _api_key_lookups(calls) == 1
            assert stack.api.call("GET", "/v1/categories", stack.alice.key).status_code == 200
            headers = {"authorization": f"BEARER {stack.alice.key}"}
            assert stack.api.call("GET", "/v1/categories", headers=headers).status_code == 200
            assert _api_key_lookups(calls) == 1

    def test_cache_is_per_key(self, stack: Stack) -> None:
        clear_cache()
        with aws_calls("GetItem") as calls:
            for user in (stack.alice, stack.bob, stack.alice, stack.bob):
                stack.api.call("GET", "/v1/categories", user.key)
        assert _api_key_lookups(calls) == 2

    def test_unknown_keys_are_never_cached_as_valid(self, stack: Stack) -> None:
        with aws_calls("GetItem") as calls:
            for _ in range(2):
                assert_error(stack.api.call("GET", "/v1/categories", "msk_unknown"), 401, "UNAUTHORIZED")
        assert _api_key_lookups(calls) == 2

    def test_cached_key_keeps_its_scope(self, stack: Stack) -> None:
        assert stack.api.call("GET", "/v1/categories", stack.alice.key).status_code == 200  # now cached
        assert_error(stack.api.call("GET", "/v1/admin/approvals", stack.alice.key), 403, "FORBIDDEN")

    # --- POST /v1/admin/users: rejected bodies -----------------------------------------

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"country": "xx"}, "country"),
            ({"country": "deu"}, "country"),
            ({"verifiedLevel": 4}, "verifiedLevel"),
            ({"verifiedLevel": -1}, "verifiedLevel"),
            ({"verifiedLevel": "high"}, "verifiedLevel"),
            ({"displayName": ""}, "displayName"),
            ({"displayName": "x" * 81}, "displayName"),
            ({"channels": ["telegram"]}, "channels"),
            ({"channels": {"telegram": ""}}, "channels.telegram"),
            ({"role": "admin"}, "role"),
        ],
    )
    def test_create_user_validation_names_the_field(self, stack: Stack, body: dict[str, Any], field: str) -> None:
        users_before = _user_count()
        response = _create_user(stack.api, stack.admin, **body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]
        assert _user_count() == users_before

    def test_create_user_rejects_unknown_channel_keys(self, stack: Stack) -> None:
        users_before = _user_count()
        response = _create_user(stack.api, stack.admin, channels={"telegram": "@c", "fax": "+49"})
        assert_error(response, 400, "VALIDATION_ERROR")
        fields = error_fields(response)
        assert len(fields) == 1
        assert fields[0].startswith("channels.fax")
        assert _user_count() == users_before

    def test_create_user_requires_display_name(self, stack: Stack) -> None:
        response = stack.api.call("POST", "/v1/admin/users", stack.admin.key, {"country": "de"})
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["displayName"]

    def test_non_admin_cannot_create_users(self, stack: Stack) -> None:
        users_before = _user_count()
        response = stack.api.call("POST", "/v1/admin/users", stack.alice.key, {"displayName": "Mallory", "admin": True})
        assert_error(response, 403, "FORBIDDEN")
        assert _user_count() == users_before

    # --- PATCH /v1/admin/users/{userId}: rejected ---------------------------------------

    def test_patch_with_an_empty_body_changes_nothing(self, stack: Stack) -> None:
        response = stack.api.call("PATCH", f"/v1/admin/users/{stack.alice.user_id}", stack.admin.key, {})
        assert response.status_code == 200, response.json
        assert (response.json["userId"], response.json["verifiedLevel"]) == (stack.alice.user_id, 0)

    def test_patch_unknown_user_is_404_and_creates_nothing(self, stack: Stack) -> None:
        users_before = _user_count()
        response = stack.api.call("PATCH", "/v1/admin/users/usr_ghost", stack.admin.key, {"verifiedLevel": 1})
        assert_error(response, 404, "NOT_FOUND")
        assert _user_count() == users_before

    @pytest.mark.parametrize(
        ("body", "field"),
        [({"verifiedLevel": 9}, "verifiedLevel"), ({"verifiedLevel": "2"}, "verifiedLevel"),
         ({"verifiedLevel": 1, "country": "de"}, "country")],
    )
    def test_patch_user_validation(self, stack: Stack, body: dict[str, Any], field: str) -> None:
        response = stack.api.call("PATCH", f"/v1/admin/users/{stack.alice.user_id}", stack.admin.key, body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]
        assert stack.api.call("GET", "/v1/me", stack.alice.key).json["verifiedLevel"] == 0

    def test_non_admin_cannot_patch_users(self, stack: Stack) -> None:
        response = stack.api.call("PATCH", f"/v1/admin/users/{stack.alice.user_id}", stack.alice.key, {"verifiedLevel": 3})
        assert_error(response, 403, "FORBIDDEN")
        assert stack.api.call("GET", "/v1/me", stack.alice.key).json["verifiedLevel"] == 0


# --- keys at rest (these create users) -------------------------------------------------


def test_key_is_stored_only_as_its_sha256(api: Api, admin: User) -> None:
    created = _create_user(api, admin).json
    api_key = created["apiKey"]
    stored = [i for i in table_items(settings().API_KEYS_TABLE) if i.get("userId") == created["userId"]]
    assert len(stored) == 1
    assert stored[0]["keyHash"] == hashlib.sha256(api_key.encode()).hexdigest()
    assert stored[0]["scopes"] == []
    everything = json.dumps(table_items(settings().API_KEYS_TABLE) + table_items(settings().USERS_TABLE))
    assert api_key not in everything
    assert api_key.removeprefix("msk_") not in everything


def test_new_keys_are_random_and_prefixed(api: Api, admin: User) -> None:
    keys = {_create_user(api, admin, displayName=f"U{i}").json["apiKey"] for i in range(3)}
    assert len(keys) == 3
    assert all(k.startswith("msk_") for k in keys)
    assert all(len(k) == 4 + 43 for k in keys)


def test_user_created_with_admin_flag_gets_admin_scope(api: Api, admin: User) -> None:
    created = _create_user(api, admin, admin=True).json
    stored = next(i for i in table_items(settings().API_KEYS_TABLE) if i["userId"] == created["userId"])
    assert stored["scopes"] == ["admin"]
    assert api.call("GET", "/v1/admin/approvals", created["apiKey"]).status_code == 200


def test_user_created_without_admin_flag_is_not_admin(api: Api, admin: User) -> None:
    created = _create_user(api, admin).json
    assert_error(api.call("GET", "/v1/admin/approvals", created["apiKey"]), 403, "FORBIDDEN")


# --- POST /v1/admin/users ------------------------------------------------------------


def test_create_user_returns_201_with_id_key_and_profile(api: Api, admin: User) -> None:
    response = _create_user(
        api, admin, displayName="  Carol  ", country="de", verifiedLevel=2, channels={"telegram": "@carol", "email": "c@x.org"}
    )
    assert response.status_code == 201, response.json
    body = response.json
    assert set(body) == {"userId", "apiKey", "profile"}
    assert body["userId"].startswith("usr_")
    profile = body["profile"]
    assert profile["userId"] == body["userId"]
    assert profile["displayName"] == "Carol"
    assert profile["country"] == "de"
    assert profile["verifiedLevel"] == 2
    assert profile["activeChannels"] == ["email", "telegram"]
    assert profile["createdAt"].endswith("Z")
    assert profile["createdAt"] == profile["updatedAt"]


def test_created_key_works_and_sees_its_channels(api: Api, admin: User) -> None:
    created = _create_user(api, admin, channels={"discord": "carol#1"}).json
    me = api.call("GET", "/v1/me", created["apiKey"])
    assert me.status_code == 200
    assert me.json["userId"] == created["userId"]
    channels = api.call("GET", "/v1/me/channels", created["apiKey"]).json["channels"]
    assert [(c["key"], c["handle"]) for c in channels] == [("discord", "carol#1")]


def test_create_user_defaults(api: Api, admin: User) -> None:
    profile = _create_user(api, admin).json["profile"]
    assert profile["country"] is None
    assert profile["verifiedLevel"] == 0
    assert profile["activeChannels"] == []


# --- PATCH /v1/admin/users/{userId} --------------------------------------------------


def test_patch_user_sets_verified_level(api: Api, admin: User, alice: User) -> None:
    response = api.call("PATCH", f"/v1/admin/users/{alice.user_id}", admin.key, {"verifiedLevel": 3})
    assert response.status_code == 200, response.json
    assert response.json["userId"] == alice.user_id
    assert response.json["verifiedLevel"] == 3
    assert api.call("GET", "/v1/me", alice.key).json["verifiedLevel"] == 3
