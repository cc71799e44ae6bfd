"""The search engine's rows of issue 20: cost per page of conjunctions, ranges, deep pages and geo.

One command, ``python bench/search_engine.py [--check]``: for each size (5,000 and 20,000
listings with 2,000 and 10,000 users) it loads the benchmark's data (the generator and loader of
``bench/search.py``: skewed categories, Zipf cities, evenly spread housing) into an in-process
embedded AWS and runs every row five times, **after** (this tree) and **before** (``main`` at
:data:`BASELINE`, extracted with ``git archive`` into a temporary folder and run in a subprocess
with that tree first on ``sys.path``, same data, same run). Per row it reports:

* ``items``: items in the DynamoDB responses (``ScannedCount`` of each Query, the items of
  each BatchGetItem / GetItem): listings, users, posting entries and counters alike;
* ``KB``: response bytes read from DynamoDB (the HTTP bodies botocore received);
* ``calls`` and ``rt``: DynamoDB calls, and sequential round trips (calls made one after
  another; the calls of one parallel step, a ``ThreadPoolExecutor.map``, count once);
* ``cpu``: API-process CPU ms per request outside DynamoDB: each request goes through the
  app in process (Chalice's test client: routing, authentication by API key, validation,
  serialization), timed with ``time.process_time`` minus the thread CPU spent inside botocore
  calls (the SDK and the embedded AWS), median of 5, next to a listing detail
  (``GET /v1/listings/{id}``) measured the same way in the same run.

Budgets (issue 20), enforced with ``--check`` on the "after" figures: items, KB and calls at
the large size at most 1.25x the small size (plus a small constant for one extra Query);
items at most ``3 x pageSize x filters + 50``; round trips at most 8 (12 for geo rows); and
the median over the rows of the search CPU at most 2.5x the listing detail's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

HERE = Path(__file__).resolve().parent
#: ``main`` before issue 20: the "before" columns.
BASELINE = "e040095"
PAGE_SIZE = 20
REPEAT = 5
SIZES = ((5000, 2000), (20000, 10000))
#: Flat: large / small at most this (issue 20), plus this many items or calls or KB for one more Query.
FLAT = 1.25
FLAT_SLACK = 10
ROUND_TRIPS = 8
ROUND_TRIPS_GEO = 12
CPU_RATIO = 2.5
BERLIN = {"meta.location_lat": "52.5244", "meta.location_lng": "13.4105"}

#: (row, kind, parameters, filters counted by the items budget). The data's salaries and rents are
#: 500..99,500 (uniform), so the ranges are scaled to select what the issue's did (a few percent).
ROWS: list[tuple[str, str, dict[str, Any], int]] = [
    ("profiles country+openToWork+skills", "profiles", {"country": "de", "openToWork": True, "skills": "python"}, 3),
    ("jobs contract+salary_min", "listings", {"category": "jobs", "meta.employmentType": "contract", "meta.salary_min": "80000"}, 3),
    ("jobs internship+q common", "listings", {"category": "jobs", "meta.employmentType": "internship", "q": "engineer"}, 3),
    ("salary_min alone", "listings", {"meta.salary_min": "90000"}, 1),
    ("rentMonthly_max alone", "listings", {"meta.rentMonthly_max": "5000"}, 1),
    ("category page=10 no cursor", "listings", {"category": "jobs", "page": "10"}, 1),
    ("geo even no radius p10 cursor", "geo-cursor", {"category": "housing"}, 2),
    ("geo 25 km clustered", "listings", {"category": "jobs", **BERLIN, "radiusKm": "25"}, 2),
]


def _load_module(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    first = sys.path[0]
    spec.loader.exec_module(module)
    sys.path[0] = first  # bench/search.py puts this tree first: keep the tree being measured first
    return module


@dataclass
class Meter:
    """DynamoDB traffic of one request, filled by a wrapper of botocore's ``_make_api_call`` and a hook."""

    calls: int = 0
    items: int = 0
    bytes: int = 0
    main_calls: int = 0
    waves: set[int] = field(default_factory=set)
    inside_cpu: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        self.calls = self.items = self.bytes = self.main_calls = 0
        self.waves = set()
        self.inside_cpu = 0.0

    def hook(self, parsed: dict[str, Any], http_response: Any = None, **_: Any) -> None:
        with self.lock:
            if "ScannedCount" in parsed:
                self.items += int(parsed["ScannedCount"])
            elif "Responses" in parsed:
                self.items += sum(len(v) for v in parsed["Responses"].values())
            elif "Item" in parsed:
                self.items += 1
            if http_response is not None:
                self.bytes += len(http_response.content or b"")

    @property
    def round_trips(self) -> int:
        return self.main_calls + len(self.waves)


_WAVE = threading.local()


