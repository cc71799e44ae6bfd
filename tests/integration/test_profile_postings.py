"""Profile posting lists maintained from the Users stream, and searches read from them (in-process moto)."""

from __future__ import annotations

import itertools
import random
import uuid
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib import blocks, storage
from chalicelib.config import settings as settings_
from chalicelib.profiles import handlers, index
from chalicelib.profiles import search as profile_search
from chalicelib.profiles.facets import facets
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.profiles.search import matches, search_profiles
from chalicelib.search import statistics
from chalicelib.text import words
from chalicelib.users.records import UserRecord, record
from tests.integration.aws_session import Resources, reset
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, aws_calls, counting_reads, search_reads, stream_records, table_items
from tests.integration.request_helpers import forbid_scans


def _patch(api: Api, user: User, body: dict[str, Any]) -> None:
    response = api.call("PATCH", "/v1/me/profile", user.key, body)
    assert response.status_code == 200, response.json


def _search(api: Api, user: User, query: str) -> dict[str, Any]:
    response = api.call("GET", f"/v1/profiles/search?{query}", user.key)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json
    return result


def _names(result: dict[str, Any]) -> list[str]:
    return [p["displayName"] for p in result["profiles"]]


def _index_items() -> list[dict[str, Any]]:
    return table_items(settings_().SEARCH_INDEX_TABLE)


def _entries(items: list[dict[str, Any]] | None = None) -> dict[str, set[str]]:
    """List id -> user ids filed in it (entries of the profile lists), from ``items`` (default: the index table)."""
    found: dict[str, set[str]] = {}
    for item in _index_items() if items is None else items:
        if str(item["pk"]).startswith(f"{index.NAMESPACE}#"):
            found.setdefault(item["pk"], set()).add(item["id"])
    return found


def _sizes(items: list[dict[str, Any]] | None = None) -> dict[str, int]:
    return {str(i["pk"]).removeprefix("size|"): int(i["n"]) for i in (_index_items() if items is None else items)
            if str(i["pk"]).startswith(f"size|{index.NAMESPACE}#") and int(i["n"])}


def _expected_entries(users: list[dict[str, Any]]) -> dict[str, set[str]]:
    """What the lists must hold: every stored user under its posting keys (brute force)."""
    found: dict[str, set[str]] = {}
    for item in users:
        for name in index.posting_lists(facets(record(item))):
            found.setdefault(name, set()).add(item["userId"])
    return found


def _assert_index_is_exact() -> None:
    """The index equals brute force over the users table: its entries, sizes and sort keys (each
    table read once; a test-only Scan)."""
    items = _index_items()
    users = {u["userId"]: u for u in table_items(settings_().USERS_TABLE)}
    entries = _entries(items)
    assert entries == _expected_entries(list(users.values()))
    assert _sizes(items) == {name: len(ids) for name, ids in entries.items()}
    for item in items:  # every entry sits at its user's current sort key
        if str(item["pk"]).startswith(f"{index.NAMESPACE}#"):
            user = users.get(item["id"])
            assert user is not None
            assert index.sort_key(facets(record(user))) == item["sk"]


# --- maintenance ------------------------------------------------------------------------


def test_created_users_are_filed_under_their_keys_once_the_stream_is_applied(api: Api, runner: Any) -> None:
    ana = make_user("Ana Lopez", country="es", verifiedLevel=2)
    make_user("Ben Okafor", country="de", channels={"discord": "ben#1"})
    assert _entries() == {}  # nothing before the stream is read: postings lag the change
    runner.drain()
    _assert_index_is_exact()
    entries = _entries()
    assert entries[f"{index.NAMESPACE}#country#es"] == {ana.user_id}
    assert entries[f"{index.NAMESPACE}#word#lop"] == {ana.user_id}
    assert entries[f"{index.NAMESPACE}#level#2"] == {ana.user_id}


def test_an_update_moves_words_values_and_position(api: Api, runner: Any, alice: User) -> None:
    runner.drain()
    _patch(api, alice, {"recruiting": {"headline": "Rust engineer", "skills": ["rust", "go"], "openToWork": True}})
    runner.drain()
    _assert_index_is_exact()
    assert alice.user_id in _entries()[f"{index.NAMESPACE}#word#rus"]
    _patch(api, alice, {"displayName": "Alicia", "country": None,
                        "recruiting": {"headline": "Barista", "skills": ["coffee"], "remote": False}})
    runner.drain()
    _assert_index_is_exact()
    entries = _entries()
    assert alice.user_id not in entries.get(f"{index.NAMESPACE}#word#rus", set())
    assert f"{index.NAMESPACE}#country#de" not in entries
    assert entries[f"{index.NAMESPACE}#remote#false"] == {alice.user_id}
    assert _sizes().get(f"{index.NAMESPACE}#skill#rust", 0) == 0


