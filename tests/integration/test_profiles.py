"""Own profile (GET /v1/me, PATCH /v1/me/profile), profile detail with the request policy, and
profile sourcing search (without a Scan)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from chalice.test import Client

from chalicelib.kernel.config import settings
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User, fresh_aws, make_user
from tests.integration.helpers import assert_error, aws_calls, search_reads
from tests.integration.request_helpers import forbid_scans, profile_request

SOCIAL_KEYS = {"x", "linkedin", "github", "instagram", "tiktok", "youtube", "website"}


def patch(api: Api, user: User, body: dict[str, Any]) -> Any:
    return api.call("PATCH", "/v1/me/profile", user.key, body)


# --- PATCH /v1/me/profile ---------------------------------------------------------------------


@pytest.mark.parametrize("country", ["DE", " de", "De", "zz"])
def test_a_country_not_written_as_the_documents_enum_is_refused(api: Api, alice: User, country: str) -> None:
    """``country`` is an enum of lower-case ISO 3166-1 codes: what a validator reading the document
    refuses, the server refuses too, in a profile and in a search alike."""
    assert_error(api.call("PATCH", "/v1/me/profile", alice.key, {"country": country}), 400, "VALIDATION_ERROR", "country")
    assert api.call("GET", "/v1/me", alice.key).json["country"] == "de"
    assert_error(api.call("GET", f"/v1/profiles/search?country={quote(country)}", alice.key), 400, "VALIDATION_ERROR", "country")


@pytest.mark.parametrize("headline", ["", "   ", " \t "])
def test_a_blank_headline_is_refused_like_every_single_line_field(api: Api, alice: User, headline: str) -> None:
    """A headline needs a visible character (``null`` clears it); a blank one was stored as ``""``."""
    patch(api, alice, {"recruiting": {"headline": "Staff engineer"}})
    refused = api.call("PATCH", "/v1/me/profile", alice.key, {"recruiting": {"headline": headline}})
    assert_error(refused, 400, "VALIDATION_ERROR", "recruiting.headline")
    assert api.call("GET", "/v1/me", alice.key).json["recruiting"]["headline"] == "Staff engineer"


def test_profile_patch_sets_every_field(api: Api, alice: User) -> None:
    body: dict[str, Any] = {
        "displayName": "Alice Liddell",
        "country": "gb",
        "socialLinks": {"x": "https://x.com/alice", "github": "https://github.com/alice", "website": "http://alice.example"},
        "recruiting": {
            "openToWork": True, "headline": "Staff engineer, Python", "skills": ["Python", "AWS", "python"],
            "seniority": "senior", "roles": ["Backend engineer"], "remote": True,
        },
        "requestPolicy": {"acceptingRequests": True, "minVerifiedLevel": 1},
    }
    response = patch(api, alice, body)
    assert response.status_code == 200, response.json
    profile = response.json
    assert profile["displayName"] == "Alice Liddell"
    assert profile["country"] == "gb"
    assert profile["socialLinks"] == {**dict.fromkeys(SOCIAL_KEYS), **body["socialLinks"]}
    assert profile["recruiting"] == {**body["recruiting"], "skills": ["python", "aws"]}
    assert profile["requestPolicy"] == {"acceptingRequests": True, "minVerifiedLevel": 1}
    assert api.call("GET", "/v1/me", alice.key).json == profile


def test_profile_patch_merges_objects_key_by_key(api: Api, alice: User) -> None:
    patch(api, alice, {"socialLinks": {"x": "https://x.com/a", "github": "https://github.com/a"},
                       "recruiting": {"headline": "Engineer", "skills": ["go"], "openToWork": True},
                       "requestPolicy": {"acceptingRequests": False, "minVerifiedLevel": 2}})
    profile = patch(api, alice, {"socialLinks": {"x": None, "linkedin": "https://linkedin.com/in/a"},
                                 "recruiting": {"headline": None, "seniority": "lead"},
                                 "requestPolicy": {"minVerifiedLevel": 1}}).json
    assert profile["socialLinks"]["x"] is None
    assert profile["socialLinks"]["github"] == "https://github.com/a"
    assert profile["socialLinks"]["linkedin"] == "https://linkedin.com/in/a"
    assert profile["recruiting"] == {"openToWork": True, "headline": None, "skills": ["go"], "seniority": "lead",
                                     "roles": [], "remote": None}
    assert profile["requestPolicy"] == {"acceptingRequests": False, "minVerifiedLevel": 1}
    cleared = patch(api, alice, {"socialLinks": None, "country": None}).json
    assert cleared["socialLinks"] == dict.fromkeys(SOCIAL_KEYS)
    assert cleared["country"] is None


def test_a_patch_that_changes_nothing_writes_nothing(api: Api, alice: User) -> None:
    """As a listing's: ``{}`` or the stored values again keep the version (ETag) and ``updatedAt``,
    so another client's ``If-Match`` still holds; a real change moves them."""
    patch(api, alice, {"country": "it", "socialLinks": {"github": "https://github.com/a"},
                       "recruiting": {"skills": ["go", "sql"]}, "requestPolicy": {"minVerifiedLevel": 1}})
    before = api.call("GET", "/v1/me", alice.key)
    same = ({}, {"country": "it"}, {"displayName": before.json["displayName"]}, {"socialLinks": {"github": "https://github.com/a"}},
            {"recruiting": {"skills": ["go", "sql"]}}, {"requestPolicy": {"minVerifiedLevel": 1}}, {"socialLinks": {"x": None}})
    for body in same:
        answered = api.call("PATCH", "/v1/me/profile", alice.key, body, headers={"If-Match": before.headers["ETag"]})
        assert answered.status_code == 200, (body, answered.json)
        after = api.call("GET", "/v1/me", alice.key)
        assert (after.headers["ETag"], after.json["updatedAt"]) == (before.headers["ETag"], before.json["updatedAt"]), body
    changed = patch(api, alice, {"recruiting": {"skills": ["go"]}})
    assert changed.json["recruiting"]["skills"] == ["go"]
    assert api.call("GET", "/v1/me", alice.key).headers["ETag"] != before.headers["ETag"]


