"""Search read-cost benchmark (issue: core service, "Performance").

Loads N ACTIVE listings (default 20,000) spread over the four categories and 50 real cities
into the embedded AWS (a moto server child process, over HTTP), then runs category,
category + meta, geo (25 km and 200 km) and q searches through the real search service and
reports, per search, the DynamoDB Query calls, the items they read (``ScannedCount``) and
the ratio to a full-table Scan (the baseline, run once in the same process).

Budgets (``--check`` exits 1 when one is missed):

* category + geo 25 km reads at most 5 x the listings inside its circle and under 5 % of the table;
* a category search reads only that category's ACTIVE listings (ratio 1.0).

moto's Query walks its whole table in Python, so milliseconds here say little about DynamoDB;
the item counts are the figures that carry over.

Usage: ``python bench/search.py [--listings 20000] [--check]``
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from local_stack.__main__ import start_moto
from local_stack.cities import CITIES
from tests.e2e.conftest import free_port

GEO_READ_BUDGET = 5.0
GEO_TABLE_SHARE_BUDGET = 0.05


@dataclass
class Reads:
    """Counters filled by a botocore hook."""

    calls: int = 0
    items: int = 0

    def hook(self, parsed: dict[str, Any], **_: Any) -> None:
        self.calls += 1
        self.items += int(parsed.get("ScannedCount", parsed.get("Count", 0)))


def make_listings(count: int, seed: int = 11) -> list[dict[str, Any]]:
    """``count`` ACTIVE listing items as the service writes them, index attributes included."""
    from chalicelib import clock
    from chalicelib.categories.registry import all_categories
    from chalicelib.listings.search.index import index_attributes
    from chalicelib.listings.service import search_text

    rng = random.Random(seed)
    categories = list(all_categories().values())
    words = ["engineer", "designer", "room", "mentor", "founder", "python", "analyst", "studio", "startup", "coach"]
    items = []
    for i in range(count):
        category = categories[i % len(categories)]
        role = category.roles[(i // len(categories)) % len(category.roles)].key
        name, _, lat, lng = CITIES[(i // 7) % len(CITIES)]
        meta = {"title": f"{rng.choice(words).title()} {rng.choice(words)} in {name}", "location": name,
                "location_lat": f"{lat + rng.gauss(0, 0.06):.5f}", "location_lng": f"{lng + rng.gauss(0, 0.09):.5f}"}
        for field in category.fields:
            if field.type.value == "select" and role in field.roles:
                meta[field.key] = rng.choice(sorted(field.option_keys()))
            elif field.type.value == "number" and role in field.roles:
                meta[field.key] = str(rng.randrange(1, 200) * 500)
        created = clock.iso()
        item = {"listingId": f"lst_bench{i:06d}", "ownerId": f"usr_bench{i % 50:03d}", "categoryKey": category.key,
                "roleKey": role, "title": meta["title"], "meta": meta, "channels": ["telegram"], "webhookIds": [],
                "status": "ACTIVE", "version": 1, "searchText": search_text(category, meta), "createdAt": created,
                "updatedAt": created}
        item.update(index_attributes(item))
        items.append(item)
    return items


def load(items: list[dict[str, Any]]) -> None:
    """BatchWriteItem the items (25 per call, 4 writers)."""
    from chalicelib import storage
    from chalicelib.config import settings

    table = settings().LISTINGS_TABLE

    def write(chunk: list[dict[str, Any]]) -> None:
        request = {table: [{"PutRequest": {"Item": storage.to_item(i)}} for i in chunk]}
        while request:
            request = storage.dynamodb().batch_write_item(RequestItems=request).get("UnprocessedItems") or {}

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, [items[s : s + 25] for s in range(0, len(items), 25)]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listings", type=int, default=20_000)
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is missed")
    args = parser.parse_args()

    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"})
    moto_port = free_port()
    moto = start_moto("127.0.0.1", moto_port)
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{moto_port}"
    try:
        return run(args.listings, args.check)
    finally:
        moto.terminate()
        moto.wait(timeout=10)


def run(count: int, check: bool) -> int:
    from local_stack.resources import create_resources

    os.environ.update(create_resources())
    from chalicelib import storage
    from chalicelib.config import settings
    from chalicelib.listings.search import geo
    from chalicelib.listings.search.query import parse_search
    from chalicelib.listings.search.service import search_listings

    started = time.perf_counter()
    items = make_listings(count)
    load(items)
    print(f"loaded {count} ACTIVE listings over 4 categories and {len(CITIES)} cities in {time.perf_counter() - started:.1f} s")

    reads = Reads()
    storage.dynamodb().meta.events.register("after-call.dynamodb.Query", reads.hook)
    scan_started = time.perf_counter()
    scanned = sum(
        page.get("ScannedCount", 0)
        for page in storage.dynamodb().get_paginator("scan").paginate(TableName=settings().LISTINGS_TABLE, Select="COUNT")
    )
    scan_seconds = time.perf_counter() - scan_started

    berlin = next(c for c in CITIES if c[0] == "Berlin")
    in_category = sum(1 for i in items if i["categoryKey"] == "jobs")

    def inside(radius_km: float) -> int:
        return sum(
            1 for i in items if i["categoryKey"] == "jobs"
            and geo.haversine_km(berlin[2], berlin[3], float(i["meta"]["location_lat"]), float(i["meta"]["location_lng"])) <= radius_km
        )

    geo_params = {"category": "jobs", "meta.location_lat": str(berlin[2]), "meta.location_lng": str(berlin[3])}
    cases: list[tuple[str, dict[str, str], Callable[[], int]]] = [
        ("category", {"category": "jobs"}, lambda: in_category),
        ("category+meta", {"category": "jobs", "meta.employmentType": "full_time"}, lambda: in_category),
        ("category+geo 25km", {**geo_params, "radiusKm": "25"}, lambda: inside(25)),
        ("category+geo 200km", {**geo_params, "radiusKm": "200"}, lambda: inside(200)),
        ("q", {"q": "engineer"}, lambda: count),
        ("category+q", {"category": "jobs", "q": "engineer"}, lambda: in_category),
    ]
    print(f"\nbaseline full-table Scan: {scanned} items read in {scan_seconds * 1000:.0f} ms\n")
    print(f"{'search':<20} {'calls':>5} {'read':>7} {'matched':>8} {'relevant':>8} {'read/relevant':>13} {'read/table':>10} {'ms':>7}")
    worst_geo, worst_share, worst_category = 0.0, 0.0, 0.0
    failures = []
    for name, params, relevant_count in cases:
        reads.calls = reads.items = 0
        t0 = time.perf_counter()
        result = search_listings(parse_search(params))
        elapsed = (time.perf_counter() - t0) * 1000
        relevant = relevant_count()
        ratio = reads.items / max(relevant, 1)
        share = reads.items / scanned
        print(f"{name:<20} {reads.calls:>5} {reads.items:>7} {result.total:>8} {relevant:>8} {ratio:>13.2f} {share:>9.2%} {elapsed:>7.0f}")
        if name == "category+geo 25km":
            worst_geo, worst_share = max(worst_geo, ratio), max(worst_share, share)
            if result.total != relevant:
                failures.append(f"{name}: {result.total} results, {relevant} inside the circle")
        if name == "category":
            worst_category = ratio
            if reads.items != in_category:
                failures.append(f"category read {reads.items} items, the category has {in_category}")
    if worst_geo > GEO_READ_BUDGET:
        failures.append(f"geo 25 km read {worst_geo:.2f} x its circle (budget {GEO_READ_BUDGET})")
    if worst_share >= GEO_TABLE_SHARE_BUDGET:
        failures.append(f"geo 25 km read {worst_share:.2%} of the table (budget < {GEO_TABLE_SHARE_BUDGET:.0%})")
    for failure in failures:
        print(f"BUDGET MISSED: {failure}")
    print(
        f"\nsummary: geo25 read/inside {worst_geo:.2f} (budget <= {GEO_READ_BUDGET}), geo25 read/table {worst_share:.2%} "
        f"(budget < 5%), category read/category {worst_category:.2f} (budget 1.00) -> {'FAIL' if failures else 'OK'}"
    )
    return 1 if (failures and check) else 0


if __name__ == "__main__":
    sys.exit(main())
