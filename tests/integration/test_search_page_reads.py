"""The calls a search page makes (issue 20, "Cheap pages"): owners read with the page's listings, a lone
range probed in value order, a cursorless deep page's sizes and counters in one read (in-process moto)."""

from __future__ import annotations

from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.listings.search.postings import OWNER, value_list
from chalicelib.search import postings
from tests.clocks import distinct_milliseconds
from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, aws_calls, create_listing, get_listing, search_listings, search_reads

HOUSING = {"description": "<p>x</p>", "location": "Berlin", "location_lat": "52.52", "location_lng": "13.405",
           "propertyType": "room"}


def _tables(batch: dict[str, Any]) -> set[str]:
    return set(batch["RequestItems"])


def _jobs(api: Api, admin: User, runner: Any, owners: list[User], types: list[str]) -> list[str]:
    """One ACTIVE job per entry of ``types`` (its employmentType), owned in turn by ``owners``; ids oldest first."""
    ids = []
    with distinct_milliseconds():
        for n, kind in enumerate(types):
            meta = {"title": f"Job {n}", "employmentType": kind}
            ids.append(create_listing(api, owners[n % len(owners)], "jobs", "hiring", meta=meta)["id"])
    activate(api, admin, runner, *ids)
    return ids


def test_a_covered_page_reads_its_listings_and_their_owners_in_one_batch(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    ids = _jobs(api, admin, runner, [alice, bob], ["contract", "full_time", "contract", "contract", "part_time"])
    contracts = [ids[3], ids[2], ids[0]]  # newest first
    with aws_calls("BatchGetItem") as batches:
        page = search_listings(api, admin, "category=jobs&meta.employmentType=contract&pageSize=2")
    assert [i["id"] for i in page["listings"]] == contracts[:2]
    assert (page["total"], page["totalRelation"]) == (3, "eq")
    # Each listing's profile as its detail shows it: the owner read with the page, not after it.
    for listing in page["listings"]:
        assert listing["profile"] == get_listing(api, admin, listing["id"]).json["profile"]
    users_table, listings_table = settings().USERS_TABLE, settings().LISTINGS_TABLE
    with_listings = [b for b in batches if listings_table in _tables(b)]
    assert len(with_listings) == 1
    assert users_table in _tables(with_listings[0])
    assert not [b for b in batches if users_table in _tables(b) and listings_table not in _tables(b)]


def test_entries_filed_without_an_owner_still_show_it(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    """An entry whose projection names no owner (filed by an older indexer) costs the page one more read, nothing else."""
    ids = _jobs(api, admin, runner, [alice], ["contract", "contract"])
    index = settings().SEARCH_INDEX_TABLE
    # The list as an older indexer filed it: no owner in the entries' projection.
    for entry in storage.query_pages(index, KeyConditionExpression="pk = :p",
                                     ExpressionAttributeValues=storage.values(p=value_list("jobs", "employmentType", "contract"))):
        storage.dynamodb().update_item(TableName=index, Key=storage.to_item({"pk": entry["pk"], "sk": entry["sk"]}),
                                       UpdateExpression="REMOVE f.#o", ExpressionAttributeNames={"#o": OWNER})
    with aws_calls("BatchGetItem") as batches:
        page = search_listings(api, bob, "category=jobs&meta.employmentType=contract")
    assert [i["id"] for i in page["listings"]] == ids[::-1]
    assert all(i["profile"] == get_listing(api, bob, ids[0]).json["profile"] for i in page["listings"])
    assert any(_tables(b) == {settings().USERS_TABLE} for b in batches)


def test_a_lone_range_over_many_buckets_is_probed_in_value_order(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    rents = ["300", "700", "5500", "1300", "2600", "9000", "600"]  # buckets p08, p09, p10, p11 within the range
    ids = []
    with distinct_milliseconds():
        for n, rent in enumerate(rents):
            meta = {**HOUSING, "title": f"Room {n}", "rentMonthly": rent}
            ids.append(create_listing(api, alice, "housing", "offering", meta=meta)["id"])
    activate(api, admin, runner, *ids)
    inside = [i for i, rent in zip(ids, rents, strict=True) if 500 <= int(rent) <= 3000][::-1]
    with aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches:
        first = search_listings(api, bob, "category=housing&meta.rentMonthly_min=500&meta.rentMonthly_max=3000&pageSize=3")
    queries = search_reads(queries)  # without the viewer's block set (trust-and-safety.md)
    assert [i["id"] for i in first["listings"]] == inside[:3]
    assert (first["total"], first["totalRelation"]) == (len(inside), "eq")
    # One Query of the value-sorted list instead of one per bucket the range overlaps.
    assert [q["ExpressionAttributeValues"][":p"]["S"] for q in queries] == ["listings.v5#housing#n#rentMonthly"]
    # Its entries name the owners: read with the page's listings.
    assert [_tables(b) for b in batches if settings().LISTINGS_TABLE in _tables(b)] == [
        {settings().LISTINGS_TABLE, settings().USERS_TABLE}]
    assert all(i["profile"]["displayName"] for i in first["listings"])
    second = search_listings(api, bob, f"category=housing&meta.rentMonthly_min=500&meta.rentMonthly_max=3000&pageSize=3"
                               f"&cursor={first['nextCursor']}")
    assert [i["id"] for i in second["listings"]] == inside[3:]


def test_a_cursorless_deep_page_of_one_category_is_two_calls(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    """The skipped entries (with their owners), then the page's listings, their owners, the list's
    size and the counters in one BatchGetItem: the size says the index is current, the counters the total."""
    ids = _jobs(api, admin, runner, [alice], ["contract"] * 5)
    with aws_calls("BatchGetItem") as batches, aws_calls("Query") as queries:
        page = search_listings(api, bob, "category=jobs&pageSize=2&page=2")
    queries = search_reads(queries)  # without the viewer's block set (trust-and-safety.md)
    assert [i["id"] for i in page["listings"]] == ids[::-1][2:4]
    assert (page["total"], page["totalRelation"]) == (5, "eq")
    assert [q["ExpressionAttributeValues"][":p"]["S"] for q in queries] == ["listings.v5#jobs#all"]
    assert [_tables(b) for b in batches] == [
        {settings().LISTINGS_TABLE, settings().USERS_TABLE, settings().SEARCH_INDEX_TABLE}]
    keys = batches[0]["RequestItems"][settings().SEARCH_INDEX_TABLE]["Keys"]
    assert {"pk": {"S": postings.size_key("listings.v5#jobs#all")["pk"]}, "sk": {"S": "size"}} in keys
    assert len(keys) > 1  # and the counters
    assert all(i["profile"] == get_listing(api, bob, ids[0]).json["profile"] for i in page["listings"])
    beyond = search_listings(api, bob, "category=jobs&pageSize=2&page=4")  # past the end: the total still exact
    assert (beyond["listings"], beyond["total"]) == ([], 5)


def test_a_cursorless_deep_page_over_every_category_reads_the_sizes_and_the_counters_together(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    ids = _jobs(api, admin, runner, [alice], ["contract"] * 5)
    with aws_calls("BatchGetItem") as batches:
        page = search_listings(api, bob, "pageSize=2&page=2")
    assert [i["id"] for i in page["listings"]] == ids[::-1][2:4]
    assert (page["total"], page["totalRelation"]) == (5, "eq")
    index = [b for b in batches if _tables(b) == {settings().SEARCH_INDEX_TABLE}]
    assert len(index) == 1  # every category list's size and the counters, one call before the entries
    assert [_tables(b) for b in batches if settings().LISTINGS_TABLE in _tables(b)] == [
        {settings().LISTINGS_TABLE, settings().USERS_TABLE}]


def test_a_covered_read_asks_for_the_values_it_checks_and_the_owner(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    ids = _jobs(api, admin, runner, [alice], ["contract", "full_time", "contract"])
    with aws_calls("Query") as queries:
        page = search_listings(api, bob, "category=jobs&role=hiring&meta.employmentType=contract")
    queries = search_reads(queries)  # without the viewer's block set (trust-and-safety.md)
    assert [i["id"] for i in page["listings"]] == [ids[2], ids[0]]
    covered = [q for q in queries if q["TableName"] == settings().SEARCH_INDEX_TABLE]
    assert covered
    for query in covered:
        projected = {query["ExpressionAttributeNames"][path.removeprefix("f.")]
                     for path in query["ProjectionExpression"].split(", ") if path.startswith("f.")}
        assert projected == {"_role", "employmentType", OWNER}


def test_a_cursorless_deep_page_while_the_index_lags_reads_the_tables_index(
        api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    """One listing not yet filed in the category list (its size one short of the counters): the page
    found after reading the entries falls back to the table's own index and stays right."""
    ids = _jobs(api, admin, runner, [alice], ["contract"] * 5)
    index, name = settings().SEARCH_INDEX_TABLE, "listings.v5#jobs#all"
    newest = storage.query(index, KeyConditionExpression="pk = :p", ExpressionAttributeValues=storage.values(p=name),
                           ScanIndexForward=False, Limit=1)[0]
    storage.dynamodb().delete_item(TableName=index, Key=storage.to_item({"pk": newest["pk"], "sk": newest["sk"]}))
    storage.dynamodb().update_item(TableName=index, Key=storage.to_item(postings.size_key(name)),
                                   UpdateExpression="ADD n :minus", ExpressionAttributeValues=storage.values(minus=-1))
    page = search_listings(api, bob, "category=jobs&pageSize=2&page=2")
    assert [i["id"] for i in page["listings"]] == ids[::-1][2:4]
    assert (page["total"], page["totalRelation"]) == (5, "eq")
