"""Search freshness under bulk approvals of realistic listings: how long until an approved listing is findable.

For each side, the baseline (``--baseline REV``, default :data:`BASELINE`) and this tree, in one
run: the tree's local stack starts behind the recording proxy (:mod:`bench.stack`), owners create
``--listings`` realistic listings (:mod:`bench.corpus`) through ``POST /v1/listings`` (not timed),
then the administrator approves them through the review queue as fast as the API takes them
(four administrators: claims of 10, one decision each) while the live indexer indexes them.

Every :data:`SAMPLE_EVERY`-th listing is a job offer carrying a word of its own in its title
(``zq`` + two letters) and a salary no other listing has; a poller thread asks, every
:data:`POLL_SECONDS`, for the oldest approved samples not found yet (at most :data:`CHECKS` of
each kind per round, oldest first, stopping at the first not found: the stream applies
approvals in order, so a newer sample found late by that is a latency overstated, never
understated), whether ``q=<its word>`` returns it and whether the filter
``category=jobs&meta.salary_min=<its salary>&meta.salary_max=<its salary>`` does. A sample's
latency is the time from sending its approval until the first answer that returned it.

Figures per side: approvals/s the API took; p50 / p99 of both latencies; **indexed listings/s**:
the listings over the time from the first approval until the indexer is done: the last DynamoDB
call through the proxy (or the last sample found, if later) once every sample was found both ways
and then no call came for ten seconds (that quiet period only confirms the end; it is not counted); **SearchIndex WCU per
listing**: the write units the proxy billed to the SearchIndex table and its indexes from the
first approval until then, per listing, against the budget ``2 x distinct stems + 20`` (distinct
Snowball English stems of the listing's title, description text and place, the mean over the
listings). With ``--cap-seconds`` reached before the indexer is done, the side reports what it
reached: the samples found, and for the rest a latency of at least the cap (``>``); its indexed
listings/s and WCU per listing count what the indexer did by the cap (bounds from below, ``>=``).

Budgets (this tree; ``--check`` exits 1 when one is missed): p99 of both latencies at most
:data:`P99_SECONDS`; indexed listings/s at least :data:`THROUGHPUT`; SearchIndex WCU per listing
within the budget above. Budgets today's engine misses are in :data:`PENDING`, the write units
with the size (printed as ``PENDING``, enforced with ``--check --pending``).

Usage: ``python bench/freshness.py [--listings 2000] [--baseline-listings 200] [--baseline REV]
[--cap-seconds S] [--check [--pending]]``.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import Stemmer

from bench import corpus
from bench.proxy import wait_quiet
from bench.stack import QUIET_SECONDS, BenchStack, budget_verdict, running_stack, tree

BASELINE = "fe1e507"
LISTINGS = 2000
BASELINE_LISTINGS = 200
CAP_SECONDS = 1800.0
SAMPLE_EVERY = 10
#: Salaries of the samples: above every other listing's (bench/corpus.py's range ends at 150,000).
SAMPLE_SALARY = 500_000
POLL_SECONDS = 0.1
CHECKS = 4
P99_SECONDS = 5.0
THROUGHPUT = 50.0
#: Budgets this tree misses yet, by name (``p99 q``, ``p99 filter``, ``throughput``, ``write units at
#: <listings>``): both latencies and the throughput at every size; the write units of a young index,
#: at the ``make bench`` size (100 listings, most of whose terms are new to their category; met at
#: 2,000: docs/benchmarks.md, "Freshness at 2,000").
PENDING: frozenset[str] = frozenset({"p99 q", "p99 filter", "throughput", "write units at 100"})
_WORD = re.compile(r"[^\W\d_]+")
_TAG = re.compile(r"<[^>]+>")


def token(n: int) -> str:
    """The own word of sample ``n`` (``zq`` + two letters)."""
    k = n // SAMPLE_EVERY
    if k >= 26 * 26:
        raise ValueError(f"at most {26 * 26 * SAMPLE_EVERY} listings")
    return "zq" + chr(ord("a") + k // 26) + chr(ord("a") + k % 26)


def bodies(count: int, categories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The corpus (:func:`bench.corpus.listings`, seed 2000) with every :data:`SAMPLE_EVERY`-th
    listing a job offer carrying its own word and salary."""
    out = corpus.listings(count, categories, seed=2000)
    jobs = next(c for c in categories if c["key"] == "jobs")
    words = corpus.Zipf(corpus.vocabulary())
    for n in range(0, count, SAMPLE_EVERY):
        rng = random.Random(n)
        body = corpus.listing_body(rng, words, jobs)
        while body["roleKey"] != "hiring":
            body = corpus.listing_body(rng, words, jobs)
        body["meta"]["title"] += f" {token(n)}"
        body["meta"]["salary"] = str(SAMPLE_SALARY + n)
        out[n] = body
    return out


