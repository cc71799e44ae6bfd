"""The profile index of the search engine maintained from the Users stream, and profile searches on it (in-process moto)."""

from __future__ import annotations

import itertools
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.blocks import api as blocks
from chalicelib.kernel.config import settings as settings_
from chalicelib.kernel.text import words
from chalicelib.persistence import storage
from chalicelib.profiles import handlers, spec
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.profiles.search import matches, search_profiles
from chalicelib.search import analysis, engine, index
from chalicelib.users.records import UserRecord, record
from tests.integration.aws_session import Resources, reset
from tests.integration.conftest import Api, User, fresh_aws, make_user
from tests.integration.helpers import assert_error, aws_calls, counting_reads, moto_examples, stream_records, table_items
from tests.integration.request_helpers import forbid_scans


def _patch(api: Api, user: User, body: dict[str, Any]) -> None:
    response = api.call("PATCH", "/v1/me/profile", user.key, body)
    assert response.status_code == 200, response.json


def _search(api: Api, user: User, query: str) -> dict[str, Any]:
    return api.call_json("GET", f"/v1/profiles/search?{query}", user.key)


def _names(result: dict[str, Any]) -> list[str]:
    return [p["displayName"] for p in result["profiles"]]


def _index_items() -> list[dict[str, Any]]:
    return [i for i in table_items(settings_().SEARCH_INDEX_TABLE) if str(i["pk"]).startswith(f"{spec.NAMESPACE}|")]


def _lists(items: list[dict[str, Any]] | None = None) -> dict[str, set[str]]:
    """List name -> user ids filed in it (the profile lists' entries), from ``items`` (default: the index table)."""
    prefix = f"{spec.NAMESPACE}|{spec.SCOPE}|"
    found: dict[str, set[str]] = {}
    for item in _index_items() if items is None else items:
        name = str(item["pk"]).removeprefix(prefix)
        if "id" in item and name[:2] in ("t|", "a", "k|", "n|") and str(item["pk"]).startswith(prefix):
            found.setdefault(name, set()).add(str(item["id"]))
    return found


def _assert_index_is_exact() -> None:
    """The profile index equals filing every stored user once (brute force): its entries, list
    sizes, vocabulary and stored documents (each table read once; a test-only Scan)."""
    items = _index_items()
    users = [record(u) for u in table_items(settings_().USERS_TABLE)]
    profile_spec = spec.spec()
    expected: dict[tuple[str, str], dict[str, Any]] = {}
    sizes: Counter[tuple[str, str]] = Counter()
    for user in filter(spec.searchable, users):
        doc = spec.document(user)
        weights = index.impacts(index.term_frequencies(profile_spec, doc))
        expected.update(index.entries(profile_spec, doc, weights))
        expected[profile_spec.stored_key(doc.id)] = index.stored(profile_spec, doc, weights)
        sizes.update(profile_spec.vocabulary_key(doc.scope, term) for term in weights)
        sizes.update(k for name in index.sorted_lists(profile_spec, doc) for k in profile_spec.size_keys(doc.scope, name))
    found = {(str(i["pk"]), str(i["sk"])): i for i in items}
    filed = {k: v for k, v in found.items() if k[0].split("|")[2] not in ("v", "c", "d") and not v.get("gone")}
    assert set(filed) == set(expected)
    compared = ("id", "age", "kw", "num")
    for key, item in expected.items():
        assert {k: found[key][k] for k in compared if k in item} == {k: item[k] for k in compared if k in item}
    counted = {k: int(v["n"]) for k, v in found.items() if k[0].split("|")[2] in ("v", "c") and int(v["n"])}
    assert counted == dict(sizes)


# --- maintenance ------------------------------------------------------------------------


def test_created_users_are_filed_once_the_stream_is_applied(api: Api, runner: Any) -> None:
    ana = make_user("Ana Lopez", country="es", verifiedLevel=2)
    make_user("Ben Okafor", country="de", channels={"discord": "ben#1"})
    assert _lists() == {}  # nothing before the stream is read: the index lags the change
    runner.drain()
    _assert_index_is_exact()
    lists = _lists()
    assert lists["k|country=es"] == {ana.user_id}
    assert ana.user_id in lists["t|lopez"]
    assert lists["k|channel=discord"] != {ana.user_id}