def test_connected_channels_and_verification_level_move_the_postings(api: Api, runner: Any, admin: User, alice: User) -> None:
    assert api.call("PUT", "/v1/me/channels/discord", alice.key, {"handle": "alice#1"}).status_code == 200
    assert api.call("PATCH", f"/v1/admin/users/{alice.user_id}", admin.key, {"verifiedLevel": 3}).status_code == 200
    runner.drain()
    _assert_index_is_exact()
    assert alice.user_id in _entries()[f"{index.NAMESPACE}#channel#discord"]
    assert _entries()[f"{index.NAMESPACE}#level#3"] == {alice.user_id}
    assert api.call("DELETE", "/v1/me/channels/discord", alice.key).status_code == 200
    runner.drain()
    _assert_index_is_exact()
    assert f"{index.NAMESPACE}#channel#discord" not in _entries()


def test_a_removed_user_leaves_every_list(api: Api, runner: Any, alice: User, bob: User) -> None:
    runner.drain()
    storage.dynamodb().delete_item(TableName=settings_().USERS_TABLE, Key=storage.to_item({"userId": alice.user_id}))
    runner.drain()
    _assert_index_is_exact()
    assert all(alice.user_id not in ids for ids in _entries().values())


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
    from scripts.profile_backfill import backfill

    _patch(api, alice, {"recruiting": {"skills": ["rust"]}})
    assert backfill() == {"users": 2, "applied": 2}  # before the stream was read (as for users older than it)
    _assert_index_is_exact()
    assert alice.user_id in _entries()[index.stem_list("rust")]  # the stem lists of namespace profiles.v2 too
    settled = sorted(map(repr, _index_items()))
    assert backfill() == {"users": 2, "applied": 0}
    runner.drain()  # the stream's records are older or equal: nothing moves
    assert sorted(map(repr, _index_items())) == settled


# --- searches ---------------------------------------------------------------------------


@pytest.fixture
def crowd(api: Api, runner: Any) -> list[User]:
    """Seven users (levels 3, 2, 2, 1, 0, 0, 0), all python, some rust; postings applied."""
    people = []
    for n, level in enumerate([3, 2, 2, 1, 0, 0, 0]):
        person = make_user(f"Person {n}", verifiedLevel=level, country="de" if n % 2 else "fr")
        skills = ["python", "rust"] if n % 3 == 0 else ["python"]
        _patch(api, person, {"recruiting": {"skills": skills, "openToWork": n != 3}})
        people.append(person)
    runner.drain()
    return people


def test_cursor_pages_follow_the_result_order_and_read_only_their_page(api: Api, crowd: list[User]) -> None:
    first = _search(api, crowd[0], "pageSize=3")
    assert _names(first) == ["Person 0", "Person 2", "Person 1"]
    assert (first["total"], first["totalRelation"]) == (7, "eq")
    with aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches, counting_reads() as reads, forbid_scans():
        second = _search(api, crowd[0], f"pageSize=3&cursor={first['nextCursor']}")
    assert _names(second) == ["Person 3", "Person 6", "Person 5"]
    assert second["page"] == 2
    assert second["total"] == 7
    assert all("ExclusiveStartKey" in q for q in queries)  # each list read from the cursor on
    assert f"{index.NAMESPACE}#level#3" not in {q["ExpressionAttributeValues"][":p"]["S"] for q in queries}  # wholly before it
    assert reads.by_operation["Query"] <= 3 + 1  # the page, and one entry of overshoot where a list ends
    assert sum(len(keys["Keys"]) for b in batches for keys in b["RequestItems"].values()) == 3 + 4  # users + sizes
    third = _search(api, crowd[0], f"pageSize=3&cursor={second['nextCursor']}")
    assert (_names(third), third["nextCursor"]) == (["Person 4"], None)


def test_filtered_cursor_pages_count_the_matches(api: Api, crowd: list[User]) -> None:
    first = _search(api, crowd[0], "skills=python&openToWork=true&pageSize=2")
    assert _names(first) == ["Person 0", "Person 2"]
    assert (first["total"], first["totalRelation"]) == (6, "eq")
    second = _search(api, crowd[0], f"skills=python&openToWork=true&pageSize=2&cursor={first['nextCursor']}")
    assert _names(second) == ["Person 1", "Person 6"]
    assert second["total"] == 6