@contextmanager
def metering(meter: Meter) -> Iterator[None]:
    """Count calls, round trips and the CPU spent inside them; tag the tasks of each pool ``map`` as one step."""
    from concurrent.futures import ThreadPoolExecutor

    import botocore.client

    original_call = botocore.client.BaseClient._make_api_call
    original_map = ThreadPoolExecutor.map
    counter = iter(range(1, 10**9))

    def call(self: Any, operation: str, params: Any) -> Any:
        started = time.thread_time()
        try:
            return original_call(self, operation, params)
        finally:
            spent = time.thread_time() - started
            wave = getattr(_WAVE, "id", None)
            with meter.lock:
                meter.calls += 1
                meter.inside_cpu += spent
                if wave is None:
                    meter.main_calls += 1
                else:
                    meter.waves.add(wave)

    def map_(self: Any, fn: Callable[..., Any], *iterables: Any, **kwargs: Any) -> Any:
        wave = next(counter)

        def tagged(*args: Any) -> Any:
            _WAVE.id = wave
            try:
                return fn(*args)
            finally:
                _WAVE.id = None

        return original_map(self, tagged, *iterables, **kwargs)

    with mock.patch.object(botocore.client.BaseClient, "_make_api_call", call), mock.patch.object(ThreadPoolExecutor, "map", map_):
        yield


def _median_run(meter: Meter, run: Callable[[], Any]) -> dict[str, float]:
    """Run ``run`` :data:`REPEAT` times; traffic of the last run, CPU outside DynamoDB as the median."""
    cpus = []
    for _ in range(REPEAT):
        meter.reset()
        started = time.process_time()
        run()
        cpus.append((time.process_time() - started - meter.inside_cpu) * 1000)
    return {"items": meter.items, "kb": round(meter.bytes / 1024, 1), "calls": meter.calls, "rt": meter.round_trips,
            "cpu": round(statistics.median(cpus), 1)}


def measure(count: int, user_count: int) -> dict[str, dict[str, float]]:
    """Load ``count`` listings and ``user_count`` users into a fresh embedded AWS; measure every row and a
    listing detail. Runs against whatever ``chalicelib`` is first on ``sys.path`` (this tree or the baseline)."""
    from moto import mock_aws

    shared = _load_module("bench_search_shared", HERE / "search.py")
    from local_stack.resources import create_resources

    os.environ.pop("AWS_ENDPOINT_URL", None)
    with mock_aws(), shared.partition_queries():
        os.environ.update(create_resources())
        from chalicelib import storage
        from chalicelib.config import settings

        settings.cache_clear()
        storage.client.cache_clear()
        return _measure(shared, count, user_count)


def _measure(shared: Any, count: int, user_count: int) -> dict[str, dict[str, float]]:
    from chalicelib import storage
    from chalicelib.config import settings
    from chalicelib.profiles.index import NAMESPACE as PROFILES
    from scripts.profile_backfill import filed
    from scripts.search_backfill import posting_items, tally

    try:
        from chalicelib.search import postings
    except ImportError:  # the baseline: the posting store before issue 20
        from chalicelib import postings  # type: ignore[no-redef]

    items = shared.make_listings(count)
    users = shared.make_users(user_count)
    config = settings()
    shared.load(config.LISTINGS_TABLE, items)
    shared.load(config.USERS_TABLE, users)
    shared.load(config.SEARCH_INDEX_TABLE, postings.bulk_items(PROFILES, filed(users)))
    shared.load(config.SEARCH_INDEX_TABLE, tally(items))
    shared.load(config.SEARCH_INDEX_TABLE, posting_items(items))

    from urllib.parse import urlencode

    from chalice.test import Client

    from app import app
    from chalicelib.users.models import AdminUserCreate
    from chalicelib.users.service import create_user

    os.environ["RATE_LIMITS_ENABLED"] = "false"  # many requests with one key: the limiter is not measured
    settings.cache_clear()
    key = create_user(AdminUserCreate(displayName="Bench", channels={"telegram": "@bench"})).apiKey  # type: ignore[arg-type]
    meter = Meter()
    storage.dynamodb().meta.events.register("after-call.dynamodb", meter.hook)
    results: dict[str, dict[str, float]] = {}
    with Client(app) as client, metering(meter):
        def get(path: str, params: dict[str, Any] | None = None) -> Any:
            query = f"?{urlencode({k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()})}" if params else ""
            response = client.http.get(path + query, headers={"authorization": f"Bearer {key}"})
            if response.status_code != 200:
                raise RuntimeError(f"{path}{query}: {response.status_code} {response.body[:300]!r}")
            return json.loads(response.body)

        for name, kind, params, _ in ROWS:
            if kind == "profiles":
                results[name] = _median_run(meter, lambda p=params: get("/v1/profiles/search", {**p, "pageSize": PAGE_SIZE}))
            elif kind == "geo-cursor":
                raw = {**params, "meta.location_lat": str(shared.EVEN_CENTER[0]), "meta.location_lng": str(shared.EVEN_CENTER[1]),
                       "pageSize": str(PAGE_SIZE)}
                cursor = None
                for _ in range(9):  # the cursor a client holds after nine pages (not measured)
                    cursor = get("/v1/listings/search", {**raw, **({"cursor": cursor} if cursor else {})})["nextCursor"]
                results[name] = _median_run(meter, lambda r=raw, c=cursor: get("/v1/listings/search", {**r, "cursor": c}))
            else:
                results[name] = _median_run(meter, lambda p=params: get("/v1/listings/search", {**p, "pageSize": PAGE_SIZE}))
        listing = next(i for i in items if i["categoryKey"] == "jobs")
        results["listing detail"] = _median_run(meter, lambda: get(f"/v1/listings/{listing['listingId']}"))
    return results


