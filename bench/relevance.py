"""Relevance: our search against SQLite FTS5 on the judged set and the scale set, before and after, in one run.

For each side, the baseline (``--baseline REV``, default :data:`BASELINE`: ``main`` before the
one search engine) and this tree: the tree's local stack starts behind the recording proxy
(:mod:`bench.stack`); owners create, and the administrator approves through the review queue,
in waves (each approved and findable before the next is created; :func:`load_wave`):

1. the 315 listings of the **judged set** (``bench/relevance_set.json``, built by
   ``bench/relevance_set.py``) with the first wave of the **scale set** (``bench/relevance_scale.py``:
   strong matches of five words, the exact listing of a unique word);
2. the scale set's newer weak matches (``--newer``, default 420 listings mentioning each word once)
   and the one-edit neighbours of two unique words;
3. the second unique word's exact listing (after its neighbours);

about 820 listings. Each ``--totals`` larger than that tops the stack up with realistic listings
(:mod:`bench.corpus`) and asks again. Every query goes through ``GET /v1/listings/search?q=...&pageSize=20``
(relevance order, the default with ``q``); the proxy attributes its DynamoDB items and round
trips (reported). The same documents (title, description without markup, place) go into an
SQLite FTS5 table with ``tokenize='porter unicode61 remove_diacritics 2'``, queried with every
word required and the last one a prefix (``"w1" "w2"*``, as our last word is), ordered by ``bm25()``.

Metrics, per query class (classes of ``bench/relevance_set.py`` and ``bench/relevance_scale.py``):
nDCG@10 with gains ``2^grade - 1`` (K. Järvelin, J. Kekäläinen, "Cumulated gain-based evaluation
of IR techniques", ACM TOIS 2002) and recall@20 capped at the query's relevant count (relevant =
grade >= 1; ``hits / min(20, relevant)``, the "capped recall" of the BEIR benchmark). Queries
nothing answers (class ``none``) are left out.

Budgets (this tree, every size; ``--check`` exits 1 when one is missed): per class, nDCG@10 at
least FTS5's; recall@20 of each typo class (:data:`TYPO_CLASSES`) at least
:data:`TYPO_RECALL_BUDGET`. Each typo query is also asked spelt right (class ``<class> spelt
right``, no budget, :func:`with_spelt`): a typo class's recall can reach that of its words
spelt right, no more. Budgets today's engine misses are in :data:`PENDING`, each with its
size (printed as ``PENDING``, enforced with ``--check --pending``).

``--in-memory`` measures this tree alone without a stack: the same waves are filed by the index
writer into the in-memory store of ``bench/search_model.py`` and every query is parsed by the
API's parser and asked of the engine with the listing spec (items and round trips as that
benchmark counts them), so that ``--totals 20000`` takes about a minute where the stack's
indexer needs hours.

Usage: ``python bench/relevance.py [--totals 20000] [--newer 420] [--baseline REV]
[--baseline-totals N] [--in-memory] [--check [--pending]]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# EMF metric lines (chalicelib.telemetry.metrics) would drown the table: the stacks and workers started here inherit this.
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from bench import corpus, relevance_scale, search_model  # noqa: E402
from bench.stack import BenchStack, budget_verdict, running_stack, tree  # noqa: E402
from chalicelib.listings.search import spec as listing_spec  # noqa: E402
from chalicelib.listings.search.query import parse_search  # noqa: E402
from chalicelib.search import engine  # noqa: E402
from chalicelib.search.index import IndexSpec  # noqa: E402

BASELINE = "fe1e507"
#: Totals to top up to after the sets (none by default: the full-size command adds 20000).
TOTALS = ""
#: Budgets this tree misses yet, ``<metric> <class> at <listings>`` (docs/benchmarks.md, "Relevance on
#: the engine" and "Relevance at 20,000"), at the ``make bench`` sizes (497 listings through the API
#: and in memory; 20,000 in memory): prefix a little under FTS5, at 607 as at 497 (made-up listings
#: with ``kuber...`` in a short title outrank judged ones that have it in the description, one ties a judged title
#: and goes first as the newer; FTS5 normalizes by the whole document's length; the field weights
#: that close it cost the typo recalls at 20,000: docs/benchmarks.md, "Field weights cannot close
#: prefix without costing the typo recalls"); at 20,000, the typo recalls (realistic listings that
#: hold the corrected word, judged 0, fill the first 20: typo1 and typo2 reach their queries spelt
#: right, 0.703 and 0.544; docs/benchmarks.md, "Typo queries spelt right").
PENDING: frozenset[str] = frozenset({
    "nDCG prefix at 497", "recall typo1 at 20,000", "recall typo2 at 20,000",
})
SET = Path(__file__).resolve().parent / "relevance_set.json"
PAGE_SIZE = 20
NDCG_AT = 10
RECALL_AT = 20
TYPO_RECALL_BUDGET = 0.8
TYPO_CLASSES = ("typo1", "typo2", "scale-typo")
#: Suffix of the id and class of a typo query asked spelt right (:func:`with_spelt`).
SPELT = " spelt right"
OWNERS = 8
_TAG = re.compile(r"<[^>]+>")


@dataclass
class Result:
    """One engine's answer to one query: the listing keys in rank order, and what it read (ours)."""

    keys: list[str]
    items_read: int = 0
    round_trips: int = 0