def distinct_stems(body: dict[str, Any], stemmer: Any) -> int:
    """Distinct Snowball English stems of a listing's title, description text and place."""
    meta = body["meta"]
    text = f"{meta.get('title', '')} {_TAG.sub(' ', meta.get('description', ''))} {meta.get('location', '')}"
    return len(set(stemmer.stemWords(_WORD.findall(text.lower()))))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("inf")


@dataclass
class Result:
    """One side's measurement (latencies in seconds; ``inf`` for a sample not found within the cap)."""

    label: str
    listings: int
    approve_seconds: float = 0.0
    q: list[float] = field(default_factory=list)
    filter: list[float] = field(default_factory=list)
    indexed_seconds: float = 0.0
    capped: bool = False
    wcu: float = 0.0
    wcu_budget: float = 0.0
    aws_mb: float = 0.0

    def throughput(self) -> float:
        """Indexed listings per second (a bound from below when capped)."""
        return self.listings / self.indexed_seconds if self.indexed_seconds else 0.0

    def row(self) -> str:
        """The Markdown table row."""
        def pct(values: list[float], q: float) -> str:
            value = _percentile(values, q)
            return f"> {self.indexed_seconds:.0f}" if value == float("inf") else f"{value:.2f}"

        found = sum(1 for v in self.q if v != float("inf")), sum(1 for v in self.filter if v != float("inf"))
        rate = f"{self.throughput():.1f}" + (" (cap reached: at least)" if self.capped else "")
        return (f"| {self.label} | {self.listings:,} | {self.listings / max(self.approve_seconds, 0.001):.1f} | "
                f"{pct(self.q, 0.5)} | {pct(self.q, 0.99)} | {pct(self.filter, 0.5)} | {pct(self.filter, 0.99)} | "
                f"{found[0]}/{len(self.q)} · {found[1]}/{len(self.filter)} | {rate} | "
                f"{'>= ' if self.capped else ''}{self.wcu:.0f} / {self.wcu_budget:.0f} | {self.aws_mb:,.0f} |")


