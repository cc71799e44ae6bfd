"""Search read cost per page at 5,000 and 20,000 realistic listings: the engine over an in-memory store.

``bench/search.py`` measures a page through the API, the live indexer and the embedded AWS, which
index about 1.5 listings a second on a 2-core machine: its sizes in ``make bench`` are 80 and 240,
and 20,000 would take hours. This benchmark asks the same engine the same listing shapes at the
issue's sizes in seconds: the realistic corpus (:func:`bench.corpus.listings`, the seed of
``bench/search.py``) is turned into listing records, filed by the index writer
(:func:`chalicelib.search.index.apply`, batches of :data:`BATCH`, as the live indexer files a
stream batch) into :class:`chalicelib.search.store.MemoryStore`, and every listing shape of
:func:`bench.search.shapes` is parsed by the API's own parser
(:func:`chalicelib.listings.search.query.parse_search`) and answered by
:func:`chalicelib.search.engine.search` with the listing index spec. A counting store counts
what the page read:

* **round trips**: per engine step (one parallel read of the store; the listings a step loads are
  read beside it) its calls in waves of :data:`chalicelib.search.store.READ_PARALLEL`, the
  threads :class:`~chalicelib.search.store.DynamoStore` sends them on: the sequential DynamoDB
  round trips of the page in production;
* **calls**: Queries (one per range) and BatchGetItem calls (100 keys each) of those steps;
* **items**: the entries, counters and stored documents the steps returned, and the listing
  records loaded;
* **write units per listing**: what DynamoDB bills the index writer's writes of the last
  :data:`TAIL` listings filed before each size (:class:`CountingStore`), the index at that size
  rather than a young one, whose new terms each cost a vocabulary item and a typo key. The live
  indexer's own writes beside the index writer's are not counted (docs/benchmarks.md).

Not counted, because the API adds them around the engine whatever the data: the viewer's block
list, the owners read with the listings, authentication. Read units are not modelled (item sizes
are DynamoDB's); ``bench/search.py`` bills them. On the same corpus at 100 and 300 listings (the
engine of ``c74b327``) the two count the same round trips for every listing shape but two common
words (3 through the API, 2 here), and items within the owners and the block list the API adds
(docs/benchmarks.md, "The engine at 5,000 and 20,000").

Budgets (``--check``): the round trips of ``bench/search.py`` (:data:`bench.search.ROUND_TRIPS_Q`
for ``q`` with one or two words, :data:`bench.search.ROUND_TRIPS_GEO` for geo,
:data:`bench.search.ROUND_TRIPS_OTHER` else) at every size, and items flat: at the largest size
at most :data:`bench.search.FLAT` x the smallest's plus :data:`bench.search.FLAT_SLACK_ITEMS`;
write units per listing at most ``2 x distinct stems + 20`` (:func:`bench.freshness.distinct_stems`).
Budgets the engine misses are in :data:`PENDING` (printed, enforced with ``--check --pending``).

Usage: ``python bench/search_model.py [--sizes 5000,20000] [--check [--pending]]`` (about a
minute at the default sizes on a 2-core machine).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import Stemmer

from bench import corpus, search
from bench.freshness import distinct_stems
from bench.proxy import item_size, write_units
from bench.stack import budget_verdict
from chalicelib.categories.models import CategoryList
from chalicelib.categories.registry import all_categories
from chalicelib.listings.search import spec as listing_spec
from chalicelib.listings.search.query import parse_search
from chalicelib.persistence.storage import to_item
from chalicelib.search import engine, index
from chalicelib.search.store import READ_PARALLEL, Item, Key, MemoryStore, Range, Slice, Store

SIZES = "5000,20000"
#: Listings per call of the index writer (a stream batch of the live indexer).
BATCH = 100
#: The listings filed last before each size whose write units are counted (the index at that size).
TAIL = 1000
#: Owners the listings are spread over.
OWNERS = 50
#: Budgets the engine misses at 5,000 and 20,000 listings, as ``(shape, budget)`` (docs/benchmarks.md,
#: "The engine at 5,000 and 20,000"): two common words walk their impact lists deeper as the lists
#: grow (items; reads that quadruple a list's depth keep the round trips in budget).
PENDING: frozenset[tuple[str, str]] = frozenset({("q two common words", "flat items")})


class CountingStore:
    """A :class:`~chalicelib.search.store.Store` that counts the round trips (``steps``), calls and
    items of the reads it passes to ``inner``, and the write units of its writes (``units``: what
    :class:`~chalicelib.search.store.DynamoStore` is billed for them, 1 per KB of the larger of
    the item's old and new image, at least 1, a failed conditional write included; AWS docs,
    "Item sizes and formats" and "Write request units")."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.steps = self.calls = self.items = self.units = 0

    def read(self, ranges: Sequence[Range], keys: Sequence[Key]) -> tuple[list[Slice], dict[Key, Item]]:
        """See :meth:`chalicelib.search.store.Store.read`; counts one step, its calls and its items."""
        slices, found = self.inner.read(ranges, keys)
        calls = len(ranges) + -(-len(set(keys)) // 100)
        self.steps += max(1, -(-calls // READ_PARALLEL))
        self.calls += calls
        self.items += sum(len(s.items) for s in slices) + len(found)
        return slices, found

    def _bill(self, key: Key, new: Item | None) -> None:
        old = self.inner.partitions.get(key[0], {}).get(key[1])
        self.units += write_units(max(item_size(to_item(old or {})), item_size(to_item(new or {}))))

    def write(self, puts: Sequence[Item], deletes: Sequence[Key]) -> None:
        """See :meth:`chalicelib.search.store.Store.write`; bills each put and delete."""
        for item in puts:
            self._bill((item["pk"], item["sk"]), item)
        for key in deletes:
            self._bill(key, None)
        self.inner.write(puts, deletes)

    def add(self, changes: Sequence[tuple[Key, int]]) -> list[int]:
        """See :meth:`chalicelib.search.store.Store.add`; bills each counter's update."""
        for key, _ in changes:
            self._bill(key, {"pk": key[0], "sk": key[1], "n": 0})
        return self.inner.add(changes)

    def put_newer(self, items: Sequence[Item]) -> list[bool]:
        """See :meth:`chalicelib.search.store.Store.put_newer`; bills each conditional put."""
        for item in items:
            self._bill((item["pk"], item["sk"]), item)
        return self.inner.put_newer(items)

    def write_and_add(self, puts: Sequence[Item], deletes: Sequence[Key], changes: Sequence[tuple[Key, int]]) -> list[int]:
        """See :meth:`chalicelib.search.store.Store.write_and_add`; bills as :meth:`write` and :meth:`add`."""
        self.write(puts, deletes)
        return self.add(changes)


@dataclasses.dataclass
class Model:
    """The listing records by id, the index over them and the records each search loaded."""

    records: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    store: MemoryStore = dataclasses.field(default_factory=MemoryStore)
    loaded: int = 0

    def load(self, entries: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        """The spec's loader: the records of ``entries`` (id -> entry), counted."""
        self.loaded += len(entries)
        return {i: self.records[i] for i in entries if i in self.records}

    def grow(self, spec: index.IndexSpec, bodies: Sequence[Mapping[str, Any]], store: Store | None = None) -> list[str]:
        """File ``bodies`` (``POST /v1/listings`` bodies) as ACTIVE listings, newer than those before,
        :data:`BATCH` at a time, through ``store`` (a counting wrapper of :attr:`store`; default
        :attr:`store`); returns their ids in order."""
        changes, ids = [], []
        for body in bodies:
            n = len(self.records)
            record = {"listingId": f"L{n:06d}", "version": 1, "status": "ACTIVE", "categoryKey": body["categoryKey"],
                      "roleKey": body["roleKey"], "ownerId": f"owner{n % OWNERS}", "meta": body["meta"],
                      "createdAt": f"2026-01-01T{n // 3_600_000_000:02d}:00:00.{n % 1_000_000:06d}Z"}
            self.records[record["listingId"]] = record
            ids.append(record["listingId"])
            doc = spec.document(record)
            if doc is not None:
                changes.append(index.Change(doc.id, doc.version, doc))
        for start in range(0, len(changes), BATCH):
            index.apply(spec, store or self.store, changes[start:start + BATCH])
        return ids


def categories() -> list[dict[str, Any]]:
    """Every category as ``GET /v1/categories`` serves it."""
    return CategoryList(categories=list(all_categories().values())).model_dump(mode="json", by_alias=True)["categories"]


def ask(model: Model, spec: index.IndexSpec, shape: search.Shape) -> search.Figures:
    """One page of ``shape`` (the second page for a cursor shape), with what it read."""
    query = listing_spec.engine_query(parse_search(dict(shape.params)))
    after, skipped = None, 0
    if shape.cursor:
        first = engine.search(spec, model.store, query, search.PAGE_SIZE)
        after, skipped = (first.hits[-1].key if first.hits else None), len(first.hits)
    counting, model.loaded = CountingStore(model.store), 0
    page = engine.search(spec, counting, query, search.PAGE_SIZE, after=after, skipped=skipped)
    return {"hits": len(page.hits), "round_trips": counting.steps, "calls": counting.calls,
            "items": counting.items + model.loaded}


def file_counted(model: Model, spec: index.IndexSpec, bodies: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """File ``bodies``, the last :data:`TAIL` of them counted; returns their mean write units per
    listing and its budget, ``2 x distinct stems + 20`` (:func:`bench.freshness.distinct_stems`)."""
    tail = bodies[-TAIL:]
    model.grow(spec, bodies[:len(bodies) - len(tail)])
    counting = CountingStore(model.store)
    model.grow(spec, tail, counting)
    stemmer = Stemmer.Stemmer("english")
    budget = sum(2 * distinct_stems(dict(b), stemmer) + 20 for b in tail) / max(1, len(tail))
    return counting.units / max(1, len(tail)), budget


def checks(figures: Mapping[int, Mapping[str, search.Figures]], kinds: Mapping[str, str],
           writes: Mapping[int, tuple[float, float]]) -> list[tuple[tuple[str, str], str]]:
    """The budgets missed, as ``((shape, budget), message)``; ``writes``: size -> (write units per
    listing, budget)."""
    limits = {"q": search.ROUND_TRIPS_Q, "geo": search.ROUND_TRIPS_GEO, "other": search.ROUND_TRIPS_OTHER}
    missed = [(("index writes", "write units"), f"index writes at {size:,}: {units:.0f} write units per listing > budget {budget:.0f}")
              for size, (units, budget) in writes.items() if units > budget]
    sizes = sorted(figures)
    for size in sizes:
        for name, f in figures[size].items():
            if f["round_trips"] > limits[kinds[name]]:
                missed.append(((name, "round trips"), f"{name} at {size:,}: {f['round_trips']:g} round trips > {limits[kinds[name]]}"))
    small, large = figures[sizes[0]], figures[sizes[-1]]
    for name in small:
        limit = search.flat_limit(small[name], large[name], "items", search.FLAT_SLACK_ITEMS)
        if len(sizes) > 1 and large[name]["items"] > limit:
            missed.append(((name, "flat items"), f"{name}: items {small[name]['items']:g} at {sizes[0]:,} -> "
                           f"{large[name]['items']:g} at {sizes[-1]:,} > {limit:.1f} ({search.FLAT} x, per hit when "
                           f"a page is short, + {search.FLAT_SLACK_ITEMS}; hits {small[name]['hits']:g} -> {large[name]['hits']:g})"))
    return missed


def main(argv: list[str] | None = None) -> int:
    """Measure every listing shape at each size, print the table; with ``--check`` return 1 when a budget is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default=SIZES, help="listings, comma separated (filed in turn)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget not in PENDING is missed")
    parser.add_argument("--pending", action="store_true", help="with --check: the PENDING budgets too")
    args = parser.parse_args(argv)
    started = time.monotonic()
    sizes = sorted(int(n) for n in args.sizes.split(",") if n.strip())
    bodies = corpus.listings(sizes[-1], categories())
    model = Model()
    spec = dataclasses.replace(listing_spec.spec(), load=model.load)
    listing_shapes = [s for s in search.shapes("unused") if s.path == "/v1/listings/search"]
    figures: dict[int, dict[str, search.Figures]] = {}
    writes: dict[int, tuple[float, float]] = {}
    for size in sizes:
        writes[size] = file_counted(model, spec, bodies[len(model.records):size])
        figures[size] = {shape.name: ask(model, spec, shape) for shape in listing_shapes}
        print(f"{size:,} listings filed and asked {time.monotonic() - started:.0f} s after the start", file=sys.stderr)
    print(f"\nper page (pageSize {search.PAGE_SIZE}): the engine over an in-memory store; round trips / calls / items\n")
    print("| shape | " + " | ".join(f"{n:,} listings" for n in sizes) + " | items ratio | hits |")
    print("|---|" + "---:|" * (len(sizes) + 2))
    for shape in listing_shapes:
        row = [figures[n][shape.name] for n in sizes]
        ratio = row[-1]["items"] / max(1.0, row[0]["items"])
        print(f"| {shape.name} | " + " | ".join(f"{f['round_trips']:g} / {f['calls']:g} / {f['items']:g}" for f in row)
              + f" | {ratio:.2f} | " + " / ".join(f"{f['hits']:g}" for f in row) + " |")
    print()
    print(f"write units per listing, the last {TAIL:,} filed before each size / budget (2 x distinct stems + 20): "
          + ", ".join(f"{units:.0f} / {budget:.0f} at {size:,}" for size, (units, budget) in writes.items()) + "\n")
    failed = budget_verdict(checks(figures, {s.name: s.kind for s in listing_shapes}, writes), PENDING, args.pending, started)
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