def test_a_null_inside_recruiting_or_request_policy_resets_that_key_to_its_default(api: Api, alice: User) -> None:
    patch(api, alice, {"recruiting": {"openToWork": True, "skills": ["go"], "roles": ["cto"], "remote": True},
                       "requestPolicy": {"acceptingRequests": False, "minVerifiedLevel": 2}})
    response = patch(api, alice, {"recruiting": {"openToWork": None, "skills": None, "roles": None},
                                  "requestPolicy": {"acceptingRequests": None, "minVerifiedLevel": None}})
    assert response.status_code == 200, response.json
    assert response.json["recruiting"] == {"openToWork": False, "headline": None, "skills": [], "seniority": None,
                                           "roles": [], "remote": True}
    assert response.json["requestPolicy"] == {"acceptingRequests": True, "minVerifiedLevel": 0}
    assert api.call("GET", "/v1/me", alice.key).json["recruiting"]["skills"] == []


# --- GET /v1/profiles/{userId} ----------------------------------------------------------------


def test_profile_detail_has_policy_channels_recruiting_and_my_request(api: Api, alice: User, bob: User) -> None:
    patch(api, alice, {"recruiting": {"openToWork": True, "headline": "Data engineer", "skills": ["sql"]}})
    response = api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key)
    assert response.status_code == 200, response.json
    detail = response.json
    assert set(detail) == {
        "userId", "displayName", "verifiedLevel", "country", "socialLinks", "recruiting", "activeChannels",
        "createdAt", "updatedAt", "profileRequestPolicy", "myProfileRequest",
    }
    assert detail["userId"] == alice.user_id
    assert detail["activeChannels"] == ["email", "telegram"]
    assert detail["recruiting"]["headline"] == "Data engineer"
    assert detail["profileRequestPolicy"] == {"canRequest": True, "requiredVerification": 0, "reason": None}
    assert detail["myProfileRequest"] is None
    created = profile_request(api, bob, alice.user_id).json
    assert api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key).json["myProfileRequest"] == created


