"""Saved-search percolator benchmark: saved-search items read per approved listing.

Stores N saved searches (default: 5,000 and 20,000, each size in a fresh in-process moto)
spread over the four categories, 50 real cities and a Zipf-distributed vocabulary: searches
by category + role + a 10-50 km circle (some with a word), by category + word, by word only,
by category + select filter, by a 150-600 km circle, and a few very broad ones (a category
alone, a whole role). Then it approves 200 new listings through the real activation path
(``listings.repository.activate``: the listing and its ``listing.activated`` event in one
transaction) and runs the percolator on each, counting from the DynamoDB responses (a
botocore hook) the saved-search items read: posting items (index partitions) and saved
searches.

Budget, per approved listing (``--check`` exits 1 when one is missed)::

    items read <= 3 x matches + cells + index partitions touched + 20

where *cells* are the geohash cells the listing looked up and *partitions touched* the
posting items that existed. It must hold at every size, and the reads not explained by
matches and partitions ("waste") must stay flat from 5,000 to 20,000 saved searches (mean
waste at the largest size at most 1.5 x that at the smallest, plus 2).

Seeding: all but the last :data:`SERVICE_SAVED` searches of a size are bulk-loaded with
BatchWriteItem in exactly the posting layout the service writes (same keys, entries and
shards); the last ones are saved through ``service.create_saved_search`` itself. moto
snapshots every table a TransactWriteItems touches (a deep copy, O(table)); the benchmark's moto
runs as the local stack's (``local_stack.moto_server.behave_as_aws``: an undo log instead of the
snapshot, a Query reading its partition), and it fails if any
transaction is cancelled, since none should be.

Then, in a fresh moto with no saved search, it approves :data:`EMPTY_LISTINGS` listings and
checks that each percolation makes at most :data:`EMPTY_CALLS` DynamoDB call (the read of the
per-scope counts).

Besides the items, each row shows the posting entries tested in memory (the prefilter runs the
search's filter function on the query embedded in the entry: CPU, no reads).

Usage: ``python bench/saved_searches.py [--sizes 5000,20000] [--listings 200] [--check] [--summary-only]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# bench/ holds requests.py (a benchmark), which would shadow the HTTP library moto imports.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

for _name, _value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}.items():
    os.environ.setdefault(_name, _value)
os.environ.pop("AWS_ENDPOINT_URL", None)

from moto import mock_aws  # noqa: E402

from local_stack.cities import CITIES  # noqa: E402
from local_stack.moto_server import behave_as_aws  # noqa: E402

# EMF metric lines (chalicelib.telemetry.metrics) would drown the table: the stacks and workers started here inherit this.
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

#: Saved searches per size created through the service's own transactions.
SERVICE_SAVED = 25
#: Budget: items read <= MATCH_FACTOR x matches + cells + partitions + SLACK.
MATCH_FACTOR = 3
SLACK = 20
#: Approvals percolated with no saved search stored, and the DynamoDB calls each may make (the scope counts).
EMPTY_LISTINGS = 20
EMPTY_CALLS = 1
#: Flatness: mean waste at the largest size <= FLAT_FACTOR x mean waste at the smallest + FLAT_SLACK.
FLAT_FACTOR = 1.5
FLAT_SLACK = 2.0

#: Real words first (the most frequent in listings), then pronounceable made-up words: a
#: vocabulary of :data:`VOCABULARY_SIZE` whose 3-letter prefixes spread like a language's.
REAL_WORDS = [
    "python", "rust", "golang", "java", "typescript", "react", "kubernetes", "terraform", "data", "science",
    "machine", "learning", "product", "design", "marketing", "sales", "finance", "legal", "startup", "founder",
    "career", "leadership", "coaching", "interview", "portfolio", "backend", "frontend", "fullstack", "mobile",
    "android", "ios", "devops", "security", "cloud", "analytics", "statistics", "research", "writing",
    "english", "spanish", "german", "french", "portuguese", "climate", "health", "fintech", "edtech", "saas",
    "consumer", "hardware", "robotics", "biotech", "energy", "logistics", "retail", "apartment", "studio",
    "garden", "balcony", "parking", "furnished", "quiet", "sunny", "central", "modern", "spacious", "cozy",
    "renovated", "shared", "mentor", "mentee", "remote", "hybrid", "senior", "junior", "lead", "principal",
    "staff", "intern", "graduate", "manager", "director", "architect",
]
VOCABULARY_SIZE = 3000
#: Listing words are Zipf-distributed (weight 1 / rank); saved searches name words from rank
#: :data:`SEARCH_WORDS_FROM` on (people save searches for specific words, not "the").
SEARCH_WORDS_FROM = 10



@contextmanager
def fresh_moto() -> Iterator[None]:
    """An in-process moto that behaves as AWS does (local_stack's settings), with every table and
    queue created and the product's settings and clients built afresh for it."""
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage
    from local_stack.resources import create_resources

    behave_as_aws()
    with mock_aws():
        os.environ.update(create_resources())
        settings.cache_clear()
        storage.client.cache_clear()
        yield

def vocabulary(seed: int) -> list[str]:
    """:data:`REAL_WORDS` then made-up words of 2-4 consonant-vowel syllables (deterministic)."""
    rng = random.Random(seed)
    words = list(REAL_WORDS)
    seen = set(words)
    while len(words) < VOCABULARY_SIZE:
        word = "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(rng.choice([2, 3, 4])))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


@dataclass
class Reads:
    """Items and keys read from the saved-search tables, filled by a botocore hook."""

    tables: dict[str, str]
    postings: int = 0
    searches: int = 0
    keys: int = 0
    cancelled: int = 0
    calls: int = 0

    def after_call(self, http_response: Any, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        self.calls += 1
        if model.name == "GetItem" and "postingKey" in (parsed.get("Item") or {}):  # the scope counts
            self.postings += 1
        if model.name == "BatchGetItem":
            responses = parsed.get("Responses") or {}
            self.postings += len(responses.get(self.tables["postings"], []))
            self.searches += len(responses.get(self.tables["searches"], []))
        if "CancellationReasons" in parsed or (parsed.get("Error") or {}).get("Code") == "TransactionCanceledException":
            self.cancelled += 1


class Words:
    """Draws words: Zipf over the whole vocabulary for listings, uniform past the head for searches."""

    def __init__(self, seed: int) -> None:
        self.words = vocabulary(seed)
        self.weights = [1.0 / (rank + 1) for rank in range(len(self.words))]

    def listing_word(self, rng: random.Random) -> str:
        return rng.choices(self.words, cum_weights=None, weights=self.weights)[0]

    def search_word(self, rng: random.Random) -> str:
        return rng.choice(self.words[SEARCH_WORDS_FROM:])


def _jitter(rng: random.Random, lat: float, lng: float, km: float) -> tuple[float, float]:
    return lat + rng.gauss(0, km / 111.2), lng + rng.gauss(0, km / 80.0)


def make_queries(count: int, seed: int) -> list[dict[str, str]]:
    """``count`` saved-search queries (search parameters), deterministic for ``seed``."""
    from chalicelib.categories.registry import all_categories

    rng = random.Random(seed)
    words = Words(seed)
    categories = list(all_categories().values())
    queries: list[dict[str, str]] = []
    for _ in range(count):
        category = rng.choice(categories)
        role = rng.choice(category.roles).key
        _, _, lat, lng = rng.choice(CITIES)
        clat, clng = _jitter(rng, lat, lng, 5)
        circle = {"meta.location_lat": f"{clat:.4f}", "meta.location_lng": f"{clng:.4f}"}
        kind = rng.random()
        if kind < 0.45:  # category + role near a city, half of them with a word
            query = {"category": category.key, "role": role, **circle, "radiusKm": str(rng.choice([10, 25, 50]))}
            if rng.random() < 0.5:
                query["q"] = words.search_word(rng)
        elif kind < 0.65:  # category + word
            query = {"category": category.key, "q": words.search_word(rng)}
        elif kind < 0.80:  # word(s) only, some as a prefix
            terms = [words.search_word(rng) for _ in range(rng.choice([1, 1, 2]))]
            query = {"q": " ".join(t if rng.random() < 0.8 else t[: max(3, len(t) - 2)] for t in terms)}
        elif kind < 0.97:  # category + a select filter + a word
            selects = [f for f in category.fields if f.type.value == "select" and f.filterable]
            select = rng.choice(selects)
            query = {"category": category.key, f"meta.{select.key}": rng.choice(sorted(select.option_keys())),
                     "q": words.search_word(rng)}
        elif kind < 0.998:  # a wide circle: one category and role, 150-600 km
            query = {"category": category.key, "role": role, **circle, "radiusKm": str(rng.choice([150, 300, 600]))}
        else:  # very broad: a whole category, or a whole role
            query = {"category": category.key} if rng.random() < 0.5 else {"category": category.key, "role": role}
        queries.append(query)
    return queries


def make_listings(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` PENDING listing items (valid meta, coordinates, searchText) of 40 owners."""
    from chalicelib.categories.registry import all_categories
    from chalicelib.kernel import clock
    from chalicelib.listings.service import search_text

    rng = random.Random(seed)
    words = Words(seed - 1)
    categories = list(all_categories().values())
    items = []
    for i in range(count):
        category = rng.choice(categories)
        role = rng.choice(category.roles).key
        name, _, lat, lng = rng.choice(CITIES)
        plat, plng = _jitter(rng, lat, lng, 8)
        title = f"{words.listing_word(rng).title()} {words.listing_word(rng)} {role}"
        meta = {"title": title, "description": " ".join(words.listing_word(rng) for _ in range(12)), "location": name,
                "location_lat": f"{plat:.5f}", "location_lng": f"{plng:.5f}"}
        for field in category.fields:
            if field.type.value == "select" and role in field.roles:
                meta[field.key] = rng.choice(sorted(field.option_keys()))
        now = clock.iso()
        items.append({
            "listingId": f"lst_bench{i:05d}", "ownerId": f"usr_lister{i % 40:02d}", "categoryKey": category.key,
            "roleKey": role, "title": title, "meta": meta, "channels": ["telegram"], "webhookIds": [], "status": "PENDING",
            "version": 1, "searchText": search_text(category, meta), "createdAt": now, "updatedAt": now,
        })
    return items


def bulk_load(queries: list[dict[str, str]]) -> None:
    """Write saved searches, owner counters, posting shards and the scope counts as the service lays them out."""
    from chalicelib.kernel import clock
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage
    from chalicelib.saved_searches import postings, repository
    from chalicelib.saved_searches.query import parsed

    searches: list[dict[str, Any]] = []
    entries: dict[str, list[tuple[str, str]]] = defaultdict(list)
    counters: dict[str, int] = defaultdict(int)
    scopes: dict[str, int] = defaultdict(int)
    now = clock.iso()
    for i, query in enumerate(queries):
        owner = f"usr_saver{i // 40:05d}"
        search_id = f"ss_bench{i:06d}"
        parsed_query = parsed(query)
        encoded = postings.entry_of(query, owner).encode()
        keys = postings.keys_of(parsed_query)
        shard_keys = []
        for key in keys:
            shard = len(entries[key]) // repository.SHARD_CAPACITY
            entries[key].append((search_id, encoded))
            shard_keys.append(repository.shard_key(key, shard))
        counters[owner] += 1
        scopes[postings.scope_of(keys[0])] += 1
        searches.append({"ownerId": owner, "savedSearchId": search_id, "name": f"bench {i}", "query": query,
                         "alerts": True, "createdAt": now, "postings": shard_keys})
    searches += [{"ownerId": o, "savedSearchId": repository.COUNTER, "n": n} for o, n in counters.items()]
    posting_items: list[dict[str, Any]] = [
        {"postingKey": repository.SCOPES, **{repository.SCOPE_PREFIX + scope: n for scope, n in scopes.items()}}
    ]
    for key, listed in entries.items():
        chunks = [listed[s : s + repository.SHARD_CAPACITY] for s in range(0, len(listed), repository.SHARD_CAPACITY)]
        for shard, chunk in enumerate(chunks):
            item: dict[str, Any] = {"postingKey": repository.shard_key(key, shard), "n": len(chunk)}
            item.update({repository.ENTRY_PREFIX + sid: text for sid, text in chunk})
            if shard == 0 and len(chunks) > 1:
                item["spill"] = set(range(1, len(chunks)))
            posting_items.append(item)
    client = storage.dynamodb()
    for table, items in ((settings().SAVED_SEARCHES_TABLE, searches), (settings().PERCOLATOR_TABLE, posting_items)):
        for start in range(0, len(items), 25):
            request = {table: [{"PutRequest": {"Item": storage.to_item(i)}} for i in items[start : start + 25]]}
            while request:
                request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


@dataclass
class Row:
    """One approved listing's figures."""

    listing: str
    cells: int
    keys: int
    partitions: int
    entries: int
    searches: int
    matches: int

    @property
    def items(self) -> int:
        return self.partitions + self.searches

    @property
    def budget(self) -> int:
        return MATCH_FACTOR * self.matches + self.cells + self.partitions + SLACK

    @property
    def waste(self) -> int:
        return self.items - self.matches - self.partitions


def run_size(size: int, listing_count: int, seed: int) -> tuple[list[Row], dict[str, float]]:
    """Seed ``size`` saved searches in a fresh moto, approve ``listing_count`` listings, return the rows."""
    from chalicelib.auth.service import Caller
    from chalicelib.kernel import clock
    from chalicelib.kernel.config import settings
    from chalicelib.listings import repository as listings
    from chalicelib.listings.status import Transition
    from chalicelib.persistence import storage
    from chalicelib.saved_searches import percolator, service
    from chalicelib.saved_searches.models import SavedSearchCreate

    timings: dict[str, float] = {}
    with fresh_moto():
        queries = make_queries(size, seed)
        started = time.perf_counter()
        bulk_load(queries[: size - SERVICE_SAVED])
        for i, query in enumerate(queries[size - SERVICE_SAVED :]):
            service.create_saved_search(Caller(f"usr_direct{i // 40:03d}"), SavedSearchCreate(query=query))
        timings["seed s"] = time.perf_counter() - started
        listings_ = make_listings(listing_count, seed + 1)
        for item in listings_:
            storage.put(settings().LISTINGS_TABLE, item)
        reads = Reads({"postings": settings().PERCOLATOR_TABLE, "searches": settings().SAVED_SEARCHES_TABLE})
        storage.dynamodb().meta.events.register("after-call.dynamodb", reads.after_call)
        rows = []
        started = time.perf_counter()
        for item in listings_:
            activated_at = clock.iso()
            written = listings.transition(item, Transition.APPROVE, activated_at, version=1)
            before = (reads.postings, reads.searches)
            # the version the activation wrote, as its listing.activated event carries it
            report = percolator.percolate(item["listingId"], int(written["version"]), activated_at)
            rows.append(Row(item["listingId"], report.cells, report.keys, reads.postings - before[0], report.entries,
                            reads.searches - before[1], report.matches))
        timings["percolate s"] = time.perf_counter() - started
        if reads.cancelled:
            raise SystemExit(f"{reads.cancelled} transaction(s) cancelled: the benchmark's moto has no rollback")
        storage.client.cache_clear()
    return rows, timings


def run_empty(listing_count: int, seed: int) -> tuple[list[int], list[int]]:
    """Approve ``listing_count`` listings in a fresh moto without any saved search; the DynamoDB
    calls and saved-search items each percolation made."""
    from chalicelib.kernel import clock
    from chalicelib.kernel.config import settings
    from chalicelib.listings import repository as listings
    from chalicelib.listings.status import Transition
    from chalicelib.persistence import storage
    from chalicelib.saved_searches import percolator

    with fresh_moto():
        listings_ = make_listings(listing_count, seed)
        for item in listings_:
            storage.put(settings().LISTINGS_TABLE, item)
        reads = Reads({"postings": settings().PERCOLATOR_TABLE, "searches": settings().SAVED_SEARCHES_TABLE})
        storage.dynamodb().meta.events.register("after-call.dynamodb", reads.after_call)
        calls, items = [], []
        for item in listings_:
            activated_at = clock.iso()
            written = listings.transition(item, Transition.APPROVE, activated_at, version=1)
            before = (reads.calls, reads.postings + reads.searches)
            percolator.percolate(item["listingId"], int(written["version"]), activated_at)
            calls.append(reads.calls - before[0])
            items.append(reads.postings + reads.searches - before[1])
        storage.client.cache_clear()
    return calls, items


def _table(headers: list[str], lines: list[list[Any]]) -> str:
    widths = [max(len(str(x)) for x in [h, *(line[i] for line in lines)]) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    out += ["  ".join(str(x).rjust(w) for x, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def measure_size(size: int, listings: int, seed: int, summary_only: bool) -> tuple[list[Any], float, list[str]]:
    """Percolate ``listings`` approvals against ``size`` saved searches; print the per-listing rows
    (unless ``summary_only``) and return the summary line, the mean waste and the budgets missed."""
    rows, timings = run_size(size, listings, seed)
    if not summary_only:
        print(f"\n{size} saved searches, per approved listing:")
        print(_table(["listing", "cells", "keys", "partitions", "entries", "searches read", "items read", "matches", "budget"],
                     [[r.listing, r.cells, r.keys, r.partitions, r.entries, r.searches, r.items, r.matches, r.budget]
                      for r in rows]))
    over = [r for r in rows if r.items > r.budget]
    failures = [f"{size}: {r.listing} read {r.items} items > budget {r.budget}" for r in over]
    if not any(r.matches for r in rows):  # a budget met by matching nothing measures nothing
        failures.insert(0, f"{size}: no approved listing matched any saved search")
    waste = statistics.fmean(r.waste for r in rows)
    summary = [
        size, len(rows), f"{statistics.fmean(r.matches for r in rows):.1f}", max(r.matches for r in rows),
        f"{statistics.fmean(r.partitions for r in rows):.1f}", f"{statistics.fmean(r.entries for r in rows):.0f}",
        f"{statistics.fmean(r.items for r in rows):.1f}",
        max(r.items for r in rows), f"{waste:.2f}", f"{max(r.items / r.budget for r in rows):.2f}",
        len(over), f"{timings['seed s']:.0f}", f"{timings['percolate s']:.0f}",
    ]
    return summary, waste, failures


def flatness(waste_means: dict[int, float]) -> list[str]:
    """Print whether the mean waste at the largest size stays within :data:`FLAT_FACTOR` of the
    smallest's (plus :data:`FLAT_SLACK`); the budget missed, if it is."""
    smallest, largest = min(waste_means), max(waste_means)
    if largest == smallest:
        return []
    limit = FLAT_FACTOR * waste_means[smallest] + FLAT_SLACK
    flat = waste_means[largest] <= limit
    print(f"flat: waste mean {waste_means[largest]:.2f} at {largest} vs {waste_means[smallest]:.2f} at {smallest} "
          f"(limit {limit:.2f}): {'ok' if flat else 'NOT FLAT'}")
    return [] if flat else [f"waste grows from {smallest} to {largest} saved searches"]


def main(argv: list[str]) -> int:
    """Run the benchmark; returns the exit status (1 with ``--check`` when a budget is missed)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="5000,20000", help="saved-search counts, comma separated")
    parser.add_argument("--listings", type=int, default=200)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is missed")
    parser.add_argument("--summary-only", action="store_true", help="leave out the per-listing rows")
    args = parser.parse_args(argv)
    failures: list[str] = []
    summary: list[list[Any]] = []
    waste_means: dict[int, float] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        line, waste_means[size], missed = measure_size(size, args.listings, args.seed, args.summary_only)
        summary.append(line)
        failures += missed
    print("\nSaved-search percolator: saved-search items read per approved listing")
    print(f"budget per listing: items read <= {MATCH_FACTOR} x matches + cells + partitions touched + {SLACK}")
    print(_table(["saved searches", "listings", "matches mean", "max", "partitions mean", "entries tested mean",
                  "items read mean", "max",
                  "waste mean", "max items/budget", "over budget", "seed s", "percolate s"], summary))
    failures += flatness(waste_means)
    calls, items = run_empty(EMPTY_LISTINGS, args.seed + 2)
    print(f"\nno saved search: {len(calls)} approvals, DynamoDB calls per percolation max {max(calls)} "
          f"(budget {EMPTY_CALLS}), saved-search items read max {max(items)}")
    if max(calls) > EMPTY_CALLS:
        failures.append(f"a percolation with no saved search made {max(calls)} calls > {EMPTY_CALLS}")
    for failure in failures[:20]:
        print("FAIL", failure)
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