def test_an_update_moves_words_values_and_position(api: Api, runner: Any, alice: User) -> None:
    runner.drain()
    _patch(api, alice, {"recruiting": {"headline": "Rust engineer", "skills": ["rust", "go"], "openToWork": True}})
    runner.drain()
    _assert_index_is_exact()
    assert alice.user_id in _lists()["t|rust"]
    _patch(api, alice, {"displayName": "Alicia", "country": None,
                        "recruiting": {"headline": "Barista", "skills": ["coffee"], "remote": False}})
    runner.drain()
    _assert_index_is_exact()
    lists = _lists()
    assert alice.user_id not in lists.get("t|rust", set())
    assert "k|country=de" not in lists
    assert lists["k|remote=false"] == {alice.user_id}
    assert "k|skill=rust" not in lists


def test_connected_channels_and_verification_level_move_the_entries(api: Api, runner: Any, admin: User, alice: User) -> None:
    assert api.call("PUT", "/v1/me/channels/discord", alice.key, {"handle": "alice#1"}).status_code == 200
    assert api.call("PATCH", f"/v1/admin/users/{alice.user_id}", admin.key, {"verifiedLevel": 3}).status_code == 200
    runner.drain()
    _assert_index_is_exact()
    assert alice.user_id in _lists()["k|channel=discord"]
    assert _names(_search(api, alice, "minVerifiedLevel=3")) == ["Alice"]
    assert api.call("DELETE", "/v1/me/channels/discord", alice.key).status_code == 200
    runner.drain()
    _assert_index_is_exact()
    assert "k|channel=discord" not in _lists()


def test_a_removed_user_leaves_every_list(api: Api, runner: Any, alice: User, bob: User) -> None:
    runner.drain()
    storage.dynamodb().delete_item(TableName=settings_().USERS_TABLE, Key=storage.to_item({"userId": alice.user_id}))
    runner.drain()
    _assert_index_is_exact()
    assert all(alice.user_id not in ids for ids in _lists().values())


def test_a_suspended_profile_is_out_of_search_and_takes_no_request_until_reinstated(
    api: Api, runner: Any, admin: User, alice: User, bob: User
) -> None:
    _patch(api, alice, {"recruiting": {"headline": "Rust engineer", "skills": ["rust"]}})
    runner.drain()
    assert _names(_search(api, bob, "q=rust")) == ["Alice"]
    report = api.call_json("POST", "/v1/reports", bob.key, {"subjectType": "profile", "subjectId": alice.user_id,
                                                             "reason": "scam"}, status=201)
    api.call_json("POST", f"/v1/admin/reports/{report['reportId']}/decision", admin.key, {"decision": "suspend_user"})
    assert _names(_search(api, bob, "q=rust")) == []  # at once: the page drops a profile suspended since it was filed
    runner.drain()
    _assert_index_is_exact()
    assert all(alice.user_id not in ids for ids in _lists().values())
    assert_error(api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key), 404, "NOT_FOUND")
    request = {"userId": alice.user_id, "channel": "telegram", "message": "Hello"}
    assert_error(api.call("POST", "/v1/profile-requests", bob.key, request), 404, "NOT_FOUND")
    carol = make_user("Carol")  # blocking or reporting the profile answers as for an unknown user
    assert_error(api.call("PUT", f"/v1/me/blocks/{alice.user_id}", carol.key), 400, "VALIDATION_ERROR")
    assert_error(api.call("POST", "/v1/reports", carol.key, {"subjectType": "profile", "subjectId": alice.user_id,
                                                             "reason": "spam"}), 404, "NOT_FOUND")

    assert api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", admin.key).status_code == 200
    runner.drain()
    _assert_index_is_exact()
    assert _names(_search(api, bob, "q=rust")) == ["Alice"]
    assert api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key).status_code == 200
    assert api.call("PUT", f"/v1/me/blocks/{alice.user_id}", carol.key).status_code in (200, 201)


def test_replayed_and_out_of_order_records_change_nothing(api: Api, runner: Any, alice: User) -> None:
    _patch(api, alice, {"recruiting": {"headline": "Rust engineer", "skills": ["rust"]}})
    _patch(api, alice, {"recruiting": {"headline": "Go engineer", "skills": ["go"]}})
    runner.drain()
    settled = sorted(map(repr, _index_items()))
    records = stream_records(settings_().USERS_TABLE)
    assert len(records) == 3  # create, two patches
    assert handlers.handle_users_batch({"Records": records}) == {"batchItemFailures": []}  # replay, in order
    assert handlers.handle_users_batch({"Records": records[::-1]}) == {"batchItemFailures": []}  # out of order
    assert sorted(map(repr, _index_items())) == settled
    _assert_index_is_exact()
    first = storage.from_item(records[0]["dynamodb"]["NewImage"])
    assert handlers.apply_change(None, first) is False