def test_profile_policy_reasons(api: Api, alice: User, bob: User) -> None:
    def policy(viewer: User, target: User) -> dict[str, Any]:
        result: dict[str, Any] = api.call("GET", f"/v1/profiles/{target.user_id}", viewer.key).json["profileRequestPolicy"]
        return result

    own = policy(alice, alice)
    assert own["canRequest"] is False
    assert "yourself" in own["reason"]
    patch(api, alice, {"requestPolicy": {"minVerifiedLevel": 2}})
    required = policy(bob, alice)
    assert required == {"canRequest": False, "requiredVerification": 2,
                        "reason": "This user accepts requests from verification level 2 or higher; yours is 0"}
    assert policy(make_user("Vera", verifiedLevel=3), alice)["canRequest"] is True
    patch(api, alice, {"requestPolicy": {"acceptingRequests": False}})
    closed = policy(bob, alice)
    assert closed["canRequest"] is False
    assert "not accepting" in closed["reason"]
    silent = make_user("Silent", channels={})
    assert "channels" in policy(bob, silent)["reason"]


def test_unknown_profile_is_404(api: Api, bob: User) -> None:
    assert_error(api.call("GET", "/v1/profiles/usr_unknown", bob.key), 404, "NOT_FOUND")


def test_profile_detail_is_one_dynamodb_call(api: Api, alice: User, bob: User) -> None:
    api.call("GET", "/v1/me", bob.key)  # warm the key cache
    with aws_calls("BatchGetItem") as batches, aws_calls("GetItem") as gets, aws_calls("Query") as queries:
        assert api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key).status_code == 200
    assert (len(batches), len(gets), len(queries)) == (1, 0, 0)


# --- GET /v1/profiles/search ------------------------------------------------------------------


@dataclass
class People:
    """The test client and four users with recruiting profiles, filed in the profile index."""

    api: Api
    users: dict[str, User]

    def search(self, query: str, viewer: str = "dev") -> Any:
        return self.api.call("GET", f"/v1/profiles/search?{query}", self.users[viewer].key)


@pytest.fixture(scope="class")
def people(aws_resources: Resources) -> Iterator[People]:
    """Four profiles with recruiting information, their postings applied from the Users stream,
    built once for a class of tests that only read them (or are refused without effect)."""
    from app import app
    from local_stack.runner import EventRunner

    with pytest.MonkeyPatch.context() as monkeypatch, fresh_aws(aws_resources, monkeypatch), Client(app) as client:
        api = Api(client)
        ana = make_user("Ana Lopez", country="es", verifiedLevel=2)
        ben = make_user("Ben Okafor", country="de", verifiedLevel=1, channels={"discord": "ben#1"})
        cho = make_user("Cho Min", country="de", verifiedLevel=3)
        dev = make_user("Dev Patel", country="in")
        assert patch(api, ana, {"recruiting": {"openToWork": True, "headline": "Machine-learning engineer",
                                               "skills": ["python", "pytorch"], "seniority": "senior", "remote": True}}).status_code == 200
        assert patch(api, ben, {"recruiting": {"openToWork": True, "headline": "Frontend developer", "skills": ["typescript", "react"],
                                               "seniority": "mid", "remote": False}}).status_code == 200
        assert patch(api, cho, {"recruiting": {"openToWork": False, "headline": "Engineering manager",
                                               "skills": ["python", "leadership"], "seniority": "lead"}}).status_code == 200
        EventRunner(app).drain()
        yield People(api, {"ana": ana, "ben": ben, "cho": cho, "dev": dev})


def names(response: Any) -> list[str]:
    assert response.status_code == 200, response.json
    return [p["displayName"] for p in response.json["profiles"]]