@dataclass
class Scores:
    ndcg: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    returned: list[int] = field(default_factory=list)


def ndcg(keys: list[str], grades: dict[str, int], at: int = NDCG_AT) -> float:
    """nDCG@at with gains ``2^g - 1`` and ``log2(rank + 1)`` discounts (Järvelin & Kekäläinen 2002)."""
    def dcg(gains: list[int]) -> float:
        return sum((2**g - 1) / math.log2(rank + 2) for rank, g in enumerate(gains[:at]))

    ideal = dcg(sorted(grades.values(), reverse=True))
    return dcg([grades.get(k, 0) for k in keys]) / ideal if ideal else 0.0


def recall(keys: list[str], grades: dict[str, int], at: int = RECALL_AT) -> float:
    """Capped recall@at: relevant listings (grade >= 1) in the first ``at`` / min(at, relevant)."""
    relevant = {k for k, g in grades.items() if g >= 1}
    return len(relevant & set(keys[:at])) / min(at, len(relevant)) if relevant else 0.0


# --- loading through the API and asking it ------------------------------------------------------------

def _post_body(listing: dict[str, Any]) -> dict[str, Any]:
    return {"categoryKey": listing["categoryKey"], "roleKey": listing["roleKey"], "channels": ["telegram"], "meta": listing["meta"]}


def load_wave(stack: BenchStack, owners: list[tuple[str, str]], listings: list[dict[str, Any]], ids: dict[str, str],
              expected: Counter[str]) -> None:
    """Create and approve ``listings`` through the API, then wait until the indexer made them findable
    (:func:`bench.corpus.wait_findable`); records listing id -> set key in ``ids``."""
    created = corpus.create_listings(stack, [_post_body(listing) for listing in listings], owners)
    corpus.approve_all(stack, created)
    ids.update(zip(created, (str(listing["key"]) for listing in listings), strict=True))
    expected.update(listing["categoryKey"] for listing in listings)
    corpus.wait_findable(stack, dict(expected))


def ours(stack: BenchStack, key: str, queries: list[dict[str, Any]], ids: dict[str, str]) -> dict[str, Result]:
    """Every query over HTTP (``q``, ``pageSize`` 20), with the items the proxy attributes to it."""
    client = stack.client(key)
    results: dict[str, Result] = {}
    for query in queries:
        measured = stack.measure(client, "/v1/listings/search", {"q": query["q"], "pageSize": str(PAGE_SIZE)})
        keys = [ids.get(str(listing["id"]), "?") for listing in measured.response.json()["listings"]]
        results[query["id"]] = Result(keys, measured.cost.items, measured.cost.round_trips)
    return results