def test_the_backfill_files_existing_users_once(api: Api, runner: Any, alice: User, bob: User) -> None:
    from scripts.search_backfill import backfill_profiles

    _patch(api, alice, {"recruiting": {"skills": ["rust"]}})
    assert backfill_profiles() == {"users": 2, "profiles": 2}  # before the stream was read (as for users older than it)
    _assert_index_is_exact()
    assert alice.user_id in _lists()["k|skill=rust"]
    settled = sorted(map(repr, _index_items()))
    assert backfill_profiles() == {"users": 2, "profiles": 0}
    runner.drain()  # the stream's records are older or equal: nothing moves
    assert sorted(map(repr, _index_items())) == settled


# --- searches ---------------------------------------------------------------------------


def _crowd(api: Api, runner: Any) -> list[User]:
    """Seven users (levels 3, 2, 2, 1, 0, 0, 0), all python, some rust; the index applied."""
    people = []
    for n, level in enumerate([3, 2, 2, 1, 0, 0, 0]):
        person = make_user(f"Person {n}", verifiedLevel=level, country="de" if n % 2 else "fr")
        skills = ["python", "rust"] if n % 3 == 0 else ["python"]
        _patch(api, person, {"recruiting": {"skills": skills, "openToWork": n != 3}})
        people.append(person)
    runner.drain()
    return people


@pytest.fixture
def crowd(api: Api, runner: Any) -> list[User]:
    """:func:`_crowd` for a test that changes it."""
    return _crowd(api, runner)


@dataclass
class Crowd:
    """The test client and :func:`_crowd`'s users; searches are made as the first of them."""

    api: Api
    people: list[User]

    def search(self, query: str) -> dict[str, Any]:
        return _search(self.api, self.people[0], query)

    def refused(self, query: str) -> Any:
        return self.api.call("GET", f"/v1/profiles/search?{query}", self.people[0].key)


@pytest.fixture(scope="class")
def shared_crowd(aws_resources: Resources) -> Iterator[Crowd]:
    """:func:`_crowd` built once, for a class of tests that only search it."""
    from app import app
    from local_stack.runner import EventRunner

    with pytest.MonkeyPatch.context() as monkeypatch, fresh_aws(aws_resources, monkeypatch), Client(app) as client:
        api = Api(client)
        yield Crowd(api, _crowd(api, EventRunner(app)))


class TestSearchesOnSharedCrowd:
    """Searches that only read :func:`_crowd`: one crowd for the class."""

    def test_cursor_pages_follow_the_result_order_and_read_only_their_page(self, shared_crowd: Crowd) -> None:
        first = shared_crowd.search("pageSize=3")
        assert _names(first) == ["Person 0", "Person 2", "Person 1"]
        assert (first["total"], first["totalRelation"]) == (7, "eq")
        with aws_calls("BatchGetItem") as batches, counting_reads() as reads, forbid_scans():
            second = shared_crowd.search(f"pageSize=3&cursor={first['nextCursor']}")
        assert _names(second) == ["Person 3", "Person 6", "Person 5"]
        assert second["page"] == 2
        assert second["total"] == 7
        users_read = sum(len(b["RequestItems"].get(settings_().USERS_TABLE, {}).get("Keys", [])) for b in batches)
        assert users_read <= 3 + 1  # the page's users, and the one proving a next page
        assert reads.by_operation["Query"] <= 3 + 1  # the list from the cursor on: the page and the entry proving more
        third = shared_crowd.search(f"pageSize=3&cursor={second['nextCursor']}")
        assert (_names(third), third["nextCursor"]) == (["Person 4"], None)

    def test_filtered_cursor_pages_count_the_matches(self, shared_crowd: Crowd) -> None:
        first = shared_crowd.search("skills=python&openToWork=true&pageSize=2")
        assert _names(first) == ["Person 0", "Person 2"]
        assert (first["total"], first["totalRelation"]) in ((6, "eq"), (3, "gte"))
        second = shared_crowd.search(f"skills=python&openToWork=true&pageSize=2&cursor={first['nextCursor']}")
        assert _names(second) == ["Person 1", "Person 6"]

    @pytest.mark.parametrize("tamper", [lambda c: c[:-2] + ("yy" if c.endswith("xx") else "xx"), lambda c: "x" + c,
                                        lambda c: "not-a-cursor"])
    def test_a_tampered_cursor_is_a_400_naming_it(self, shared_crowd: Crowd, tamper: Any) -> None:
        cursor = shared_crowd.search("pageSize=2")["nextCursor"]
        response = shared_crowd.refused(f"pageSize=2&cursor={tamper(cursor)}")
        assert_error(response, 400, "VALIDATION_ERROR", "cursor")

    def test_a_cursor_of_another_query_is_a_400(self, shared_crowd: Crowd) -> None:
        cursor = shared_crowd.search("pageSize=2&country=de")["nextCursor"]
        response = shared_crowd.refused(f"pageSize=2&country=fr&cursor={cursor}")
        assert_error(response, 400, "VALIDATION_ERROR", "cursor")

    def test_no_search_reads_every_user(self, shared_crowd: Crowd) -> None:
        blocks.forget_hidden()  # the searcher's block set is read by this search, whatever ran before it
        with aws_calls("BatchGetItem") as batches, forbid_scans():
            result = shared_crowd.search("skills=rust&pageSize=1")
        assert _names(result) == ["Person 0"]
        assert result["total"] == 3
        users_read = sum(len(b["RequestItems"].get(settings_().USERS_TABLE, {}).get("Keys", [])) for b in batches)
        assert users_read <= 3  # at most the rust list's profiles (one block of it), never the 7 profiles


