"""The search read paths as they were before issue 13, kept only as the benchmark's baseline.

Each function issues the Queries the pre-issue-13 service issued for a search, with the same
index, key condition and paging, but with ``Select="COUNT"``: DynamoDB (and moto) report the
same ``ScannedCount`` (items read) without shipping the items, so the baseline is measured
from DynamoDB responses in the same run at a fraction of the wall time. Listing searches read
the geohash cells of :func:`chalicelib.listings.search.geo.plan_cells` when a radius is given and a
plan exists, else the whole partition of the category (of every category without one) in the
single-partition ``activeByCategory`` index it had; that index is gone, and its partition held
exactly the listings that the write shards of ``activeByCategoryShard`` / ``activeByRoleShard``
hold together, so the baseline counts those. Profile searches read ``byCountry`` or all eight
``bySearchShard`` partitions.
"""

from __future__ import annotations

from typing import Any

from chalicelib import storage
from chalicelib.categories.registry import all_categories
from chalicelib.config import settings
from chalicelib.listings.search import geo
from chalicelib.listings.search.index import SHARDS
from chalicelib.listings.search.query import SearchQuery
from chalicelib.users.repository import SEARCH_SHARDS


def _count(table: str, **params: Any) -> None:
    params = {"TableName": table, "Select": "COUNT", **params}
    while True:
        response = storage.dynamodb().query(**params)
        if "LastEvaluatedKey" not in response:
            return
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def listings(query: SearchQuery) -> None:
    """The reads of a listing search the pre-issue-13 way (every candidate of the category or cells)."""
    table = settings().LISTINGS_TABLE
    if query.geo is not None and query.geo.radius_km is not None:
        plan = geo.plan_cells(query.geo.lat, query.geo.lng, query.geo.radius_km)
        if plan is not None:
            precision, cells = plan
            prefix = ""
            if query.category is not None:
                prefix = f"{query.category.key}#" + (f"{query.role}#" if query.role else "")
            for cell in cells:
                condition = f"geo{precision} = :g" + (" AND begins_with(geoSort, :p)" if prefix else "")
                values = {"g": f"{query.geo.key}#{cell}", **({"p": prefix} if prefix else {})}
                _count(table, IndexName=f"activeByGeo{precision}", KeyConditionExpression=condition,
                       ExpressionAttributeValues=storage.values(**values))
            return
    for category in [query.category] if query.category else list(all_categories().values()):
        for shard in range(SHARDS):
            if query.role:
                index, condition, partition = "activeByRoleShard", "activeRoleShard = :p", f"{category.key}#{query.role}#{shard}"
            else:
                index, condition, partition = "activeByCategoryShard", "activeCategoryShard = :p", f"{category.key}#{shard}"
            _count(table, IndexName=index, KeyConditionExpression=condition, ExpressionAttributeValues=storage.values(p=partition))


def profiles(country: str | None) -> None:
    """The reads of a profile search the pre-issue-13 way (one country, else every user)."""
    table = settings().USERS_TABLE
    if country is not None:
        _count(table, IndexName="byCountry", KeyConditionExpression="country = :c",
               ExpressionAttributeValues=storage.values(c=country))
        return
    for shard in range(SEARCH_SHARDS):
        _count(table, IndexName="bySearchShard", KeyConditionExpression="searchShard = :s",
               ExpressionAttributeValues=storage.values(s=f"S{shard}"))


def request_list(index: str, attribute: str, owner: str) -> None:
    """The reads of a request list page the pre-issue-13 way: the owner's whole history.

    ``byRequester`` / ``byRecipient`` / ``bySubject`` (gone) held exactly the items that the
    unfiltered list indexes ``sentNewest`` / ``receivedNewest`` / ``subjectNewest`` hold, and a
    ``status`` or ``subjectType`` filter was a FilterExpression, which reads them all the same.
    """
    _count(settings().REQUESTS_TABLE, IndexName=index, KeyConditionExpression="#k = :v",
           ExpressionAttributeNames={"#k": attribute}, ExpressionAttributeValues=storage.values(v=owner))


def conversation_list(user_id: str, page_ids: list[str]) -> None:
    """The reads of a conversation page the pre-issue-13 way: every member item, then the page's conversations."""
    _count(settings().CONVERSATION_MEMBERS_TABLE, KeyConditionExpression="userId = :u",
           ExpressionAttributeValues=storage.values(u=user_id))
    if page_ids:
        storage.batch_get(settings().CONVERSATIONS_TABLE, [{"conversationId": i} for i in page_ids])
