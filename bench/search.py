"""Search read cost per page on realistic listings, loaded through the API and indexed live, before and after.

For each side, the baseline (``--baseline REV``, default :data:`BASELINE`: ``main`` before the one
search engine) and this tree, in one run: the tree's local stack is started behind the recording
proxy (:mod:`bench.stack`), the realistic corpus (:mod:`bench.corpus`: titles of 4-10 words,
descriptions of 30-150 Zipf-distributed words, skewed categories and cities) is loaded through the
public API (users, listings, the administrator's approvals) and indexed by the live indexer until
findable; then every shape of :func:`shapes` is requested over HTTP, one request at a time on the
quiet stack, and the proxy attributes to each request the DynamoDB calls it caused: **calls**,
**sequential round trips** (calls that overlap in time count as one: the reads of one parallel step;
each measured call waits :data:`LATENCY` in the proxy, a network's latency, so a step's calls
overlap however the API process's threads were scheduled), **items** read (a Query's
``ScannedCount``, the items of a BatchGetItem / GetItem) and **read units** (RCU as DynamoDB bills
them). The sizes of a side are loaded one after the other into the same stack (the second size adds
listings to the first). Each shape is requested once unmeasured (caches) and :data:`REPEAT` times
measured; the table shows the median of each figure except round trips, which shows the fewest: two
calls one after the other never overlap, so a load that sends a parallel step's calls apart can only
add round trips, never hide one, and the fewest of the repeats is the closest to the page's
sequential steps. **CPU ms** is the stack process's CPU time over the request (user + system, 10 ms
ticks, mean of the repeats): reported, never budgeted.

Budgets (this tree; ``--check`` exits 1 when one is missed):

* round trips per page at most :data:`ROUND_TRIPS_Q` for ``q`` with one or two words (and
  nothing else), :data:`ROUND_TRIPS_GEO` for geo shapes, :data:`ROUND_TRIPS_OTHER` for every other;
* items and read units flat: at the largest size at most :data:`FLAT` x the smallest's (plus
  :data:`FLAT_SLACK_ITEMS` items / :data:`FLAT_SLACK_RCU` RCU, so a one-item difference on a
  two-item page does not count as growth), per hit when the smallest size's page is short (its
  whole answer is less than a page: a read cost may grow with the answer, not with the data;
  :func:`flat_limit`).

Budgets today's engine misses are in :data:`PENDING`: printed as ``PENDING``, enforced only with
``--check --pending``; one met again prints ``NOW MET`` (remove it from :data:`PENDING`).

The baseline indexes a few listings a second and its embedded AWS grows by GBs with the data, so
its sizes are its own (``--baseline-sizes``, smaller by default) and labelled in the table; ``-``
where a side has no such size. ``--baseline ''`` measures this tree only.

Usage: ``python bench/search.py [--sizes 5000,20000] [--baseline-sizes 1000,2000] [--baseline REV]
[--check [--pending]]``; ``make bench`` runs smaller sizes (Makefile).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus
from bench.stack import BenchStack, budget_verdict, running_stack, tree
from local_stack.cities import CITIES

#: ``main`` before the one search engine.
BASELINE = "fe1e507"
SIZES = "5000,20000"
BASELINE_SIZES = "1000,2000"
PAGE_SIZE = 20
REPEAT = 5
#: Seconds each measured DynamoDB call waits in the recording proxy (:attr:`bench.proxy.Recorder.latency`),
#: the latency model of ``tests/integration/test_search_round_trips.py``.
LATENCY = 0.03
ROUND_TRIPS_Q = 4
ROUND_TRIPS_OTHER = 6
ROUND_TRIPS_GEO = 8
FLAT = 1.25
FLAT_SLACK_ITEMS = 2
FLAT_SLACK_RCU = 1.0
METRICS = ("hits", "calls", "round_trips", "items", "rcu", "cpu_ms")
HEADS = {"hits": "hits", "calls": "calls", "round_trips": "round trips", "items": "items", "rcu": "RCU", "cpu_ms": "CPU ms"}

#: Shapes whose round-trip budget this tree misses: none at the CI sizes (docs/benchmarks.md).
PENDING_ROUND_TRIPS: tuple[str, ...] = ()
#: Shapes whose items and read units both grow more than :data:`FLAT` from 100 to 300 listings: two
#: words walk their lists deeper as they grow (docs/search.md, "Costs").
PENDING_FLAT = ("q two common words",)
#: Shapes whose items (not read units) grow more than :data:`FLAT`: at 100 listings three of four
#: categories' stem lists are shorter than a first block (one word, its page 2); a narrow range that
#: matches nothing reads its buckets whole, and they grow with the data.
PENDING_FLAT_ITEMS = ("q one common word (sessions)", "q common page 2 (cursor)", "number range (narrow)")
#: Budgets this tree does not meet yet, as ``(shape, budget)`` with ``budget`` one of ``round trips``,
#: ``flat items``, ``flat RCU``: printed as PENDING, enforced with ``--check --pending``.
PENDING: frozenset[tuple[str, str]] = frozenset(
    {(shape, "round trips") for shape in PENDING_ROUND_TRIPS}
    | {(shape, budget) for shape in PENDING_FLAT for budget in ("flat items", "flat RCU")}
    | {(shape, "flat items") for shape in PENDING_FLAT_ITEMS})


@dataclass(frozen=True)
class Shape:
    """One query shape: its name, path, parameters, the round-trip budget's class (``q``, ``geo``
    or ``other``) and, for a cursor page, the parameters of the page before it."""

    name: str
    path: str
    params: dict[str, str]
    kind: str
    cursor: bool = False


def _typo(word: str) -> str:
    """``word`` with its second-to-last letter replaced (one substitution, not its first letters)."""
    i = len(word) - 2
    return word[:i] + ("a" if word[i] != "a" else "e") + word[i + 1 :]


def words() -> dict[str, str]:
    """The words the shapes ask for: a common one (Zipf rank >= 10), a second common one, a mid one
    (rank >= 300) and a rare one (rank >= 5,000), each of at least six letters."""
    vocabulary = corpus.vocabulary()

    def at(rank: int) -> str:
        return next(w for w in vocabulary[rank:] if len(w) >= 6)

    common = at(10)
    return {"common": common, "common2": next(w for w in vocabulary[vocabulary.index(common) + 1 :] if len(w) >= 6),
            "mid": at(300), "rare": at(5000)}


def shapes(listing_id: str) -> list[Shape]:
    """Every query shape measured (``listing_id``: the listing of the detail row)."""
    w = words()
    name, _, lat, lng = CITIES[0]
    here = {"meta.location_lat": f"{lat:.4f}", "meta.location_lng": f"{lng:.4f}"}
    s, p = "/v1/listings/search", "/v1/profiles/search"
    return [
        Shape(f"q one common word ({w['common']})", s, {"q": w["common"]}, "q"),
        Shape(f"q one mid word ({w['mid']})", s, {"q": w["mid"]}, "q"),
        Shape(f"q one rare word ({w['rare']})", s, {"q": w["rare"]}, "q"),
        Shape("q two common words", s, {"q": f"{w['common']} {w['common2']}"}, "q"),
        Shape("q prefix (4 letters)", s, {"q": w["common"][:4]}, "q"),
        Shape(f"q one typo ({_typo(w['common'])})", s, {"q": _typo(w["common"])}, "q"),
        Shape("q common page 2 (cursor)", s, {"q": w["common"]}, "q", cursor=True),
        Shape("q common sort=newest", s, {"q": w["common"], "sort": "newest"}, "other"),
        Shape("q common + category", s, {"q": w["common"], "category": "jobs"}, "other"),
        Shape("category page", s, {"category": "jobs"}, "other"),
        Shape("category page 2 (cursor)", s, {"category": "jobs"}, "other", cursor=True),
        Shape("category + role", s, {"category": "jobs", "role": "seeking"}, "other"),
        Shape("meta select", s, {"category": "jobs", "meta.employmentType": "contract"}, "other"),
        Shape("meta multiselect", s, {"category": "jobs", "meta.skills": "rust"}, "other"),
        Shape("number range (narrow)", s, {"category": "housing", "meta.rentMonthly_min": "1000",
                                           "meta.rentMonthly_max": "1050"}, "other"),
        Shape("number min alone", s, {"meta.salary_min": "140000"}, "other"),
        Shape(f"geo nearest ({name})", s, {"category": "housing", **here}, "geo"),
        Shape(f"geo 25 km ({name})", s, {"category": "jobs", **here, "radiusKm": "25"}, "geo"),
        Shape("geo nearest page 2 (cursor)", s, {"category": "housing", **here}, "geo", cursor=True),
        Shape("listing detail", f"/v1/listings/{listing_id}", {}, "other"),
        Shape(f"profile q ({w['common']})", p, {"q": w["common"]}, "other"),
        Shape("profile country + openToWork", p, {"country": "de", "openToWork": "true"}, "other"),
    ]


Figures = dict[str, float]


def flat_limit(small: Figures, large: Figures, metric: str, slack: float) -> float:
    """The most ``metric`` (items, read units) the larger size's page may cost: :data:`FLAT` x the
    smaller size's, plus ``slack``. When the smaller size's page holds fewer ``hits`` than the
    larger's (its whole answer is less than a page), its cost is taken per hit: what a page reads
    may grow with its answer, never with the data."""
    scale = large["hits"] / small["hits"] if 0 < small["hits"] < large["hits"] else 1.0
    return FLAT * small[metric] * scale + slack


def hits(body: object) -> int:
    """The results of a page (``listings`` or ``profiles``), 1 for any other answer (a listing's detail)."""
    if isinstance(body, dict):
        for name in ("listings", "profiles"):
            if isinstance(body.get(name), list):
                return len(body[name])
    return 1


def measure_shapes(stack: BenchStack, listing_id: str, key: str) -> dict[str, Figures]:
    """Every shape's median figures on the quiet stack (see the module's docstring)."""
    client = stack.client(key)
    stack.recorder.latency = LATENCY
    out: dict[str, Figures] = {}
    for shape in shapes(listing_id):
        params = {**shape.params, "pageSize": str(PAGE_SIZE)} if shape.path.endswith("search") else dict(shape.params)
        if shape.cursor:
            first = client.get(shape.path, params=params).json()
            if not first.get("nextCursor"):
                print(f"  {shape.name}: no second page", file=sys.stderr)
                continue
            params = {**params, "cursor": first["nextCursor"]}
        client.get(shape.path, params=params).raise_for_status()  # caches, imports: not measured
        runs = [stack.measure(client, shape.path, params) for _ in range(REPEAT)]
        out[shape.name] = {
            "hits": statistics.median(hits(r.response.json()) for r in runs),
            "calls": statistics.median(r.cost.calls for r in runs),
            "round_trips": min(r.cost.round_trips for r in runs),  # load adds, never hides (docstring)
            "items": statistics.median(r.cost.items for r in runs),
            "rcu": statistics.median(r.cost.rcu for r in runs),
            "cpu_ms": statistics.mean(r.cpu_ms for r in runs),
        }
    return out


@dataclass
class Side:
    """One tree's figures per size, and how long each size took to load."""

    label: str
    figures: dict[int, dict[str, Figures]]
    notes: list[str]


def measure_side(label: str, rev: str, sizes: list[int], largest: int) -> Side:
    """Start ``rev``'s stack (this tree when empty), load each size in turn and measure the shapes.

    The corpus is the first ``largest`` listings of :func:`bench.corpus.listings` (the same seed
    and the categories the stack serves: the same listings on both sides), of which each size loads
    its first ``size``."""
    side = Side(label, {}, [])
    with tree(rev) as root, running_stack(root, label.split()[0], log_name="search") as stack:
        started = time.monotonic()
        bodies = corpus.listings(largest, stack.admin().get("/v1/categories").json()["categories"])
        owners = corpus.create_users(stack, max(4, sizes[-1] // corpus.OWNERS_PER_LISTINGS))
        loaded: list[str] = []
        for size in sizes:
            batch = bodies[len(loaded) : size]
            ids = corpus.create_listings(stack, batch, owners)
            approving = time.monotonic()
            corpus.approve_all(stack, ids)
            indexing = time.monotonic()
            loaded += ids
            corpus.wait_findable(stack, corpus.category_counts(bodies[:size]))
            done = time.monotonic()
            note = (f"{label} at {size:,}: {len(batch):,} listings approved in {indexing - approving:.0f} s, findable "
                    f"{done - indexing:.0f} s later ({len(batch) / max(done - approving, 0.001):.1f} listings/s); "
                    f"embedded AWS {stack.aws_rss_mb():,.0f} MB; {done - started:.0f} s since start")
            print(note, file=sys.stderr)
            side.notes.append(note)
            jobs = next(i for i, b in zip(loaded, bodies, strict=False) if b["categoryKey"] == "jobs")
            side.figures[size] = measure_shapes(stack, jobs, owners[0][1])
    return side


def _cell(before: Figures | None, after: Figures | None, metric: str) -> str:
    def show(f: Figures | None) -> str:
        return "-" if f is None else f"{f[metric]:.1f}" if metric in ("rcu", "cpu_ms") else f"{f[metric]:g}"

    return f"{show(before)} → {show(after)}"


def print_table(before: Side | None, after: Side) -> None:
    """Markdown table: per shape and size, ``before → after`` of each figure."""
    sizes = sorted({*after.figures, *(before.figures if before else {})})
    names = list(dict.fromkeys(n for side in (before, after) if side for f in side.figures.values() for n in f))
    print("| shape | listings | " + " | ".join(HEADS[m] for m in METRICS) + " |")
    print("|---|---:|" + "---:|" * len(METRICS))
    for name in names:
        for size in sizes:
            b = before.figures.get(size, {}).get(name) if before else None
            a = after.figures.get(size, {}).get(name)
            if a is None and b is None:
                continue
            print(f"| {name} | {size:,} | " + " | ".join(_cell(b, a, m) for m in METRICS) + " |")


def checks(after: Side) -> list[tuple[str, str, str]]:
    """The budgets missed by ``after``, as ``(shape, budget, message)``."""
    missed: list[tuple[str, str, str]] = []
    kinds = {s.name: s.kind for s in shapes("lst")}
    limits = {"q": ROUND_TRIPS_Q, "geo": ROUND_TRIPS_GEO, "other": ROUND_TRIPS_OTHER}
    sizes = sorted(after.figures)
    for size in sizes:
        for name, figures in after.figures[size].items():
            limit = limits[kinds.get(name, "other")]
            if figures["round_trips"] > limit:
                missed.append((name, "round trips", f"{name} at {size:,}: {figures['round_trips']:g} round trips > {limit}"))
    if len(sizes) > 1:
        small, large = after.figures[sizes[0]], after.figures[sizes[-1]]
        for name in small.keys() & large.keys():
            for metric, slack, label in (("items", FLAT_SLACK_ITEMS, "flat items"), ("rcu", FLAT_SLACK_RCU, "flat RCU")):
                if large[name][metric] > (limit := flat_limit(small[name], large[name], metric, slack)):
                    missed.append((name, label, f"{name}: {metric} {small[name][metric]:g} at {sizes[0]:,} -> "
                                   f"{large[name][metric]:g} at {sizes[-1]:,} > {limit:.1f} ({FLAT} x, per hit when a "
                                   f"page is short, + {slack:g}; hits {small[name]['hits']:g} -> {large[name]['hits']:g})"))
    return missed


def _sizes(text: str) -> list[int]:
    return sorted(int(n) for n in text.split(",") if n.strip())


def main(argv: list[str] | None = None) -> int:
    """Measure both sides, print the table and the budgets; with ``--check`` return 1 when one is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default=SIZES, help="listings of this tree, comma separated (loaded in turn)")
    parser.add_argument("--baseline", default=BASELINE, help="the baseline commit ('' for none)")
    parser.add_argument("--baseline-sizes", default=BASELINE_SIZES, help="listings of the baseline, comma separated")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget not in PENDING is missed")
    parser.add_argument("--pending", action="store_true", help="with --check: the PENDING budgets too")
    args = parser.parse_args(argv)
    started = time.monotonic()
    sizes, baseline_sizes = _sizes(args.sizes), _sizes(args.baseline_sizes)
    largest = max([*sizes, *baseline_sizes])
    before = None
    if args.baseline and baseline_sizes:
        before = measure_side(f"baseline {args.baseline}", args.baseline, baseline_sizes, largest)
    after = measure_side("this tree", "", sizes, largest)
    print(f"\nper page (pageSize {PAGE_SIZE}), median of {REPEAT} (round trips: the fewest); before = "
          + (f"{args.baseline} at {', '.join(f'{n:,}' for n in baseline_sizes)} listings" if before else "not measured")
          + f", after = this tree at {', '.join(f'{n:,}' for n in sizes)} listings; same corpus, same run\n")
    print_table(before, after)
    print()
    for note in (before.notes if before else []) + after.notes:
        print(f"- {note}")
    print()
    missed = [((name, budget), message) for name, budget, message in checks(after)]
    failed = budget_verdict(missed, PENDING, args.pending, started)
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