class TestOnFourProfiles:
    """Profile search and refused profile changes on one shared set of four profiles."""

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("", ["Cho Min", "Ana Lopez", "Ben Okafor", "Dev Patel"]),
            ("q=engineer", ["Cho Min", "Ana Lopez"]),
            ("q=pyth", ["Cho Min", "Ana Lopez"]),
            ("q=ana", ["Ana Lopez"]),
            ("q=learning+engineer", ["Ana Lopez"]),
            ("q=react", ["Ben Okafor"]),
            ("q=engineers", ["Cho Min", "Ana Lopez"]),  # same Snowball stem as "engineer" and "engineering"
            ("q=developers", ["Ben Okafor"]),
            ("q=managing+pythons", ["Cho Min"]),
            ("q=engineers+in+python", ["Cho Min", "Ana Lopez"]),  # "in" is a dropped function word
            ("q=pyhton", ["Cho Min", "Ana Lopez"]),  # one typo from "python": corrected, as in listing search
            ("country=de", ["Cho Min", "Ben Okafor"]),
            ("country=de&q=python", ["Cho Min"]),
            ("minVerifiedLevel=2", ["Cho Min", "Ana Lopez"]),
            ("skills=python,pytorch", ["Ana Lopez"]),
            ("skills=Python", ["Cho Min", "Ana Lopez"]),
            ("openToWork=true", ["Ana Lopez", "Ben Okafor"]),
            ("openToWork=false", ["Cho Min", "Dev Patel"]),
            ("seniority=mid", ["Ben Okafor"]),
            ("remote=true", ["Ana Lopez"]),
            ("channel=discord", ["Ben Okafor"]),
            ("channel=telegram&openToWork=true&minVerifiedLevel=1", ["Ana Lopez"]),
            ("q=nobody", []),
        ],
    )
    def test_profile_search_filters(self, people: People, query: str, expected: list[str]) -> None:
        with forbid_scans():
            response = people.search(query)
        assert names(response) == expected
        assert response.json["total"] == len(expected)

    def test_profile_search_items_and_pagination(self, people: People) -> None:
        first = people.search("pageSize=3", "ana").json
        assert (first["total"], first["page"], first["pageSize"], len(first["profiles"])) == (4, 1, 3, 3)
        second = people.search("pageSize=3&page=2", "ana").json
        assert [p["displayName"] for p in second["profiles"]] == ["Dev Patel"]
        item = first["profiles"][1]
        assert set(item) == {"userId", "displayName", "verifiedLevel", "country", "socialLinks", "recruiting",
                             "activeChannels", "createdAt", "updatedAt"}
        assert item["recruiting"]["skills"] == ["python", "pytorch"]

    @pytest.mark.parametrize(
        ("query", "field"),
        [("country=zz", "country"), ("minVerifiedLevel=9", "minVerifiedLevel"), ("seniority=guru", "seniority"),
         ("channel=fax", "channel"), ("openToWork=maybe", "openToWork"), ("colour=red", "colour"), ("pageSize=101", "pageSize")],
    )
    def test_profile_search_rejects_bad_parameters(self, people: People, query: str, field: str) -> None:
        assert_error(people.search(query), 400, "VALIDATION_ERROR", field)

    def test_profile_search_reads_posting_lists_not_users(self, people: People) -> None:
        """No index of the Users table is queried (it would be every user, or a country's); the
        page's users are one BatchGetItem of the Users table."""
        with aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches, forbid_scans():
            assert people.search("q=python", "ana").status_code == 200
            assert people.search("country=de", "ana").status_code == 200
        queries = search_reads(queries)
        assert queries
        assert {q["TableName"] for q in queries} == {settings().SEARCH_INDEX_TABLE}
        assert not any("IndexName" in q for q in queries)
        user_reads = [b for b in batches if settings().USERS_TABLE in b["RequestItems"]]
        assert [len(b["RequestItems"][settings().USERS_TABLE]["Keys"]) for b in user_reads] == [2, 2]

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"socialLinks": {"mastodon": "https://m.example/@a"}}, "socialLinks.mastodon"),
            ({"socialLinks": {"x": "ftp://x.com/a"}}, "socialLinks.x"),
            ({"socialLinks": {"website": "not a url"}}, "socialLinks.website"),
            ({"country": "zz"}, "country"),
            ({"country": "deu"}, "country"),
            ({"displayName": ""}, "displayName"),
            ({"displayName": None}, "displayName"),
            ({"recruiting": None}, "recruiting"),
            ({"recruiting": {"seniority": "wizard"}}, "recruiting.seniority"),
            ({"recruiting": {"hobby": "chess"}}, "recruiting.hobby"),
            ({"requestPolicy": {"minVerifiedLevel": 4}}, "requestPolicy.minVerifiedLevel"),
            ({"requestPolicy": {"acceptingRequests": "no"}}, "requestPolicy.acceptingRequests"),
            ({"recruiting": {"skills": "go"}}, "recruiting.skills"),
        ],
    )
    def test_invalid_profile_patches(self, people: People, body: dict[str, Any], field: str) -> None:
        dev = people.users["dev"]
        before = people.api.call_json("GET", "/v1/me", dev.key)
        assert_error(patch(people.api, dev, body), 400, "VALIDATION_ERROR", field)
        assert people.api.call_json("GET", "/v1/me", dev.key) == before  # refused: nothing changed
