"""Search freshness under bulk approvals (issue 20, part 3): how long until an approved listing is findable.

One command, both trees in the same run:

1. **after**: this tree. Starts the real local stack (``python -m local_stack``: the embedded
   moto server, the served API and the event runner that feeds the Listings stream to the
   postings indexer, as ``make run`` does), creates ``--listings`` PENDING job listings through
   ``POST /v1/listings`` (not timed), then approves them as fast as the API takes them (four
   administrators' threads: ``POST /v1/admin/approvals/claims`` with ``max`` 10, then one
   decision each), while one poller thread asks the search API, every :data:`POLL_SECONDS`,
   for the ``total`` of a select filter (``category=jobs&meta.employmentType=contract``: every
   fourth listing has that value, so the planner reads the value's list and ``total`` is its
   posting size), and, for every tenth listing, which carries a word of its own (``zq`` + two
   letters), whether ``q=<its word>`` finds it (the oldest approved ones not found yet first).
2. **before**: the same measurement on today's ``main`` (commit :data:`BASELINE_COMMIT`, exported
   with ``git archive`` to a temporary directory, its stack started from there), with
   ``--baseline-listings`` listings (fewer: it indexes a few listings a second).

Per listing, the time from its approval to being findable. By the ``q`` word: the first answer
that returned the listing (every tenth listing). By the filter: the approvals of the listings
with the value are numbered in the order they were sent, and the ``k``-th is findable at the
first poll whose total is at least ``k``; that reads the total as a queue, which it is on the
local stack: its Listings table has one stream shard, applied in order (on AWS several shards
are applied side by side, each in order). The approval time is taken when its request is sent
(a bound from above on the latency); the found time when the search's answer arrives. Columns:
``approvals/s`` what the API took; ``indexed listings/s (stack)`` listings over the time from the
first approval until the last is findable (when the indexer keeps up, that is the approval
rate: a bound from below on the indexer); ``indexer capacity`` the indexer alone, in process
on the in-process moto (:func:`capacity_worker`: approval records handed to its Lambda handler
in batches of 100, timed), for both trees.

Budgets (``--check`` exits 1 when one is missed): p99 of both latencies at most
:data:`P99_BUDGET_SECONDS` (5 s, issue 20) for this tree. Aim (reported, not enforced): 100
listings/s of indexer throughput on the local stack.

Usage: ``python bench/freshness.py [--check] [--listings N] [--baseline-listings M]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from bisect import bisect_left
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
ROOT = Path(__file__).resolve().parent.parent
#: The tree whose code runs: this one, or the baseline's for the capacity worker (``--root``).
CODE_ROOT = Path(sys.argv[sys.argv.index("--root") + 1]) if "--root" in sys.argv else ROOT
sys.path.insert(0, str(CODE_ROOT))
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

import httpx  # noqa: E402

from tests.e2e import conftest as e2e  # noqa: E402
from tests.e2e.conftest import Stack, stop_stack  # noqa: E402

BASELINE_COMMIT = "e040095"
LISTINGS = 5000
BASELINE_LISTINGS = 300
OWNERS = 20
APPROVERS = 4
CREATORS = 4
POLL_SECONDS = 0.05
P99_BUDGET_SECONDS = 5.0
AIM_LISTINGS_PER_SECOND = 100.0
WORD_EVERY = 10
#: Sampled listings whose word the poller searches per round at most (the oldest approvals not yet found).
WORD_CHECKS = 5
SELECT = ("employmentType", "contract")
SELECT_EVERY = 4
#: Approval records handed to the indexer alone for its capacity (the baseline's: at most its listings).
CAPACITY_LISTINGS = 500
#: Longest wait for the index to count every listing after the last approval, seconds.
SETTLE_SECONDS = 600.0


@dataclass
class Result:
    """One tree's measurement."""

    label: str
    listings: int
    approve_seconds: float
    q_latencies: list[float]
    select_latencies: list[float]
    throughput: float
    capacity: float = 0.0

    def row(self) -> str:
        def pct(values: list[float], q: float) -> str:
            ordered = sorted(values)
            return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.2f}" if ordered else "-"

        approvals = self.listings / self.approve_seconds if self.approve_seconds else 0.0
        return (f"| {self.label} | {self.listings} | {approvals:.1f} | {pct(self.q_latencies, 0.5)} | {pct(self.q_latencies, 0.99)} "
                f"| {pct(self.select_latencies, 0.5)} | {pct(self.select_latencies, 0.99)} | {self.throughput:.1f} "
                f"| {self.capacity:.1f} |")

    def p99(self) -> float:
        both = sorted(self.q_latencies), sorted(self.select_latencies)
        return max(values[min(len(values) - 1, int(0.99 * len(values)))] for values in both)


