"""Sequential DynamoDB round trips, calls and items of one search page per query shape (in-process moto),
and the write units of indexing one listing.

Calls that overlap in time (the engine sends the reads of a step together) form one round trip;
the budgets are the engine's: at most 4 round trips for ``q`` with one or two words, 6 for any
other shape without a geo filter, 8 with one; items read without a geo filter grow less than the
data (at most 2x when it triples; the smaller set is partly read whole).

The shape tests (this file's and ``test_profile_round_trips.py``'s) measure the tables of
docs/search.md, "Costs", and run on request only (:data:`cost_tables`): on moto as it ships every
Query sorts the whole table it reads, so at 300 listings one run takes minutes. The same budgets
hold in CI on the local stack, with realistic listings loaded through the API:
``bench/search.py --check`` (``make bench``).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
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
from tests.integration.helpers import counting_reads, index_listings, table_items, writes_one_at_a_time

# Indexing the two corpora through the writer takes minutes on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(1200)

#: Marks a shape test that measures a cost table of docs/search.md: it runs only with
#: ``SEARCH_COST_TABLES=1`` (``SEARCH_COST_TABLES=1 pytest -s -n 0 <file>`` prints the table).
cost_tables = pytest.mark.skipif(
    not os.environ.get("SEARCH_COST_TABLES"),
    reason="measures docs/search.md's cost tables (SEARCH_COST_TABLES=1); CI enforces the budgets with bench/search.py --check",
)

WORDS = ["python", "rust", "engineer", "senior", "remote", "backend", "cloud", "data", "platform", "mentor"]
#: Round trips allowed per page, by query shape: ``q`` with one or two words, other shapes
#: without a geo filter, shapes with one.
ROUND_TRIPS_Q, ROUND_TRIPS_OTHER, ROUND_TRIPS_GEO = 4, 6, 8
Q_SHAPES = {
    "q one word": "category=jobs&q=python",
    "q two words": "category=jobs&q=python engineer",
    "q prefix": "category=jobs&q=engin",
    "q typo": "category=jobs&q=pyhton",
    "q two typos": "category=jobs&q=platfromms",
    "q without category": "q=python",
}
OTHER_SHAPES = {
    "q newest": "category=jobs&q=python&sort=newest",
    "category": "category=jobs",
    "category and role": "category=jobs&role=hiring",
    "meta filter": "category=jobs&meta.employmentType=part_time",
    "range": "category=jobs&meta.salary_min=50000&meta.salary_max=60000",
}
GEO_SHAPES = {
    "geo": "category=jobs&meta.location_lat=52.52&meta.location_lng=13.405",
    "geo with q": "category=jobs&q=python&meta.location_lat=52.52&meta.location_lng=13.405&radiusKm=300",
}
#: shape -> (query, round-trip budget)
SHAPES = {shape: (query, budget) for shapes, budget in ((Q_SHAPES, ROUND_TRIPS_Q), (OTHER_SHAPES, ROUND_TRIPS_OTHER),
                                                        (GEO_SHAPES, ROUND_TRIPS_GEO)) for shape, query in shapes.items()}


#: Listings added before each measurement: 100, then 300 in all (three times the data).
LOADS = (100, 200)

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
    """``count`` ACTIVE jobs with titles of 4-8 and descriptions of 30 Zipf-distributed words,
    created and approved by the repository, each transaction's writes applied one at a time
    (:func:`tests.integration.helpers.writes_one_at_a_time`), then indexed from the stream."""
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
        with writes_one_at_a_time():
            repository.create(item, [])
            repository.transition(item, Transition.APPROVE, now)
    assert index_listings() == {"batchItemFailures": []}


def _measure(query: str) -> tuple[int, int, int]:
    params = dict(part.split("=", 1) for part in query.split("&"))
    with timed_calls() as calls, counting_reads() as reads:
        page = search_listings(parse_search({**params, "pageSize": "20"}))
    assert page.listings
    return calls.round_trips(), len(calls.spans), reads.items


def measure_shapes(
    resources: Resources, loads: tuple[int, ...], load: Callable[[int, random.Random], None], shapes: dict[str, Any],
    measure: Callable[[Any], tuple[int, int, int]],
) -> dict[str, list[tuple[int, int, int]]]:
    """On emptied tables, ``load(count, rng)`` each of ``loads`` in turn (seeded), and after each
    ``measure`` every shape's parameters (``shapes``: name -> (parameters, budget)); prints the
    table the docs quote (``pytest -s``) and returns ``{shape: [(round trips, calls, items) per load]}``."""
    reset(resources)
    measured: dict[str, list[tuple[int, int, int]]] = {shape: [] for shape in shapes}
    rng = random.Random(38)
    for count in loads:
        load(count, rng)
        for shape, (params, _) in shapes.items():
            measured[shape].append(measure(params))
    for shape, rows in measured.items():
        print(f"{shape:22} " + "  ".join(f"trips {t} calls {c} items {i}" for t, c, i in rows))
    return measured


@cost_tables
def test_every_shape_keeps_its_round_trips_and_reads_flat_items(aws: dict[str, str], aws_resources: Resources) -> None:
    measured = measure_shapes(aws_resources, LOADS, _load, SHAPES, _measure)
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
    with writes_one_at_a_time():  # the listing's own transactions are not under test here: its indexing is
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
