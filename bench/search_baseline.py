"""The search read paths as they were before issue 13, kept only as the benchmark's baseline.

Each function issues the Queries the pre-issue-13 service issued for a search, with the same
index, key condition and paging, but with ``Select="COUNT"``: DynamoDB (and moto) report the
same ``ScannedCount`` (items read) without shipping the items, so the baseline is measured
from DynamoDB responses in the same run at a fraction of the wall time. Listing searches read
the geohash cells of :func:`plan_cells` (the old plan, kept here) when a radius is given and a
plan exists, else the whole partition of the category (of every category without one) in the
single-partition ``activeByCategory`` index it had; that index is gone, and its partition held
exactly the listings that the write shards of ``activeByCategoryShard`` / ``activeByRoleShard``
hold together, so the baseline counts those. Profile searches read ``byCountry`` or all eight
``bySearchShard`` partitions.
"""

from __future__ import annotations

import math
from typing import Any

from chalicelib import storage
from chalicelib.categories.registry import all_categories
from chalicelib.config import settings
from chalicelib.listings.index import SHARDS, geo_partition
from chalicelib.listings.search.query import SearchQuery
from chalicelib.search import geo
from chalicelib.users.repository import SEARCH_SHARDS


def _count(table: str, **params: Any) -> None:
    params = {"TableName": table, "Select": "COUNT", **params}
    while True:
        response = storage.dynamodb().query(**params)
        if "LastEvaluatedKey" not in response:
            return
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


#: The pre-issue-13 geo plan: cells of one precision from these covering the circle's bounding box,
#: finest first, at most ``MAX_CELLS`` Queries, else the whole category.
OLD_PRECISIONS = (3, 4, 5)
MAX_CELLS = 32


def _estimate(lat: float, radius_km: float, precision: int) -> float:
    bits = 5 * precision
    lat_deg = 180.0 / float(2 ** (bits // 2))
    lng_deg = 360.0 / float(2 ** (bits - bits // 2))
    km_per_degree = math.pi * geo.EARTH_RADIUS_KM / 180.0
    height = 2 * radius_km / km_per_degree
    width = 2 * radius_km / (km_per_degree * max(math.cos(math.radians(min(abs(lat), 89.0))), 1e-6))
    return (height / lat_deg + 1) * (min(width, 360.0) / lng_deg + 1)


def plan_cells(lat: float, lng: float, radius_km: float) -> tuple[int, list[str]] | None:
    """The pre-issue-13 cell plan: the finest of :data:`OLD_PRECISIONS` whose bounding-box covering
    needs at most :data:`MAX_CELLS` cells, or ``None`` (then the whole category was read)."""
    for precision in sorted(OLD_PRECISIONS, reverse=True):
        cells = geo.covering_cells(lat, lng, radius_km, precision) if _estimate(lat, radius_km, precision) <= 4 * MAX_CELLS else []
        if cells and len(cells) <= MAX_CELLS:
            return precision, cells
    return None


def listings(query: SearchQuery) -> None:
    """The reads of a listing search the pre-issue-13 way (every candidate of the category or cells).

    The old geo indexes (``activeByGeo3/4/5``, partition = one cell) are gone; a cell of precision
    3..5 is the key range ``cell .. cell~`` of the precision-3 partition of the new
    ``activeByGeoCell3`` index, which holds the same listings of the category (all roles: the
    old index narrowed to a role by a sort-key prefix, so for a role the baseline is an upper
    bound; the bench's geo shapes give none).
    """
    table = settings().LISTINGS_TABLE
    categories = [query.category] if query.category else list(all_categories().values())
    if query.geo is not None and query.geo.radius_km is not None:
        plan = plan_cells(query.geo.lat, query.geo.lng, query.geo.radius_km)
        if plan is not None:
            _, cells = plan
            for category in categories:
                for cell in cells:
                    partition = geo_partition(category.key, query.geo.key, cell[:3])
                    _count(table, IndexName="activeByGeoCell3", KeyConditionExpression="geoCell3 = :p AND geoPoint BETWEEN :lo AND :hi",
                           ExpressionAttributeValues=storage.values(p=partition, lo=cell, hi=cell + "~"))
            return
    for category in categories:
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


def delivery_log(webhook_id: str, page_size: int) -> None:
    """The reads of a webhook's first delivery page before it paged by key: the webhook, the page's
    attempts (a Query of ``page x pageSize`` newest ``LOG#`` items) and a ``Select=COUNT`` of the
    whole log for ``total``."""
    table = settings().DELIVERIES_TABLE
    storage.get(settings().WEBHOOKS_TABLE, {"webhookId": webhook_id})
    condition = {"KeyConditionExpression": "webhookId = :w AND begins_with(deliveryKey, :log)",
                 "ExpressionAttributeValues": storage.values(w=webhook_id, log="LOG#")}
    storage.query_page(table, ScanIndexForward=False, Limit=page_size, **condition)
    _count(table, **condition)


def saved_search_matches(owner_id: str, saved_search_id: str, listing_ids: list[str]) -> None:
    """The reads of a saved search's first matches page before it paged by key: the search, every
    match (``byMatchedAt``, gone; ``matchedNewest`` holds the same items) and every matched listing
    (BatchGetItem), then the page's owners (left out here: the paged route reads them too)."""
    storage.get(settings().SAVED_SEARCHES_TABLE, {"ownerId": owner_id, "savedSearchId": saved_search_id})
    _count(settings().SAVED_SEARCH_MATCHES_TABLE, IndexName="matchedNewest", KeyConditionExpression="savedSearchId = :s",
           ExpressionAttributeValues=storage.values(s=saved_search_id))
    storage.batch_get(settings().LISTINGS_TABLE, [{"listingId": i} for i in listing_ids])


def conversation_list(user_id: str, page_ids: list[str]) -> None:
    """The reads of a conversation page the pre-issue-13 way: every member item, then the page's conversations."""
    _count(settings().CONVERSATION_MEMBERS_TABLE, KeyConditionExpression="userId = :u",
           ExpressionAttributeValues=storage.values(u=user_id))
    if page_ids:
        storage.batch_get(settings().CONVERSATIONS_TABLE, [{"conversationId": i} for i in page_ids])