def start_stack(root: Path) -> Stack:
    """``python -m local_stack`` from ``root`` on free ports, healthy (tests/e2e/conftest.py's start)."""
    return e2e.start_stack({"POWERTOOLS_LOG_LEVEL": "WARNING"}, root=root)


def _body(n: int) -> dict[str, Any]:
    return {"categoryKey": "jobs", "roleKey": "hiring", "channels": ["telegram"], "meta": {
        "title": f"Freshness {_word(n)} engineer {n}", "description": "<p>Indexing benchmark listing</p>",
        "location": "Berlin", "location_lat": "52.52", "location_lng": "13.405", SELECT[0]: _employment(n)}}


def _word(n: int) -> str:
    """Every :data:`WORD_EVERY`-th listing carries a word of its own (``zq`` + two letters): a ``q``
    search for it finds that listing once its postings are written, and nothing before. Four
    letters: no typo tolerance (docs/search.md, "Analysis"), which would also find the neighbours'
    words, and no longer word starts with it."""
    if n % WORD_EVERY:
        return "plain"
    k = n // WORD_EVERY
    if k >= 26 * 26:
        raise ValueError(f"at most {26 * 26 * WORD_EVERY} listings")
    return "zq" + chr(ord("a") + k // 26) + chr(ord("a") + k % 26)


def _employment(n: int) -> str:
    """Every :data:`SELECT_EVERY`-th listing has the filtered value (a filter matching the whole category
    would be answered from the category's own list, with a bound for ``total``)."""
    return SELECT[1] if n % SELECT_EVERY == 0 else ("full_time", "part_time", "internship")[n % 3]


def create_listings(stack: Stack, count: int) -> tuple[dict[str, str], set[str]]:
    """``count`` PENDING listings through the API (not timed); returns the sampled listings' own words
    by id and the ids of the listings with the filtered value."""
    owners = [stack.new_user(f"Owner {n}")[1] for n in range(OWNERS)]

    def create(n: int) -> tuple[str, bool]:
        response = owners[n % OWNERS].post("/v1/listings", json=_body(n))
        if response.status_code != 201:
            raise RuntimeError(f"create {n}: {response.status_code} {response.text}")
        return str(response.json()["id"]), _word(n), _employment(n) == SELECT[1]

    with ThreadPoolExecutor(max_workers=CREATORS) as pool:
        created = list(pool.map(create, range(count)))
    return ({listing: word for listing, word, _ in created if word != "plain"},
            {listing for listing, _, selected in created if selected})


def _total(client: httpx.Client, params: dict[str, str]) -> int:
    response = client.get("/v1/listings/search", params={**params, "pageSize": "1"})
    response.raise_for_status()
    body = response.json()
    if body.get("totalRelation", "eq") != "eq":
        raise RuntimeError(f"search {params}: total is a bound ({body.get('totalRelation')}), not a posting size")
    return int(body["total"])


def _finds(client: httpx.Client, word: str, listing: str) -> bool:
    """True when ``q=<word>`` (the listing's own word) returns ``listing`` on its first page."""
    response = client.get("/v1/listings/search", params={"category": "jobs", "q": word, "pageSize": "5"})
    response.raise_for_status()
    return any(str(found["id"]) == listing for found in response.json()["listings"])


def measure(stack: Stack, count: int, worded: dict[str, str], selected: set[str], label: str) -> Result:
    """Approve ``count`` PENDING listings as fast as the API takes them while polling the search API."""
    admin = stack.admin()
    _, seeker = stack.new_user("Seeker")
    select_params = {"category": "jobs", f"meta.{SELECT[0]}": SELECT[1]}
    approved: list[tuple[float, str]] = []  # send time of each approval and its listing
    lock = threading.Lock()
    polls: list[tuple[float, int]] = []  # (answer time, filter total)
    found: dict[str, float] = {}  # sampled listing -> first answer finding it by its word
    done = threading.Event()
    failures: list[Exception] = []

    def poll() -> None:
        try:
            watch()
        except Exception as exc:  # noqa: BLE001  # re-raised by the main thread
            failures.append(exc)

    def watch() -> None:
        while not done.is_set():
            select_total = _total(seeker, select_params)
            polls.append((time.monotonic(), select_total))
            with lock:
                waiting = [listing for _, listing in approved if listing in worded and listing not in found]
            for listing in waiting[:WORD_CHECKS]:  # the oldest approvals first: the stream applies them in order
                if not _finds(seeker, worded[listing], listing):
                    break
                found[listing] = time.monotonic()
            if select_total >= len(selected) and len(found) == len(worded):
                return
            time.sleep(POLL_SECONDS)

    def decide(task: dict[str, Any]) -> None:
        with lock:
            approved.append((time.monotonic(), str(task["listingId"])))
        response = admin.post(f"/v1/admin/approvals/{task['approvalId']}", json={"decision": "approve"})
        if response.status_code != 200:
            raise RuntimeError(f"approve {task['listingId']}: {response.status_code} {response.text}")

    poller = threading.Thread(target=poll, daemon=True)
    start = time.monotonic()
    poller.start()
    left = count
    with ThreadPoolExecutor(max_workers=APPROVERS) as pool:
        idle_since = time.monotonic()
        while left > 0:
            claimed = admin.post("/v1/admin/approvals/claims", json={"max": 10})
            tasks = claimed.json().get("approvals", []) if claimed.status_code == 200 else []
            if not tasks:
                if time.monotonic() - idle_since > 120:
                    raise RuntimeError(f"{left} listings never reached the review queue")
                time.sleep(0.1)
                continue
            idle_since = time.monotonic()
            list(pool.map(decide, tasks))
            left -= len(tasks)
    approve_seconds = time.monotonic() - start
    poller.join(timeout=SETTLE_SECONDS)  # the poller returns once everything is found
    done.set()
    if failures:
        raise failures[0]
    if not polls or polls[-1][1] != len(selected) or len(found) != len(worded):
        raise RuntimeError(f"{label}: filter total {polls[-1][1] if polls else None} of {len(selected)}, "
                           f"{len(found)} of {len(worded)} words found")
    approved.sort()
    sent_at = {listing: sent for sent, listing in approved}
    totals = [total for _, total in polls]
    select_latencies = []
    for k, sent in enumerate((sent for sent, listing in approved if listing in selected), start=1):
        select_latencies.append(polls[bisect_left(totals, k)][0] - sent)  # totals only grow: the first poll counting k
    q_latencies = [found[listing] - sent_at[listing] for listing in worded]
    indexed_seconds = max(polls[-1][0], max(found.values())) - approved[0][0]
    return Result(label, count, approve_seconds, q_latencies, select_latencies, count / indexed_seconds)


def run_tree(root: Path, count: int, label: str) -> Result:
    """Start a stack from ``root``, create and approve ``count`` listings, stop the stack."""
    stack = start_stack(root)
    try:
        worded, selected = create_listings(stack, count)
        return measure(stack, count, worded, selected, label)
    finally:
        stop_stack(stack)


_VOCABULARY = ("python", "rust", "golang", "backend", "frontend", "platform", "data", "senior", "junior", "remote", "team",
               "cloud", "services", "systems", "design", "product", "growth", "mobile", "android", "security", "payments",
               "search", "infra", "analytics")


def _image(n: int, status: str, version: int) -> dict[str, Any]:
    """A Listings item as the API stores it (the fields the indexer reads), with about 20 words."""
    words = [_VOCABULARY[(n * 7 + i * i) % len(_VOCABULARY)] for i in range(12)]
    meta = {"title": f"Freshness {_word(n)} engineer {n}", "description": "<p>Indexing benchmark listing</p>", "location": "Berlin",
            SELECT[0]: _employment(n), "skills": "python,go", "salary": str(40000 + (n % 97) * 1000), "remote": "hybrid"}
    return {"listingId": f"lst_bench{n:06d}", "ownerId": "usr_bench", "categoryKey": "jobs", "roleKey": "hiring", "status": status,
            "version": version, "createdAt": f"2026-01-01T00:00:{n % 60:02d}.{n:06d}Z", "meta": meta,
            "searchText": " ".join(["freshness", _word(n), "engineer", str(n), "indexing", "benchmark", "berlin", *words])}


#: The moto patches the local stack's server applied one by one before ``speed_up`` and ``behave_as_aws``
#: named them (25ec727): what the baseline tree's embedded AWS runs.
_OLDER_PATCHES = ("undo_cancelled_transactions", "read_one_partition", "fast_json_structures", "list_moto_modules_once",
                  "remember_deduplication_ids", "honour_client_request_tokens")


def _patch_moto(moto_server: Any) -> None:
    """Apply the moto patches of the tree under test as its local stack's embedded AWS does (this tree's
    ``behave_as_aws`` and ``speed_up``; an older tree's own patches, which it named one by one)."""
    if hasattr(moto_server, "behave_as_aws"):
        moto_server.behave_as_aws()
        moto_server.speed_up()
        return
    for name in _OLDER_PATCHES:
        if hasattr(moto_server, name):
            getattr(moto_server, name)()


def capacity_worker(count: int) -> float:
    """The indexer's own throughput, listings/s: ``count`` approval records (PENDING -> ACTIVE) handed
    to its Lambda handler in batches of 100 on the in-process moto (no HTTP, no API), timed."""
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_SESSION_TOKEN": "bench",
                       "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_LOG_LEVEL": "WARNING"})
    os.environ.pop("AWS_ENDPOINT_URL", None)
    from moto import mock_aws

    from local_stack import moto_server

    _patch_moto(moto_server)
    with mock_aws():
        from local_stack.resources import create_resources

        os.environ.update(create_resources())
        from chalicelib import storage
        from chalicelib.config import settings
        from chalicelib.listings.search import indexer

        try:  # moto in process serves one call at a time only behind the local stack's lock: no parallel writes
            from chalicelib.search import batch_writer

            batch_writer.WRITE_THREADS = 1
        except ImportError:  # the baseline tree has no batch writer
            pass
        settings.cache_clear()
        storage.client.cache_clear()
        records = [{"eventName": "MODIFY", "dynamodb": {
            "SequenceNumber": str(n + 1), "ApproximateCreationDateTime": time.time(),
            "OldImage": storage.to_item(_image(n, "PENDING", 1)), "NewImage": storage.to_item(_image(n, "ACTIVE", 2))}}
            for n in range(count)]
        start = time.perf_counter()
        for first in range(0, count, 100):
            result = indexer.handle_stream_batch({"Records": records[first : first + 100]})
            if result["batchItemFailures"]:
                raise RuntimeError(f"indexer failed records: {result['batchItemFailures'][:3]}")
        return count / (time.perf_counter() - start)