HEADER = ("| side | listings | approvals/s | q p50 s | q p99 s | filter p50 s | filter p99 s | samples found (q · filter) "
          "| indexed listings/s | SearchIndex WCU per listing / budget | embedded AWS MB |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


class Poller:
    """Finds the samples by ``q`` and by the filter as they become findable (the module's docstring)."""

    def __init__(self, stack: BenchStack, key: str, samples: dict[str, int]) -> None:
        self.client = stack.client(key)
        self.samples = samples  # listing id -> its index n
        self.approved: list[tuple[float, str]] = []
        self.found: dict[str, dict[str, float]] = {"q": {}, "filter": {}}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def approved_one(self, listing: str, sent: float) -> None:
        """Called by the approvers with each approval's send time."""
        if listing in self.samples:
            with self.lock:
                self.approved.append((sent, listing))

    def done(self) -> bool:
        """Every sample found both ways."""
        return all(len(found) == len(self.samples) for found in self.found.values())

    def _finds(self, kind: str, listing: str) -> bool:
        n = self.samples[listing]
        if kind == "q":
            params = {"q": token(n), "pageSize": "20"}
        else:
            salary = str(SAMPLE_SALARY + n)
            params = {"category": "jobs", "meta.salary_min": salary, "meta.salary_max": salary, "pageSize": "20"}
        response = self.client.get("/v1/listings/search", params=params)
        response.raise_for_status()
        return any(str(found["id"]) == listing for found in response.json()["listings"])

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                with self.lock:
                    approved = sorted(self.approved)
                for kind, found in self.found.items():
                    for _, listing in [a for a in approved if a[1] not in found][:CHECKS]:
                        if not self._finds(kind, listing):
                            break  # the newer ones wait for a later round (the stream applies approvals in order)
                        found[listing] = time.monotonic()
                if len(approved) == len(self.samples) and self.done():
                    return
                time.sleep(POLL_SECONDS)
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            self.error = exc


def measure(label: str, rev: str, count: int, cap_seconds: float) -> Result:
    """One side: start ``rev``'s stack, create ``count`` listings, approve them while polling."""
    result = Result(label, count)
    stemmer = Stemmer.Stemmer("english")
    with tree(rev) as root, running_stack(root, label.split()[0], images=False, log_name="freshness") as stack:
        listings = bodies(count, stack.admin().get("/v1/categories").json()["categories"])
        result.wcu_budget = sum(2 * distinct_stems(b, stemmer) + 20 for b in listings) / count
        owners = corpus.create_users(stack, max(4, count // corpus.OWNERS_PER_LISTINGS))
        ids = corpus.create_listings(stack, listings, owners)
        wait_quiet(stack.recorder, QUIET_SECONDS, 600)
        poller = Poller(stack, owners[0][1], {ids[n]: n for n in range(0, count, SAMPLE_EVERY)})
        poller.thread.start()
        stack.recorder.phase = "approvals"
        start = time.monotonic()
        approved_at = corpus.approve_all(stack, ids, on_approved=poller.approved_one)
        first = min(approved_at.values())
        result.approve_seconds = time.monotonic() - first
        deadline = first + cap_seconds
        while not poller.done() and time.monotonic() < deadline and poller.thread.is_alive():
            time.sleep(0.2)
        quiet = poller.done() and wait_quiet(stack.recorder, QUIET_SECONDS, max(0.0, deadline - time.monotonic()))
        result.capped = not quiet
        # Done: the last DynamoDB call before the quiet period (which only confirms it), or the last sample found.
        end = max(stack.recorder.last_call, *poller.found["q"].values(), *poller.found["filter"].values()) if quiet else deadline
        result.indexed_seconds = end - first
        poller.stop.set()
        poller.thread.join(timeout=30)
        if poller.error is not None:
            raise poller.error
        stack.recorder.phase = "done"
        with stack.recorder.count_lock:  # a capped side's indexer is still writing
            billed = [(phase, key, units[1]) for (phase, key), units in stack.recorder.units.items()]
        result.wcu = sum(wcu for phase, key, wcu in billed if phase == "approvals" and key.startswith("SearchIndexTable")) / count
        result.aws_mb = stack.aws_rss_mb()
        for kind, latencies in (("q", result.q), ("filter", result.filter)):
            for listing in poller.samples:
                found = poller.found[kind].get(listing)
                latencies.append(found - approved_at[listing] if found is not None else float("inf"))
        print(f"{label}: {count} approvals in {result.approve_seconds:.0f} s, indexer done "
              f"{'(cap reached) ' if result.capped else ''}{end - start:.0f} s after the first", file=sys.stderr)
    return result


def checks(after: Result) -> list[tuple[str, str]]:
    """The budgets ``after`` misses, as ``(name, message)``."""
    missed = []
    for name, values in (("p99 q", after.q), ("p99 filter", after.filter)):
        p99 = _percentile(values, 0.99)
        if p99 > P99_SECONDS:
            shown = f"> {after.indexed_seconds:.0f}" if p99 == float("inf") else f"{p99:.2f}"
            missed.append((name, f"{name}: {shown} s > {P99_SECONDS} s"))
    if after.throughput() < THROUGHPUT:
        missed.append(("throughput", f"indexed {after.throughput():.1f} listings/s < {THROUGHPUT}"))
    if after.wcu > after.wcu_budget:
        missed.append((f"write units at {after.listings:,}", f"SearchIndex {after.wcu:.0f} WCU per listing > budget "
                                                             f"{after.wcu_budget:.0f} (2 x distinct stems + 20)"))
    return missed


def pending_at(listings: int) -> frozenset[str]:
    """The :data:`PENDING` budgets of a run of ``listings`` approvals: those of every size and those
    named for this one (a budget named for another size is neither pending nor met here)."""
    return frozenset(p for p in PENDING if " at " not in p or p.endswith(f" at {listings:,}"))


def main(argv: list[str] | None = None) -> int:
    """Measure both sides and print the table; with ``--check`` return 1 when a budget is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--listings", type=int, default=LISTINGS, help="approvals on this tree")
    parser.add_argument("--baseline", default=BASELINE, help="the baseline commit ('' for none)")
    parser.add_argument("--baseline-listings", type=int, default=BASELINE_LISTINGS, help="approvals on the baseline")
    parser.add_argument("--cap-seconds", type=float, default=CAP_SECONDS, help="longest wait per side after the first approval")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget not in PENDING is missed")
    parser.add_argument("--pending", action="store_true", help="with --check: the PENDING budgets too")
    args = parser.parse_args(argv)
    started = time.monotonic()
    before = None
    if args.baseline and args.baseline_listings:
        before = measure(f"baseline {args.baseline}", args.baseline, args.baseline_listings, args.cap_seconds)
    after = measure("this tree", "", args.listings, args.cap_seconds)
    print(f"\nfreshness: approvals as fast as the API takes them; latency from sending an approval to the first "
          f"search answer returning the listing (every {SAMPLE_EVERY}th listing); cap {args.cap_seconds:.0f} s\n")
    print(HEADER)
    for result in (before, after):
        if result is not None:
            print(result.row())
    print()
    failed = budget_verdict(checks(after), pending_at(args.listings), args.pending, started)
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