@dataclass
class Side:
    """One tree's results per size (listings loaded)."""

    label: str
    results: dict[int, dict[str, Result]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def waves(data: dict[str, Any], scale: list[list[dict[str, Any]]], totals: list[int],
          categories: list[dict[str, Any]]) -> Iterator[tuple[list[dict[str, Any]], bool]]:
    """The listings to load in order, wave by wave, each with whether the queries are asked once it
    is findable: the judged set with the scale set's first wave, the scale set's other waves (asked
    after the last), then for each total larger than what was loaded, realistic listings up to it
    (asked after each)."""
    sets = [[*data["listings"], *scale[0]], *scale[1:]]
    for n, wave in enumerate(sets):
        yield wave, n == len(sets) - 1
    size = sum(len(wave) for wave in sets)
    for total in totals:
        if total > size:
            extra = corpus.listings(total - size, categories, seed=3840)
            yield [{"key": f"generic-{size + n}", **body} for n, body in enumerate(extra)], True
            size = total


def measure_side(label: str, rev: str, totals: list[int], newer: int) -> tuple[Side, dict[int, list[dict[str, Any]]],
                                                                               list[dict[str, Any]], dict[str, dict[str, int]]]:
    """Load the judged and the scale sets (and, for each larger total, realistic listings up to it) into
    ``rev``'s stack and ask every query at each size; returns the side, the documents per size, the
    queries and the judgments."""
    data = json.loads(SET.read_text(encoding="utf-8"))
    side = Side(label)
    documents: dict[int, list[dict[str, Any]]] = {}
    with tree(rev) as root, running_stack(root, label.split()[0], log_name="relevance") as stack:
        started = time.monotonic()
        categories = stack.admin().get("/v1/categories").json()["categories"]
        scale, scale_queries, scale_judgments = relevance_scale.build(categories, newer)
        queries, judgments = with_spelt(data["queries"] + scale_queries, {**data["judgments"], **scale_judgments})
        owners = corpus.create_users(stack, OWNERS)
        ids: dict[str, str] = {}
        expected: Counter[str] = Counter()
        loaded: list[dict[str, Any]] = []
        for wave, ask in waves(data, scale, totals, categories):
            load_wave(stack, owners, wave, ids, expected)
            loaded += wave
            if ask:
                side.notes.append(f"{label}: {len(loaded):,} listings findable {time.monotonic() - started:.0f} s after "
                                  f"the start; embedded AWS {stack.aws_rss_mb():,.0f} MB")
                print(side.notes[-1], file=sys.stderr)
                side.results[len(loaded)] = ours(stack, owners[0][1], queries, ids)
                documents[len(loaded)] = list(loaded)
    return side, documents, queries, judgments


def measure_in_memory(totals: list[int], newer: int) -> tuple[Side, dict[int, list[dict[str, Any]]],
                                                              list[dict[str, Any]], dict[str, dict[str, int]]]:
    """:func:`measure_side` without the stack: the same waves filed by the index writer into the
    in-memory store of ``bench/search_model.py`` and every query asked of the engine with the
    listing spec (no API, no proxy: items and round trips as that benchmark counts them), so
    that 20,000 listings take a minute, not hours."""
    data = json.loads(SET.read_text(encoding="utf-8"))
    side = Side("this tree, in memory")
    documents: dict[int, list[dict[str, Any]]] = {}
    categories = search_model.categories()
    scale, scale_queries, scale_judgments = relevance_scale.build(categories, newer)
    queries, judgments = with_spelt(data["queries"] + scale_queries, {**data["judgments"], **scale_judgments})
    model = search_model.Model()
    spec = dataclasses.replace(listing_spec.spec(), load=model.load)
    keys: dict[str, str] = {}
    loaded: list[dict[str, Any]] = []
    for wave, ask in waves(data, scale, totals, categories):
        keys.update(zip(model.grow(spec, wave), (str(listing["key"]) for listing in wave), strict=True))
        loaded += wave
        if ask:
            side.results[len(loaded)] = {query["id"]: _in_memory(model, spec, query["q"], keys) for query in queries}
            documents[len(loaded)] = list(loaded)
    return side, documents, queries, judgments


def _in_memory(model: search_model.Model, spec: IndexSpec, q: str, keys: dict[str, str]) -> Result:
    """One query (``q``, relevance order, a page of :data:`PAGE_SIZE`) asked of the engine over the model."""
    counting, model.loaded = search_model.CountingStore(model.store), 0
    page = engine.search(spec, counting, listing_spec.engine_query(parse_search({"q": q})), PAGE_SIZE)
    return Result([keys[hit.id] for hit in page.hits], counting.items + model.loaded, counting.steps)


def fts5(queries: list[dict[str, Any]], listings: list[dict[str, Any]]) -> dict[str, Result]:
    """The reference engine: SQLite FTS5, Porter + unicode61 (diacritics removed), ranked by ``bm25()``."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, title, description, location, "
               "tokenize='porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?)", [
        (listing["key"], listing["meta"]["title"], _TAG.sub(" ", listing["meta"].get("description", "")),
         listing["meta"].get("location", ""))
        for listing in listings
    ])
    results: dict[str, Result] = {}
    for query in queries:
        words = re.findall(r"\w+", query["q"])
        match = " ".join(f'"{w}"' for w in words[:-1]) + (f' "{words[-1]}"*' if words else "")
        rows = db.execute("SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match.strip(), RECALL_AT))
        results[query["id"]] = Result([str(r[0]) for r in rows])
    return results


# --- report ------------------------------------------------------------------------------------------

def evaluate_engine(results: dict[str, Result], queries: list[dict[str, Any]],
                    judgments: dict[str, dict[str, int]]) -> dict[str, Scores]:
    """Scores per class (and ``all``: every class with relevant listings)."""
    by_class: dict[str, Scores] = {}
    for query in queries:
        grades, keys = judgments[query["id"]], results[query["id"]].keys
        reference = query["kind"].endswith(SPELT)  # a query spelt right is not in "all"
        for name in (query["kind"],) if reference else (query["kind"], "all"):
            scores = by_class.setdefault(name, Scores())
            if name == "all" and not grades:
                continue
            scores.returned.append(len(keys))
            if grades:
                scores.ndcg.append(ndcg(keys, grades))
                scores.recall.append(recall(keys, grades))
    typo = Scores()
    for name in TYPO_CLASSES:
        typo.ndcg += by_class.get(name, Scores()).ndcg
        typo.recall += by_class.get(name, Scores()).recall
    by_class["typo (1+2)"] = typo
    return by_class


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def with_spelt(queries: list[dict[str, Any]], judgments: dict[str, dict[str, int]]
               ) -> tuple[list[dict[str, Any]], dict[str, dict[str, int]]]:
    """The queries and judgments, and for each typo query that names the words it misspells
    (``spelt``) the same query spelt right, with the same judgments, in the class
    ``<class> spelt right`` (:data:`SPELT`): the recall a typo query can reach when its correction
    ranks as its word does. These classes have no budget and are not in ``all``."""
    spelt = [{"id": f"{q['id']}{SPELT}", "kind": f"{q['kind']}{SPELT}", "q": q["spelt"]} for q in queries if q.get("spelt")]
    return queries + spelt, {**judgments, **{q["id"]: judgments[q["id"].removesuffix(SPELT)] for q in spelt}}


def _classes(queries: list[dict[str, Any]], judgments: dict[str, dict[str, int]]) -> list[str]:
    """The query classes with relevant listings, in the order of the queries."""
    return [*dict.fromkeys(q["kind"] for q in queries if judgments[q["id"]]), "all"]


def report(before: Side | None, after: Side, fts: dict[int, dict[str, Result]], queries: list[dict[str, Any]],
           judgments: dict[str, dict[str, int]]) -> list[tuple[str, str]]:
    """Print the per-class table per size; return the budgets ``after`` misses as ``(name, message)``."""
    missed: list[tuple[str, str]] = []
    classes = _classes(queries, judgments)
    print("| class | queries | listings | nDCG@10 before → after | FTS5 | recall@20 before → after | FTS5 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    sizes = sorted({*after.results, *(before.results if before else {})})
    for size in sizes:
        b = evaluate_engine(before.results[size], queries, judgments) if before and size in before.results else None
        a = evaluate_engine(after.results[size], queries, judgments) if size in after.results else None
        f = evaluate_engine(fts[size], queries, judgments)
        for name in classes:
            def show(scores: dict[str, Scores] | None, metric: str, name: str = name) -> str:
                return "-" if scores is None else f"{_mean(getattr(scores[name], metric)):.3f}"

            count = len(f[name].ndcg)
            print(f"| {name} | {count} | {size:,} | {show(b, 'ndcg')} → {show(a, 'ndcg')} | {show(f, 'ndcg')} | "
                  f"{show(b, 'recall')} → {show(a, 'recall')} | {show(f, 'recall')} |")
            if a is None or name.endswith(SPELT):
                continue
            if _mean(a[name].ndcg) + 1e-9 < _mean(f[name].ndcg):
                missed.append((f"nDCG {name} at {size:,}", f"{name} at {size:,}: nDCG@10 {_mean(a[name].ndcg):.3f} < FTS5 "
                                                f"{_mean(f[name].ndcg):.3f}"))
            if name in TYPO_CLASSES and _mean(a[name].recall) < TYPO_RECALL_BUDGET:
                missed.append((f"recall {name} at {size:,}", f"{name} at {size:,}: recall@20 {_mean(a[name].recall):.3f} < "
                                                  f"{TYPO_RECALL_BUDGET}"))
    print()
    sides = [side for side in (before, after) if side is not None]
    for side in sides:
        for size, results in side.results.items():
            reads = [float(r.items_read) for r in results.values()]
            trips = [float(r.round_trips) for r in results.values()]
            print(f"- {side.label} at {size:,}: items read per query max {max(reads):.0f}, mean {_mean(reads):.0f}; "
                  f"round trips max {max(trips):.0f}, mean {_mean(trips):.1f}")
    for side in sides:
        for note in side.notes:
            print(f"- {note}")
    return missed


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; with ``--check`` return 1 when a budget not in PENDING is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--totals", default=TOTALS, help="listings to top up to after the sets, comma separated ('' for the sets alone)")
    parser.add_argument("--newer", type=int, default=relevance_scale.NEWER, help="newer weak matches of the scale set")
    parser.add_argument("--baseline", default=BASELINE, help="the baseline commit ('' for none)")
    parser.add_argument("--baseline-totals", default="", help="the baseline's totals (default: the sets alone)")
    parser.add_argument("--in-memory", action="store_true",
                        help="this tree's engine over an in-memory store, no stack (bench/search_model.py); no baseline")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget not in PENDING is missed")
    parser.add_argument("--pending", action="store_true", help="with --check: the PENDING budgets too")
    args = parser.parse_args(argv)
    started = time.monotonic()

    def totals(text: str) -> list[int]:
        return sorted(int(n) for n in text.split(",") if n.strip())

    before = None
    if args.in_memory:
        after, documents, queries, judgments = measure_in_memory(totals(args.totals), args.newer)
    else:
        if args.baseline:
            before, _, _, _ = measure_side(f"baseline {args.baseline}", args.baseline, totals(args.baseline_totals), args.newer)
        after, documents, queries, judgments = measure_side("this tree", "", totals(args.totals), args.newer)
    fts = {size: fts5(queries, docs) for size, docs in documents.items()}
    print(f"\nrelevance per class: before = {args.baseline if before else 'not measured'}, after = this tree, FTS5 = SQLite FTS5 "
          "(porter, bm25) on the same listings; same run\n")
    measured = tuple(f" at {size:,}" for size in after.results)  # the PENDING budgets of the sizes measured
    failed = budget_verdict(report(before, after, fts, queries, judgments), {p for p in PENDING if p.endswith(measured)},
                            args.pending, started)
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