def _baseline(count: int, user_count: int, root: Path) -> dict[str, dict[str, float]]:
    """:func:`measure` in a subprocess with the baseline tree first on ``sys.path``."""
    env = {**os.environ, "PYTHONPATH": str(root), "SEARCH_ENGINE_BENCH_ROOT": str(root)}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure", f"{count},{user_count}"],
                         env=env, check=False, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"the baseline measurement failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _extract_baseline(into: Path) -> Path:
    root = into / "baseline"
    root.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", BASELINE], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root


def _checks(after: dict[int, dict[str, dict[str, float]]]) -> list[str]:
    failures = []
    small, large = after[SIZES[0][0]], after[SIZES[-1][0]]
    for name, _, _, filters in ROWS:
        geo = name.startswith("geo")
        for metric in ("items", "kb", "calls"):
            if large[name][metric] > FLAT * small[name][metric] + FLAT_SLACK:
                failures.append(f"{name}: {metric} grow with the data ({small[name][metric]} -> {large[name][metric]})")
        for n, figures in after.items():
            limit = 3 * PAGE_SIZE * filters + 50
            if figures[name]["items"] > limit:
                failures.append(f"{name} at {n}: {figures[name]['items']} items > {limit}")
            trips = ROUND_TRIPS_GEO if geo else ROUND_TRIPS
            if figures[name]["rt"] > trips:
                failures.append(f"{name} at {n}: {figures[name]['rt']} round trips > {trips}")
    for n, figures in after.items():
        median = statistics.median(figures[name]["cpu"] for name, *_ in ROWS)
        detail = figures["listing detail"]["cpu"]
        if median > CPU_RATIO * detail:
            failures.append(f"CPU at {n}: median search {median} ms > {CPU_RATIO} x listing detail {detail} ms")
    return failures


def print_table(before: dict[int, dict[str, dict[str, float]]], after: dict[int, dict[str, dict[str, float]]]) -> None:
    """Markdown table: per row and size, before -> after of items, KB, calls, round trips and CPU ms."""
    metrics = ("items", "kb", "calls", "rt", "cpu")
    print("| row | size | " + " | ".join(f"{m} before → after" for m in metrics) + " |")
    print("|---|---|" + "---|" * len(metrics))
    for name in [r[0] for r in ROWS] + ["listing detail"]:
        for (n, users) in SIZES:
            b, a = before[n][name], after[n][name]
            cells = " | ".join(f"{b[m]:g} → {a[m]:g}" for m in metrics)
            print(f"| {name} | {n:,} / {users:,} | {cells} |")
    for (n, _) in SIZES:
        for label, figures in (("before", before[n]), ("after", after[n])):
            median = statistics.median(figures[name]["cpu"] for name, *_ in ROWS)
            detail = figures["listing detail"]["cpu"]
            print(f"\nCPU at {n:,} {label}: median search page {median:g} ms, listing detail {detail:g} ms, "
                  f"ratio {median / max(detail, 0.1):.1f}x", end="")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is missed")
    parser.add_argument("--sizes", help="listings:users pairs, comma separated (default 5000:2000,20000:10000)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # "count,users": one measurement as JSON (the subprocess)
    args = parser.parse_args()
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                       "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_LOG_LEVEL": "WARNING"})
    root = Path(os.environ.get("SEARCH_ENGINE_BENCH_ROOT") or HERE.parent)
    sys.path[0:1] = [str(root)]  # this folder would shadow `requests` with bench/requests.py
    global SIZES
    if args.sizes:
        SIZES = tuple((int(a), int(b)) for a, b in (pair.split(":") for pair in args.sizes.split(",")))
    if args.measure:
        count, users = (int(v) for v in args.measure.split(","))
        print(json.dumps(measure(count, users)))
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        base = _extract_baseline(Path(tmp))
        before = {n: _baseline(n, users, base) for n, users in SIZES}
    after = {n: measure(n, users) for n, users in SIZES}
    print(f"per search page (pageSize {PAGE_SIZE}), before = main at {BASELINE}, after = this tree, same run and data\n")
    print_table(before, after)
    failures = _checks(after)
    for failure in failures:
        print(f"BUDGET MISSED: {failure}")
    print(f"\n{'FAIL' if failures else 'OK'} ({time.perf_counter() - started:.0f} s)")
    return 1 if failures and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