def test_q_pages_come_in_relevance_order_with_typo_tolerance(api: Api, runner: Any, crowd: list[User]) -> None:
    _patch(api, crowd[5], {"recruiting": {"headline": "Python python python", "skills": ["python"]}})
    runner.drain()
    assert _names(_search(api, crowd[0], "q=python"))[0] == "Person 5"  # the strongest match first, whatever its level
    assert _names(_search(api, crowd[0], "q=pyhton"))[0] == "Person 5"  # one typo: still found
    assert _names(_search(api, crowd[0], "q=pyth"))[0] == "Person 5"  # the last word completes
    assert _search(api, crowd[0], "q=pyhton")["profiles"][0]["displayName"] == "Person 5"


def test_a_profile_changed_before_the_stream_caught_up_never_shows_stale_or_twice(api: Api, runner: Any, crowd: list[User]) -> None:
    _patch(api, crowd[1], {"recruiting": {"skills": ["cobol"]}})  # not applied yet: its entries still say python
    found = _search(api, crowd[0], "skills=python")
    assert "Person 1" not in _names(found)
    assert len(set(_names(found))) == len(_names(found))
    runner.drain()
    assert _names(_search(api, crowd[0], "skills=cobol")) == ["Person 1"]


# --- property: pages equal brute force --------------------------------------------------

_NAMES = ["Ada Lovelace", "Grace Hopper", "Ángel Ruiz", "Linus", "Ana Lopez"]
_HEADLINES = [None, "python engineer", "rust developer", "pythonista baker", "internationalization expert", "happy company",
              "python python rust"]
_SKILLS = ["python", "go", "rust", "sql", "k8s"]
_MANY = [f"skill{n:02d}" for n in range(10)]
_STAMPS = ["2026-05-01T00:00:00.000Z", "2026-05-01T00:00:01.000Z", "2026-05-02T09:30:00.500Z"]

_profile = st.fixed_dictionaries({
    "name": st.sampled_from(_NAMES),
    "level": st.integers(0, 3),
    "country": st.sampled_from(["de", "fr", None]),
    "headline": st.sampled_from(_HEADLINES),
    "skills": st.lists(st.sampled_from(_SKILLS), unique=True, max_size=3) | st.just([*_MANY, "python", "rust"]),
    "open": st.sampled_from([True, False, None]),
    "seniority": st.sampled_from([None, "mid", "senior"]),
    "remote": st.sampled_from([None, True, False]),
    "channels": st.lists(st.sampled_from(["telegram", "email", "discord"]), unique=True, max_size=2),
    "updated": st.sampled_from(_STAMPS),
})

_query = st.fixed_dictionaries({}, optional={
    "q": st.sampled_from(["py", "python", "pythonista", "ru", "ada", "ang", "internationali", "lovelace grace",
                          "engineering", "developers rust", "bakers py", "internationalize", "expert in", "pyhton",
                          "compani", "companies happ", "grace", "rsut python"]),
    "skills": st.lists(st.sampled_from([*_SKILLS, "skill03"]), unique=True, min_size=1, max_size=3).map(",".join),
    "country": st.sampled_from(["de", "fr"]),
    "minVerifiedLevel": st.integers(0, 3),
    "openToWork": st.booleans(),
    "seniority": st.sampled_from(["mid", "senior"]),
    "remote": st.booleans(),
    "channel": st.sampled_from(["telegram", "discord"]),
})


