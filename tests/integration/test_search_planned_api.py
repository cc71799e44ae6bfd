"""Planned searches over HTTP: posting-list pages, cursors, stale postings (in-process moto)."""

from __future__ import annotations

from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.listings.search.spec import NAMESPACE
from tests.clocks import distinct_milliseconds
from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, assert_error, aws_calls, create_listing, index_listings, search_listings, search_reads


def _rust_jobs(api: Api, alice: User, admin: User, runner: Any, rust: int, other: int) -> list[str]:
    """``rust`` ACTIVE jobs titled with "rust" and ``other`` without, alternating while both last; the rust ids oldest first."""
    ids, rust_ids = [], []
    with distinct_milliseconds():
        for n in range(rust + other):
            is_rust = len(rust_ids) < rust and (n % 2 == 0 or n - len(rust_ids) >= other)
            title = f"{'Rust' if is_rust else 'Python'} engineer {n}"
            listing = create_listing(api, alice, "jobs", "hiring", meta={"title": title})["id"]
            ids.append(listing)
            if is_rust:
                rust_ids.append(listing)
    activate(api, admin, runner, *ids)
    return rust_ids


def test_a_word_search_pages_through_its_posting_list_with_cursors(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    rust = _rust_jobs(api, alice, admin, runner, rust=7, other=10)  # the term's two lists (14) are smaller than the category (17)
    assert len(rust) == 7
    first = search_listings(api, bob, "category=jobs&q=rust&pageSize=3&sort=newest")
    assert [i["id"] for i in first["listings"]] == rust[::-1][:3]
    assert (first["total"], first["totalRelation"]) == (7, "eq")  # the term's list (7 entries) read whole
    with aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches:
        second = search_listings(api, bob, f"category=jobs&q=rust&pageSize=3&sort=newest&cursor={first['nextCursor']}")
    queries = search_reads(queries)  # without the viewer's block set (trust-and-safety.md)
    assert [i["id"] for i in second["listings"]] == rust[::-1][3:6]
    # The vocabulary (the word's completions) and the cheaper driver by the list sizes: the term's
    # impact list read whole, or the category's newest-first list from the cursor on.
    assert {q["TableName"] for q in queries} == {settings().SEARCH_INDEX_TABLE}
    partitions = {q["ExpressionAttributeValues"][":pk"]["S"] for q in queries}
    assert f"{NAMESPACE}|jobs|v|r" in partitions  # the vocabulary's partition of words starting with r
    assert partitions - {f"{NAMESPACE}|jobs|v|r"} in ({f"{NAMESPACE}|jobs|t|rust"}, {f"{NAMESPACE}|jobs|a"})
    assert all("ExclusiveStartKey" in q for q in queries if q["ExpressionAttributeValues"][":pk"]["S"].endswith("|a"))
    assert len(batches) <= 3  # sizes and vocabulary; the candidates' stored documents beside their listings and owners
    third = search_listings(api, bob, f"category=jobs&q=rust&pageSize=3&sort=newest&cursor={second['nextCursor']}")
    assert [i["id"] for i in third["listings"]] == rust[::-1][6:]
    assert third["nextCursor"] is None


def test_a_tampered_cursor_of_a_planned_search_is_a_400(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    _rust_jobs(api, alice, admin, runner, rust=3, other=0)
    first = search_listings(api, bob, "category=jobs&q=rust&pageSize=1")
    cursor = first["nextCursor"]
    edited = cursor[:-2] + ("A" if cursor[-2] != "A" else "B") + cursor[-1]
    assert_error(api.call("GET", f"/v1/listings/search?category=jobs&q=rust&pageSize=1&cursor={edited}", bob.key),
                 400, "VALIDATION_ERROR", "cursor")
    assert_error(api.call("GET", f"/v1/listings/search?category=jobs&q=python&pageSize=1&cursor={cursor}", bob.key),
                 400, "VALIDATION_ERROR", "cursor")
    with_role = search_listings(api, bob, "category=jobs&q=rust&role=hiring&pageSize=1")["nextCursor"]
    assert_error(api.call("GET", f"/v1/listings/search?category=jobs&q=rust%26role%3Dhiring&pageSize=1&cursor={with_role}", bob.key),
                 400, "VALIDATION_ERROR", "cursor")  # one q holding "&role=hiring" is another query


def test_stale_postings_never_show_a_paused_or_edited_listing(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    """Before the stream consumer catches up, candidates are re-read from the table and verified."""
    rust = _rust_jobs(api, alice, admin, runner, rust=3, other=0)
    assert api.call("PATCH", f"/v1/listings/{rust[0]}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    assert api.call("PATCH", f"/v1/listings/{rust[1]}", alice.key, {"meta": {"title": "Go engineer"}}).status_code == 200
    found = search_listings(api, bob, "category=jobs&q=rust&pageSize=5")  # the postings still hold all three
    assert [i["id"] for i in found["listings"]] == [rust[2]]
    index_listings()
    settled = search_listings(api, bob, "category=jobs&q=rust&pageSize=5")
    assert [i["id"] for i in settled["listings"]] == [rust[2]]
    assert (settled["total"], settled["totalRelation"]) == (1, "eq")


def test_a_filter_combination_verifies_the_smallest_list(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    rust = _rust_jobs(api, alice, admin, runner, rust=3, other=3)
    with aws_calls("Query") as queries:
        found = search_listings(api, bob, "category=jobs&q=rust engineer&meta.employmentType=full_time&pageSize=10")
    queries = search_reads(queries)  # without the viewer's block set (trust-and-safety.md)
    assert [i["id"] for i in found["listings"]] == rust[::-1]
    assert (found["total"], found["totalRelation"]) == (3, "eq")  # the path (3 entries) was verified whole
    lists = {q["ExpressionAttributeValues"][":pk"]["S"] for q in queries if "|t|" in q["ExpressionAttributeValues"][":pk"]["S"]}
    assert f"{NAMESPACE}|jobs|t|rust" in lists  # not the last word: its stem only
    assert not any(p.startswith(f"{NAMESPACE}|jobs|t|rust") and p != f"{NAMESPACE}|jobs|t|rust" for p in lists)


def test_an_open_salary_range_without_a_category_queries_only_the_buckets_that_hold_salaries(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    with distinct_milliseconds():
        ids = [create_listing(api, alice, "jobs", "hiring", meta={"title": f"Role {n}", "salary": str(salary)})["id"]
               for n, salary in enumerate((90000, 150000, 160000, 300000))]
    activate(api, admin, runner, *ids)
    with aws_calls("Query") as queries:
        found = search_listings(api, bob, "meta.salary_min=140000&pageSize=10")
    assert [i["id"] for i in found["listings"]] == ids[:0:-1]
    # Step 1 reads the counters of the range's 25 buckets in every category (BatchGetItem); only the
    # two that hold salaries of 140,000 or more are queried (131,072-262,143 and 262,144-524,287).
    lists = sorted(q["ExpressionAttributeValues"][":pk"]["S"] for q in search_reads(queries))
    assert lists == [f"{NAMESPACE}|jobs|n|salary|p17", f"{NAMESPACE}|jobs|n|salary|p18"]


def test_a_word_search_without_a_category_reads_its_stem_lists_with_the_vocabulary(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    rust = _rust_jobs(api, alice, admin, runner, rust=4, other=2)
    with aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches:
        found = search_listings(api, bob, "q=rust&pageSize=3")
    assert len(found["listings"]) == 3
    assert {i["id"] for i in found["listings"]} <= set(rust)
    partitions = [q["ExpressionAttributeValues"][":pk"]["S"] for q in search_reads(queries)]
    # Step 1: per category the vocabulary of words starting with r and the stem's impact list
    # (4 letters: no typo keys); step 2 loads the candidates (their stored documents beside their
    # listings and owners). No other list: "rust" matches its stem alone.
    categories = ("cofounders", "housing", "jobs", "mentoring")
    assert sorted(partitions) == sorted([f"{NAMESPACE}|{c}|v|r" for c in categories] + [f"{NAMESPACE}|{c}|t|rust" for c in categories])
    assert len(batches) <= 3
