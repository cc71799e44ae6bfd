"""``GET /v1/admin/users``: users by display name (folded), filtered by name prefix, id, country
and verification level in any combination, each page one Query of ``pageSize + 1`` items from
the index of its filter combination; the list follows name, country and level changes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, cursor_pages


def _users(api: Api, admin: User, query: str = "") -> dict[str, Any]:
    return api.call_json("GET", f"/v1/admin/users{'?' + query if query else ''}", admin.key)


def _names(page: dict[str, Any]) -> list[str]:
    return [u["displayName"] for u in page["users"]]


@pytest.fixture
def people(aws: dict[str, str]) -> dict[str, User]:
    return {
        "Ännchen": make_user("Ännchen", country="de", verifiedLevel=2),
        "anna": make_user("anna", country="de", verifiedLevel=1),
        "Anton": make_user("Anton", country="fr", verifiedLevel=2),
        "Bernd": make_user("Bernd", country="de", verifiedLevel=2),
        "Zoe": make_user("Zoe", verifiedLevel=0),
    }


def test_users_are_listed_by_folded_display_name(api: Api, admin: User, people: dict[str, User]) -> None:
    assert _names(_users(api, admin)) == ["Admin", "anna", "Ännchen", "Anton", "Bernd", "Zoe"]


@pytest.mark.parametrize(("query", "expected"), [
    ("q=an", ["anna", "Ännchen", "Anton"]),
    ("q=%C3%84NN", ["anna", "Ännchen"]),  # "ÄNN": accents and case folded
    ("country=de", ["anna", "Ännchen", "Bernd"]),
    ("verifiedLevel=2", ["Ännchen", "Anton", "Bernd"]),
    ("country=de&verifiedLevel=2", ["Ännchen", "Bernd"]),
    ("country=de&verifiedLevel=2&q=b", ["Bernd"]),
    ("q=an&verifiedLevel=2", ["Ännchen", "Anton"]),
    ("q=x", []),
])
def test_filters_combine(api: Api, admin: User, people: dict[str, User], query: str, expected: list[str]) -> None:
    assert _names(_users(api, admin, query)) == expected


def test_id_search_finds_one_user_and_applies_the_other_filters(api: Api, admin: User, people: dict[str, User]) -> None:
    anton = people["Anton"].user_id
    assert _names(_users(api, admin, f"id={anton}")) == ["Anton"]
    assert _names(_users(api, admin, f"id={anton}&country=de")) == []
    assert _names(_users(api, admin, "id=usr_ghost")) == []


def test_pages_follow_the_cursor_and_read_page_size_plus_one(api: Api, admin: User, people: dict[str, User]) -> None:
    for i in range(6):
        make_user(f"Extra {i}")
    everything = _names(_users(api, admin, "pageSize=100"))  # also warms the key cache: only the page's reads count
    seen = [name for page in cursor_pages(lambda query: _users(api, admin, query), 4) for name in _names(page)]
    assert seen == everything
    assert len(seen) == 12


def test_the_list_follows_name_country_and_level_changes(api: Api, admin: User, people: dict[str, User]) -> None:
    zoe = people["Zoe"]
    assert api.call("PATCH", "/v1/me/profile", zoe.key, {"displayName": "Anke", "country": "de"}).status_code == 200
    assert "Anke" in _names(_users(api, admin, "q=an&country=de"))
    assert api.call("PATCH", f"/v1/admin/users/{zoe.user_id}", admin.key, {"verifiedLevel": 2}).status_code == 200
    assert _names(_users(api, admin, "country=de&verifiedLevel=2")) == ["Anke", "Ännchen", "Bernd"]
    assert api.call("PATCH", "/v1/me/profile", zoe.key, {"country": None}).status_code == 200
    assert "Anke" not in _names(_users(api, admin, "country=de&verifiedLevel=2"))
    assert "Anke" not in _names(_users(api, admin, "country=de"))
    assert "Anke" in _names(_users(api, admin, "verifiedLevel=2"))
    assert "Zoe" not in _names(_users(api, admin))


def test_a_profile_patch_with_a_stale_if_match_changes_nothing(api: Api, admin: User, alice: User) -> None:
    response = api.call("PATCH", "/v1/me/profile", alice.key, {"displayName": "Alicia"}, headers={"If-Match": '"7"'})
    assert_error(response, 412, "PRECONDITION_FAILED")
    assert _names(_users(api, admin, "q=ali")) == ["Alice"]


@pytest.mark.parametrize(("query", "field"), [
    ("country=xx", "country"), ("verifiedLevel=4", "verifiedLevel"), ("pageSize=101", "pageSize"), ("q=", "q"),
    ("sort=name", "sort"),
])
def test_bad_filters_are_validation_errors_naming_the_parameter(api: Api, admin: User, query: str, field: str) -> None:
    assert_error(api.call("GET", f"/v1/admin/users?{query}", admin.key), 400, "VALIDATION_ERROR", field)


def test_only_administrators_list_users(api: Api, alice: User) -> None:
    assert_error(api.call("GET", "/v1/admin/users", alice.key), 403, "FORBIDDEN")


def test_a_cursor_of_other_filters_is_refused(api: Api, admin: User, people: dict[str, User]) -> None:
    cursor = _users(api, admin, "pageSize=1")["nextCursor"]
    assert_error(api.call("GET", f"/v1/admin/users?pageSize=1&country=de&cursor={cursor}", admin.key),
                 400, "VALIDATION_ERROR", "cursor")


def test_the_dashboards_users_page_lists_filters_and_sets_levels_per_row(api: Api, admin: User, people: dict[str, User]) -> None:
    from tests.integration.test_dashboard import signed_in

    b = signed_in(api, admin)
    page = b.get("/dashboard/admin/users")
    assert page.status_code == 200
    assert page.text.index(">anna</th>") < page.text.index(">Ännchen</th>") < page.text.index(">Zoe</th>")
    filtered = b.get("/dashboard/admin/users?country=de&verifiedLevel=2")
    assert ">Bernd</th>" in filtered.text
    assert ">anna</th>" not in filtered.text
    bernd = people["Bernd"]
    token = b.csrf("/dashboard/admin/users")
    assert b.post("/dashboard/admin/users/verification",
                  {"csrf_token": token, "user_id": bernd.user_id, "verified_level": "3"}).status_code == 303
    assert api.call("GET", "/v1/me", bernd.key).json["verifiedLevel"] == 3
    assert '<option value="3" selected>3</option>' in b.get("/dashboard/admin/users?q=bernd").text  # the row shows the new level
    refused = b.get("/dashboard/admin/users?q=be&country=xx")
    assert refused.status_code == 400  # the filters shown again, the error under the country, no list
    assert 'id="f-country-error"' in refused.text
    assert 'value="xx" maxlength="2" aria-invalid="true" aria-describedby="f-country-error" autofocus' in refused.text
    assert 'id="f-q" name="q" value="be"' in refused.text
    assert ">Bernd</th>" not in refused.text
    edited = b.get("/dashboard/admin/users?cursor=garbage")
    assert edited.status_code == 400
    assert 'class="error" role="alert"' in edited.text