def _user_item(user_id: str, version: int, profile: dict[str, Any]) -> dict[str, Any]:
    recruiting: dict[str, Any] = {"headline": profile["headline"], "skills": profile["skills"],
                                  "seniority": profile["seniority"], "remote": profile["remote"], "roles": []}
    if profile["open"] is not None:
        recruiting["openToWork"] = profile["open"]
    return {"userId": user_id, "displayName": profile["name"], "country": profile["country"],
            "verifiedLevel": profile["level"], "socialLinks": {}, "recruiting": recruiting, "requestPolicy": {},
            "channels": {c: {"handle": "h", "connectedAt": profile["updated"]} for c in profile["channels"]},
            "searchShard": "S0", "version": version, "createdAt": _STAMPS[0], "updatedAt": profile["updated"]}


def _relevance(users: list[UserRecord], user: UserRecord, terms: list[str]) -> float:
    """The engine's score of ``user`` for ``terms`` by brute force: for each word, its best term's
    quantized BM25F (:func:`chalicelib.search.engine.contribution`, idf over every profile)."""
    profile_spec = spec.spec()
    weights = {u["userId"]: index.impacts(index.term_frequencies(profile_spec, spec.document(u))) for u in users}
    mine = weights[user["userId"]]
    total = 0.0
    for word in analysis.query_words(terms, spec.LANGUAGE):
        df = {term: sum(term in w for w in weights.values()) for term in mine}
        total += max(engine.contribution(how, index.idf(df[term], len(users)), mine[term]) for term, how in analysis.best(word, mine))
    return total


def _brute_force(query: ProfileSearchQuery) -> list[str]:
    """Every matching user in result order: relevance (ties in the profile order) with ``q``,
    else verification level, then most recently updated, then ``userId``."""
    users: list[UserRecord] = [record(i) for i in table_items(settings_().USERS_TABLE)]
    terms = words(query.q or "")
    found = sorted((u for u in users if matches(u, query, terms)), key=lambda u: u["userId"])
    found.sort(key=lambda u: (int(u.get("verifiedLevel", 0)), u["updatedAt"]), reverse=True)
    if terms:
        found.sort(key=lambda u: -_relevance(users, u, terms))
    return [u["userId"] for u in found]


@given(
    people=st.lists(st.tuples(_profile, st.none() | _profile), max_size=8),
    queries=st.lists(_query, min_size=3, max_size=3),
    page_size=st.integers(1, 4),
)
@settings(max_examples=moto_examples(3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_cursor_pages_equal_brute_force(
    aws: dict[str, str], aws_resources: Resources,
    people: list[tuple[dict[str, Any], dict[str, Any] | None]], queries: list[dict[str, Any]], page_size: int,
) -> None:
    """Random profiles (some changed after creation), random filter combinations and ``q`` words
    (stems, prefixes, typos, stop words) and page sizes: the cursor pages concatenated are the
    brute-force matches of :func:`matches` in result order, ``q`` pages in the engine's ranking
    of every match; ``total`` is exact when ``totalRelation`` is "eq", else a lower bound of
    what remains; the index equals brute force. The engine's pages against brute force run with
    many more examples over the in-memory store (``tests/unit/test_search_engine_property.py``),
    the profile document and match rule in ``tests/unit/test_profile_spec.py``."""
    from app import app
    from local_stack.runner import EventRunner

    reset(aws_resources)  # each example on empty tables: moto sorts a whole table on every Query
    runner = EventRunner(app)
    run = uuid.uuid4().hex[:8]
    for n, (created, changed) in enumerate(people):
        user_id = f"usr_{run}{n:02d}"
        storage.put(settings_().USERS_TABLE, _user_item(user_id, 1, created))
        if changed is not None:
            storage.put(settings_().USERS_TABLE, _user_item(user_id, 2, changed))
    runner.drain()
    _assert_index_is_exact()
    for params in queries:
        query = ProfileSearchQuery.model_validate({**params, "pageSize": page_size})
        expected = _brute_force(query)
        found: list[str] = []
        cursor: str | None = None
        for _ in itertools.count():
            page = search_profiles(query.model_copy(update={"cursor": cursor}))
            if page.totalRelation == "eq":
                assert page.total == len(expected), params
            else:
                assert len(found) + len(page.profiles) <= page.total <= len(expected), params
            found += [p.userId for p in page.profiles]
            cursor = page.nextCursor
            if cursor is None:
                break
        assert found == expected, params
        assert Counter(found).most_common(1)[0][1] == 1 if found else True
