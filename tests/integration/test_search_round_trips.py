"""Sequential DynamoDB round trips, calls and items of one search page per query shape (in-process moto).

Calls that overlap in time (the engine sends the reads of a step together) form one round trip;
the budgets are the engine's: at most 4 round trips for ``q`` with one or two words, 6 for any
other shape without a geo filter, 8 with one; items read without a geo filter grow less than the
data (at most 2x when it triples; the smaller set is partly read whole).
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.listings import repository
from chalicelib.listings.search.query import parse_search
from chalicelib.listings.search.service import search_listings
from chalicelib.listings.status import Transition
from chalicelib.persistence import storage
from chalicelib.search import analysis
from tests.integration.aws_session import Resources, reset
from tests.integration.helpers import counting_reads, index_listings, table_items

# Indexing the two corpora through the writer takes minutes on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(1200)

WORDS = ["python", "rust", "engineer", "senior", "remote", "backend", "cloud", "data", "platform", "mentor"]
SHAPES = {
    "q one word": ("category=jobs&q=python", 4),
    "q two words": ("category=jobs&q=python engineer", 4),
    "q prefix": ("category=jobs&q=engin", 4),
    "q typo": ("category=jobs&q=pyhton", 4),
    "q without category": ("q=python", 4),
    "q newest": ("category=jobs&q=python&sort=newest", 6),
    "category": ("category=jobs", 6),
    "category and role": ("category=jobs&role=hiring", 6),
    "meta filter": ("category=jobs&meta.employmentType=part_time", 6),
    "range": ("category=jobs&meta.salary_min=50000&meta.salary_max=60000", 6),
    "geo": ("category=jobs&meta.location_lat=52.52&meta.location_lng=13.405", 8),
    "geo with q": ("category=jobs&q=python&meta.location_lat=52.52&meta.location_lng=13.405&radiusKm=300", 8),
}


#: Seconds each call waits before moto answers it (in-process moto answers too fast for sent-together
#: calls to overlap reliably).
LATENCY = 0.03


@dataclass
class Calls:
    """DynamoDB calls as ``(start, end)`` times (perf_counter seconds)."""

    spans: list[tuple[float, float]] = field(default_factory=list)

    def round_trips(self) -> int:
        """Groups of calls that overlap in time: the sequential round trips."""
        trips, reach = 0, -1.0
        for start, end in sorted(self.spans):
            if start > reach:
                trips += 1
            reach = max(reach, end)
        return trips


@contextmanager
def timed_calls() -> Iterator[Calls]:
    calls, local, lock = Calls(), threading.local(), threading.Lock()

    def before(**_: Any) -> None:
        local.start = time.perf_counter()
        time.sleep(LATENCY)  # a network's latency: calls sent together overlap, calls in sequence cannot

    def after(**_: Any) -> None:
        with lock:
            calls.spans.append((local.start, time.perf_counter()))

    events = storage.dynamodb().meta.events
    events.register("before-call.dynamodb", before)
    events.register("after-call.dynamodb", after)
    try:
        yield calls
    finally:
        events.unregister("before-call.dynamodb", before)
        events.unregister("after-call.dynamodb", after)


def _load(count: int, rng: random.Random) -> None:
    """``count`` ACTIVE jobs with titles of 4-8 and descriptions of 30 Zipf-distributed words."""
    run = uuid.uuid4().hex[:6]
    vocabulary = WORDS + [f"w{n}x" for n in range(400)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]  # Zipf's law, s = 1
    for n in range(count):
        words = rng.choices(vocabulary, weights, k=38)
        title = " ".join(words[: rng.randint(4, 8)])
        now = f"2026-06-01T00:{n // 60:02d}:{n % 60:02d}.000Z"
        meta = {"title": title, "description": " ".join(words[8:]), "employmentType": ["full_time", "part_time"][n % 2],
                "salary": str(40000 + 1000 * (n % 40)), "location": "Berlin", "location_lat": str(52.0 + (n % 50) / 50),
                "location_lng": str(13.0 + (n % 30) / 30)}
        item = {"listingId": f"lst_{run}{n:04d}", "ownerId": "usr_rt", "categoryKey": "jobs", "roleKey": "hiring",
                "title": title, "meta": meta, "channels": [], "webhookIds": [], "status": "PENDING", "version": 1,
                "searchText": " ".join(dict.fromkeys(words)), "createdAt": now, "updatedAt": now}
        repository.create(item, [])
        repository.transition(item, Transition.APPROVE, now)
    assert index_listings() == {"batchItemFailures": []}


def _measure(query: str) -> tuple[int, int, int]:
    params = dict(part.split("=", 1) for part in query.split("&"))
    with timed_calls() as calls, counting_reads() as reads:
        page = search_listings(parse_search({**params, "pageSize": "20"}))
    assert page.listings
    return calls.round_trips(), len(calls.spans), reads.items


def test_every_shape_keeps_its_round_trips_and_reads_flat_items(aws: dict[str, str], aws_resources: Resources) -> None:
    reset(aws_resources)
    measured: dict[str, list[tuple[int, int, int]]] = {shape: [] for shape in SHAPES}
    rng = random.Random(38)
    for count in (150, 300):  # 150 listings, then 450
        _load(count, rng)
        for shape, (query, _) in SHAPES.items():
            measured[shape].append(_measure(query))
    for shape, rows in measured.items():  # the table docs/search.md quotes (pytest -s)
        print(f"{shape:20} " + "  ".join(f"trips {t} calls {c} items {i}" for t, c, i in rows))
    for shape, (_, budget) in SHAPES.items():
        (trips_small, _, small), (trips_large, _, large) = measured[shape]
        assert max(trips_small, trips_large) <= budget, (shape, measured[shape])
        if not shape.startswith("geo"):  # geo reads whole cell blocks: docs/search.md, "Costs"
            assert large <= 2 * small, (shape, measured[shape])  # not 3x for 3x the data


def _write_units(call: dict[str, Any]) -> int:
    """Write units of one request: 1 per KB of each item put (its JSON, a little over DynamoDB's
    size), 1 per delete and per counter update."""
    def units(item: dict[str, Any]) -> int:
        return max(1, -(-len(json.dumps(item)) // 1024))

    if "RequestItems" in call:
        return sum(units(r["PutRequest"]["Item"]) if "PutRequest" in r else 1 for rs in call["RequestItems"].values() for r in rs)
    return units(call["Item"]) if "Item" in call else 1


def test_an_approved_listing_writes_at_most_two_units_per_stem_and_twenty(aws: dict[str, str], aws_resources: Resources) -> None:
    reset(aws_resources)
    rng = random.Random(7)
    _load(40, rng)  # a settled vocabulary: the listing below uses known words only
    writes: list[dict[str, Any]] = []
    events = storage.dynamodb().meta.events

    def record(params: dict[str, Any], **_: Any) -> None:
        writes.append(json.loads(params.get("body") or b"{}"))

    run = uuid.uuid4().hex[:6]
    known = sorted({w for listing in table_items(settings().LISTINGS_TABLE) for w in listing["searchText"].split()})
    words = rng.sample(known, 30)  # a 30-word description of words the category already holds
    now = "2026-06-02T00:00:00.000Z"
    meta = {"title": "senior python engineer remote", "description": " ".join(words), "employmentType": "full_time",
            "salary": "52000", "location": "Berlin", "location_lat": "52.5", "location_lng": "13.4"}
    item = {"listingId": f"lst_{run}w", "ownerId": "usr_rt", "categoryKey": "jobs", "roleKey": "hiring", "title": meta["title"],
            "meta": meta, "channels": [], "webhookIds": [], "status": "PENDING", "version": 1,
            "searchText": " ".join(dict.fromkeys(words)), "createdAt": now, "updatedAt": now}
    repository.create(item, [])
    repository.transition(item, Transition.APPROVE, now)
    for operation in ("BatchWriteItem", "PutItem", "UpdateItem"):
        events.register(f"before-call.dynamodb.{operation}", record)
    try:
        assert index_listings() == {"batchItemFailures": []}
    finally:
        for operation in ("BatchWriteItem", "PutItem", "UpdateItem"):
            events.unregister(f"before-call.dynamodb.{operation}", record)
    stems = len(set(analysis.terms_of(f"{meta['title']} {meta['description']} {meta['location']}", "english")))
    units = sum(_write_units(call) for call in writes)
    print(f"distinct stems {stems}, write units {units}, budget {2 * stems + 20}")
    assert units <= 2 * stems + 20