def capacity(root: Path, count: int) -> float:
    """:func:`capacity_worker` on the code of ``root``, in a child process."""
    done = subprocess.run([sys.executable, __file__, "--capacity-worker", str(count), "--root", str(root)],
                          cwd=root, check=True, capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1])


def baseline_tree() -> Path:
    """Today's ``main`` (:data:`BASELINE_COMMIT`) exported to a temporary directory (``git archive``)."""
    target = Path(tempfile.gettempdir()) / f"freshness-baseline-{BASELINE_COMMIT}"
    if not (target / "app.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", BASELINE_COMMIT], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def run(check: bool, listings: int = LISTINGS, baseline_listings: int = BASELINE_LISTINGS) -> int:
    """Measure the baseline and this tree, print the table; returns the exit code (1: budget missed with ``check``)."""
    results = []
    if baseline_listings > 0:
        tree = baseline_tree()
        before = run_tree(tree, baseline_listings, f"before ({BASELINE_COMMIT})")
        before.capacity = capacity(tree, min(baseline_listings, CAPACITY_LISTINGS))
        results.append(before)
    after = run_tree(ROOT, listings, "after (this tree)")
    after.capacity = capacity(ROOT, CAPACITY_LISTINGS)
    results.append(after)
    print("| tree | listings | approvals/s | q p50 s | q p99 s | filter p50 s | filter p99 s | indexed listings/s (stack) "
          "| indexer capacity listings/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for result in results:
        print(result.row())
    if len(results) == 2:
        print(f"indexer capacity: {after.capacity / results[0].capacity:.1f}x the baseline's; "
              f"p99 {after.p99():.2f} s against {results[0].p99():.2f} s")
    ok = after.p99() <= P99_BUDGET_SECONDS
    print(f"summary: p99 {after.p99():.2f} s (budget {P99_BUDGET_SECONDS:.0f} s) -> {'OK' if ok else 'OVER'}; "
          f"indexer {after.capacity:.1f} listings/s alone, {after.throughput:.1f} on the stack (aim {AIM_LISTINGS_PER_SECOND:.0f})")
    return 1 if check and not ok else 0


def main(argv: list[str] | None = None, run_: Callable[..., int] = run) -> int:
    """Parse the arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when p99 is over its budget")
    parser.add_argument("--listings", type=int, default=LISTINGS, help="listings approved on this tree")
    parser.add_argument("--baseline-listings", type=int, default=BASELINE_LISTINGS,
                        help=f"listings approved on {BASELINE_COMMIT} (0: skip the baseline)")
    parser.add_argument("--capacity-worker", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.capacity_worker:
        print(capacity_worker(args.capacity_worker))
        return 0
    return run_(args.check, args.listings, args.baseline_listings)


if __name__ == "__main__":
    sys.exit(main())