def test_beyond_the_read_budget_the_total_is_a_lower_bound(api: Api, crowd: list[User], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(profile_search, "READ_BUDGET", 3)
    # Both lists hold more than 3 profiles: the read stops one match past the page (issue 20: the
    # filters are checked on the entries of one list, a source within the budget is counted whole).
    result = _search(api, crowd[0], "skills=python&openToWork=true&pageSize=1")
    assert (_names(result), result["totalRelation"]) == (["Person 0"], "gte")
    assert 2 <= result["total"] <= 6
    assert result["nextCursor"] is not None


@pytest.mark.parametrize("tamper", [lambda c: c[:-2] + ("yy" if c.endswith("xx") else "xx"), lambda c: "x" + c, lambda c: "not-a-cursor"])
def test_a_tampered_cursor_is_a_400_naming_it(api: Api, crowd: list[User], tamper: Any) -> None:
    cursor = _search(api, crowd[0], "pageSize=2")["nextCursor"]
    response = api.call("GET", f"/v1/profiles/search?pageSize=2&cursor={tamper(cursor)}", crowd[0].key)
    assert_error(response, 400, "VALIDATION_ERROR", "cursor")


def test_a_cursor_of_another_query_is_a_400(api: Api, crowd: list[User]) -> None:
    cursor = _search(api, crowd[0], "pageSize=2&country=de")["nextCursor"]
    response = api.call("GET", f"/v1/profiles/search?pageSize=2&country=fr&cursor={cursor}", crowd[0].key)
    assert_error(response, 400, "VALIDATION_ERROR", "cursor")


def test_a_profile_changed_before_the_stream_caught_up_never_shows_stale_or_twice(api: Api, runner: Any, crowd: list[User]) -> None:
    _patch(api, crowd[1], {"recruiting": {"skills": ["cobol"]}})  # not applied yet: its postings still say python
    found = _search(api, crowd[0], "skills=python")
    assert "Person 1" not in _names(found)
    assert len(set(_names(found))) == len(_names(found))
    runner.drain()
    assert _names(_search(api, crowd[0], "skills=cobol")) == ["Person 1"]


def test_no_search_reads_every_user(api: Api, crowd: list[User]) -> None:
    blocks.forget_hidden()  # the searcher's block set is read by this search, whatever ran before it
    with aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches, counting_reads() as reads, forbid_scans():
        result = _search(api, crowd[0], "skills=rust&pageSize=1")
    assert _names(result) == ["Person 0"]
    assert result["total"] == 3
    users_read = sum(len(b["RequestItems"].get(settings_().USERS_TABLE, {}).get("Keys", [])) for b in batches)
    assert users_read == 1
    assert [q["Limit"] for q in search_reads(queries)] == [1]
    read = {op: reads.by_operation[op] for op in ("Query", "BatchGetItem")}
    assert read == {"Query": 1, "BatchGetItem": 1 + 1}  # one entry; the size and the user


# --- property: pages equal brute force --------------------------------------------------

_NAMES = ["Ada Lovelace", "Grace Hopper", "Ángel Ruiz", "Linus", "Ana Lopez"]
_HEADLINES = [None, "python engineer", "rust developer", "pythonista baker", "internationalization expert", "happy company"]
_SKILLS = ["python", "go", "rust", "sql", "k8s"]
_MANY = [f"skill{n:02d}" for n in range(index.MAX_PAIRED_SKILLS)]
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
                          "compani", "companies happ", "grace"]),
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


def _brute_force(query: ProfileSearchQuery) -> list[str]:
    users: list[UserRecord] = [record(i) for i in table_items(settings_().USERS_TABLE)]
    terms = words(query.q or "")
    found = sorted((u for u in users if matches(u, query, terms)), key=lambda u: u["userId"])
    found.sort(key=lambda u: (int(u.get("verifiedLevel", 0)), u["updatedAt"]), reverse=True)
    return [u["userId"] for u in found]


@given(
    people=st.lists(st.tuples(_profile, st.none() | _profile), max_size=8),
    queries=st.lists(_query, min_size=3, max_size=3),
    page_size=st.integers(1, 4),
    budget=st.integers(1, 8),
    lies=st.none() | st.integers(0, 2**32 - 1),
)
@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_cursor_pages_equal_brute_force(
    aws: dict[str, str], aws_resources: Resources, monkeypatch: pytest.MonkeyPatch,
    people: list[tuple[dict[str, Any], dict[str, Any] | None]], queries: list[dict[str, Any]], page_size: int, budget: int,
    lies: int | None,
) -> None:
    """Random profiles (some changed after creation, some with too many skills to pair), random
    filter combinations, page sizes and read budgets: the cursor pages concatenated are the
    brute-force matches of :func:`matches` in result order; ``total`` is exact when
    ``totalRelation`` is "eq", else a lower bound of what remains; the index equals brute force.
    ``lies``: every remembered list size (chalicelib.search.statistics) a random one, else those of
    the earlier examples' tables: a plan from them may cost more, never answer differently."""
    from app import app
    from local_stack.runner import EventRunner

    reset(aws_resources)  # each example on empty tables: moto sorts a whole table on every Query
    runner = EventRunner(app)
    monkeypatch.setattr(profile_search, "READ_BUDGET", budget)
    if lies is not None:
        rng = random.Random(lies)
        monkeypatch.setattr(statistics, "remembered", lambda names: {n: rng.choice([0, 0, 1, 3, 60, 400]) for n in names})
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
                assert len(found) + len(page.profiles) < page.total <= len(expected), params
            found += [p.userId for p in page.profiles]
            cursor = page.nextCursor
            if cursor is None:
                break
        assert found == expected, params
        assert Counter(found).most_common(1)[0][1] == 1 if found else True
