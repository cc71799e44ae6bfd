"""Planner statistics (issue 20, "Cheap pages"): a search plans from the list sizes an earlier search
read (chalicelib/search/statistics.py) and answers exactly as if it had read them (in-process moto)."""

from __future__ import annotations

from typing import Any

from chalicelib.config import settings
from chalicelib.listings.search import service as search_service
from chalicelib.search import statistics
from tests.clocks import distinct_milliseconds
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import activate, aws_calls, create_listing, search_listings, search_reads

CONTRACTS = "category=jobs&meta.employmentType=contract&meta.salary_min=50000"


def _jobs(api: Api, admin: User, runner: Any, owner: User, *jobs: tuple[str, int]) -> list[str]:
    """ACTIVE jobs ``(employmentType, salary)``, ids oldest first."""
    ids = []
    with distinct_milliseconds():
        for n, (kind, salary) in enumerate(jobs):
            meta = {"title": f"Job {n}", "employmentType": kind, "salary": str(salary)}
            ids.append(create_listing(api, owner, "jobs", "hiring", meta=meta)["id"])
    activate(api, admin, runner, *ids)
    return ids


def _index_reads(batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The BatchGetItem calls that read the search index alone (list sizes, counters)."""
    return [b for b in batches if set(b["RequestItems"]) == {settings().SEARCH_INDEX_TABLE}]


def test_a_repeated_covered_search_reads_no_sizes_and_answers_the_same(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    ids = _jobs(api, admin, runner, alice, ("contract", 60000), ("full_time", 90000), ("contract", 40000),
                ("contract", 80000))
    with aws_calls("BatchGetItem") as batches:
        first = search_listings(api, bob, CONTRACTS)
    assert len(_index_reads(batches)) == 1  # the sizes, read once
    with aws_calls("BatchGetItem") as batches, aws_calls("Query") as queries:
        again = search_listings(api, bob, CONTRACTS)
    queries = search_reads(queries)  # without the viewer's block set (trust-and-safety.md)
    assert again == first
    assert [i["id"] for i in again["listings"]] == [ids[3], ids[0]]
    assert (again["total"], again["totalRelation"]) == (2, "eq")
    assert _index_reads(batches) == []  # planned from the remembered sizes: the entries, then the page
    assert (len(queries), len(batches)) == (1, 1)


def test_a_listing_filed_after_the_sizes_were_remembered_is_found_and_counted(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    ids = _jobs(api, admin, runner, alice, ("contract", 60000), ("contract", 70000))
    assert search_listings(api, bob, CONTRACTS)["total"] == 2
    newer = _jobs(api, admin, runner, alice, ("contract", 90000))
    with aws_calls("BatchGetItem") as batches:
        page = search_listings(api, bob, CONTRACTS)
    assert _index_reads(batches) == []  # still the remembered sizes: the list read is what counts
    assert [i["id"] for i in page["listings"]] == [newer[0], ids[1], ids[0]]
    assert (page["total"], page["totalRelation"]) == (3, "eq")


def test_a_list_passed_over_as_empty_is_read_once_it_holds_entries(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    """``salary_min=50000`` covers the bucket 32,768-65,535 (partly) and every larger one; only the
    first holds entries when the sizes are remembered. A salary of 300,000 then fills another: the
    page's read finds its size, and the page is planned again from sizes read."""
    query = "category=jobs&meta.salary_min=50000"
    ids = _jobs(api, admin, runner, alice, ("contract", 60000), ("contract", 40000), ("full_time", 55000))
    assert [i["id"] for i in search_listings(api, bob, query)["listings"]] == [ids[2], ids[0]]
    richer = _jobs(api, admin, runner, alice, ("full_time", 300000))
    with aws_calls("BatchGetItem") as batches:
        page = search_listings(api, bob, query)
    assert [i["id"] for i in page["listings"]] == [richer[0], ids[2], ids[0]]
    assert (page["total"], page["totalRelation"]) == (3, "eq")
    # The remembered plan's page read carried the empty lists' sizes; one was not: the sizes read, planned again.
    index, listings = settings().SEARCH_INDEX_TABLE, settings().LISTINGS_TABLE
    assert any({index, listings} <= set(b["RequestItems"]) for b in batches)
    assert len(_index_reads(batches)) == 1


def test_a_total_that_is_a_lists_size_is_never_a_remembered_one(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    query = "category=jobs&meta.employmentType=contract"
    _jobs(api, admin, runner, alice, ("contract", 60000), ("full_time", 70000))
    assert search_listings(api, bob, query)["total"] == 1
    _jobs(api, admin, runner, alice, ("contract", 90000), ("contract", 10000))
    with aws_calls("BatchGetItem") as batches:
        page = search_listings(api, bob, query)
    assert (page["total"], len(page["listings"])) == (3, 3)
    assert len(_index_reads(batches)) == 1


def test_a_repeated_profile_search_reads_no_sizes_and_finds_a_newer_profile(api: Api, runner: Any) -> None:
    query = "/v1/profiles/search?country=de&openToWork=true&skills=python"
    recruiting = {"openToWork": True, "headline": "Engineer", "skills": ["python", "go"]}
    ana, ben, viewer = make_user("Ana", country="de"), make_user("Ben", country="de"), make_user("Viewer")
    api.call("PATCH", "/v1/me/profile", ana.key, {"recruiting": recruiting})
    api.call("PATCH", "/v1/me/profile", ben.key, {"recruiting": {**recruiting, "openToWork": False}})
    runner.drain()
    first = api.call("GET", query, viewer.key).json
    assert [p["displayName"] for p in first["profiles"]] == ["Ana"]
    with aws_calls("BatchGetItem") as batches:
        assert api.call("GET", query, viewer.key).json == first
    assert _index_reads(batches) == []
    api.call("PATCH", "/v1/me/profile", ben.key, {"recruiting": recruiting})
    runner.drain()
    with aws_calls("BatchGetItem") as batches:
        page = api.call("GET", query, viewer.key).json
    assert sorted(p["displayName"] for p in page["profiles"]) == ["Ana", "Ben"]
    assert (page["total"], page["totalRelation"]) == (2, "eq")
    assert _index_reads(batches) == []


def test_a_covered_read_sizes_its_first_query_by_the_share_it_accepted_last(
        api: Api, alice: User, bob: User, admin: User, runner: Any, monkeypatch: Any) -> None:
    """``salary_min=60000`` over a bucket (32,768-65,535) where one salary in four is inside: the
    planner's guess (half) costs the first read a second Query; the share it learned, the next none."""
    monkeypatch.setattr(search_service, "COUNT_ENTRIES", 2)  # the list is not read whole
    monkeypatch.setattr(statistics, "MIN_OBSERVED", 5)  # a share learned from this few entries
    salaries = [61000 if n % 4 == 0 else 40000 for n in range(16)]
    ids = _jobs(api, admin, runner, alice, *(("contract", s) for s in salaries))
    inside = [i for i, s in zip(ids, salaries, strict=True) if s >= 60000][::-1]
    query = "category=jobs&meta.salary_min=60000&pageSize=2"
    with aws_calls("Query") as first:
        assert [i["id"] for i in search_listings(api, bob, query)["listings"]] == inside[:2]
    first = search_reads(first)  # without the viewer's block set (trust-and-safety.md)
    with aws_calls("Query") as again:
        page = search_listings(api, bob, query)
    again = search_reads(again)  # without the viewer's block set (trust-and-safety.md)
    assert [i["id"] for i in page["listings"]] == inside[:2]
    assert (len(first), len(again)) == (2, 1)
