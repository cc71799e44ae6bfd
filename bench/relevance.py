"""Relevance benchmark (issue 25): our search against SQLite FTS5 on a judged set, in one run.

1. Starts the local stack (``python -m local_stack``, as ``make run`` does, through
   ``tests/e2e/conftest.start_stack``), creates owners and the 315 listings of
   ``bench/relevance_set.json`` through the public API (``POST /v1/listings``), approves them
   through the administrators' claims (``POST /v1/admin/approvals/claims`` and decisions) and waits
   until the Listings-stream consumer has filed every one (posting lists and typo dictionary).
2. Runs the 64 queries through ``GET /v1/listings/search?q=...&pageSize=20`` (ranked by relevance,
   the default with ``q``), and once more in this process against the stack's DynamoDB (the same
   service code, with botocore hooks counting the items each DynamoDB response says it read).
3. Loads the same documents (title, description without markup, place) into an SQLite FTS5 table
   with ``tokenize='porter unicode61 remove_diacritics 2'`` and runs the same queries, every word
   required and the last one a prefix (``"w1" "w2"*``, as our last word is), ordered by ``bm25()``.

Metrics, per query class and overall (classes in ``bench/relevance_set.py``): nDCG@10 with gains
``2^grade - 1`` (K. Järvelin, J. Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
ACM TOIS 2002) and recall@20 capped at the query's relevant count (relevant = grade >= 1;
``hits / min(20, relevant)``, the "capped recall" of the BEIR benchmark, so a query with more than
20 relevant listings can reach 1). Queries nothing answers (class ``none``) have no relevant
listing: they are left out of both means and reported as the results each engine returned.

Budgets (``--check`` exits 1 when one is missed):

* ours >= FTS5 overall on nDCG@10 and on recall@20;
* recall@20 of the typo queries (``typo1`` and ``typo2`` together) >= 0.8;
* no query reads more items than the search page budget of docs/search.md,
  ``3 x (pageSize + sel) + 50`` (``sel``: the matches of the query's most selective word alone).

Usage: ``python bench/relevance.py [--check]`` (about a minute and a half, most of it loading).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sqlite3
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# EMF metric lines (chalicelib.metrics) would drown the table: the stacks and workers started here inherit this.
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

SET = Path(__file__).resolve().parent / "relevance_set.json"
PAGE_SIZE = 20
NDCG_AT = 10
RECALL_AT = 20
TYPO_RECALL_BUDGET = 0.8
TYPO_CLASSES = ("typo1", "typo2")
OWNERS = 8
_TAG = re.compile(r"<[^>]+>")


@dataclass
class Result:
    """One engine's answer to one query: the listing keys in rank order, and what it read (ours)."""

    keys: list[str]
    items_read: int = 0
    budget: int = 0


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


# --- loading through the API ----------------------------------------------------------------------

def load(stack: Any, listings: list[dict[str, Any]]) -> dict[str, str]:
    """Create and approve every listing through the API; returns listing id -> set key."""
    owners = [stack.new_user(f"Owner {n}")[1] for n in range(OWNERS)]
    ids: dict[str, str] = {}

    def create(n: int) -> None:
        listing = listings[n]
        body = {"categoryKey": listing["categoryKey"], "roleKey": listing["roleKey"], "channels": ["telegram"],
                "meta": listing["meta"]}
        created = owners[n % OWNERS].post("/v1/listings", json=body)
        if created.status_code != 201:
            raise RuntimeError(f"create {listing['key']}: {created.status_code} {created.text}")
        ids[str(created.json()["id"])] = str(listing["key"])

    with ThreadPoolExecutor(max_workers=4) as pool:  # the API serves requests concurrently
        list(pool.map(create, range(len(listings))))
    admin = stack.admin()
    pending = set(ids)
    deadline = time.monotonic() + 300
    while pending:
        claimed = admin.post("/v1/admin/approvals/claims", json={"max": 10})
        tasks = claimed.json().get("approvals", []) if claimed.status_code == 200 else []
        def decide(task: dict[str, Any]) -> None:
            decided = admin.post(f"/v1/admin/approvals/{task['approvalId']}", json={"decision": "approve"})
            if decided.status_code == 200:
                pending.discard(str(task["listingId"]))

        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(decide, tasks))
        if not tasks:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(pending)} listings never reached the approval queue")
            time.sleep(0.2)
    return ids


def wait_indexed(ids: dict[str, str]) -> None:
    """Wait until the stream consumer has filed every listing (its posting state is at its version)."""
    from chalicelib.listings import repository
    from chalicelib.listings.search.postings import NAMESPACE
    from chalicelib.search import postings

    waiting = list(ids)
    deadline = time.monotonic() + 300
    while waiting:
        listing = repository.get(waiting[-1])
        version, _ = postings.applied_keys(NAMESPACE, waiting[-1])
        if listing is not None and listing["status"] == "ACTIVE" and version >= int(listing.get("version") or 0):
            waiting.pop()
            continue
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(waiting)} listings never indexed")
        time.sleep(0.2)


# --- the engines -------------------------------------------------------------------------------------

def ours(stack: Any, queries: list[dict[str, Any]], ids: dict[str, str], items: list[dict[str, Any]]) -> dict[str, Result]:
    """Every query over HTTP (the results) and in process (the items read, and the same results)."""
    from chalicelib import storage
    from chalicelib.listings.search.filters import evaluate
    from chalicelib.listings.search.query import parse_search
    from chalicelib.listings.search.service import search_listings

    counter = {"items": 0}

    def hook(parsed: dict[str, Any], **_: Any) -> None:
        if "ScannedCount" in parsed:
            counter["items"] += int(parsed["ScannedCount"])
        elif "Responses" in parsed:
            counter["items"] += sum(len(v) for v in parsed["Responses"].values())
        elif "Item" in parsed:
            counter["items"] += 1

    for operation in ("Query", "BatchGetItem", "GetItem"):
        storage.dynamodb().meta.events.register(f"after-call.dynamodb.{operation}", hook)
    _, client = stack.new_user("Seeker Sam")
    results: dict[str, Result] = {}
    for query in queries:
        response = client.get("/v1/listings/search", params={"q": query["q"], "pageSize": PAGE_SIZE})
        response.raise_for_status()
        keys = [ids.get(str(listing["id"]), "?") for listing in response.json()["listings"]]
        counter["items"] = 0
        page = search_listings(parse_search({"q": query["q"], "pageSize": str(PAGE_SIZE)}))
        read = counter["items"]
        if [ids.get(listing.id, "?") for listing in page.listings] != keys:
            raise RuntimeError(f"query {query['id']}: the API and the service disagree")
        terms = parse_search({"q": query["q"]}).terms
        sel = min((sum(1 for i in items if evaluate(parse_search({"q": t}), i) is not None) for t in terms), default=0)
        results[query["id"]] = Result(keys, read, 3 * (PAGE_SIZE + sel) + 50)
    return results


def fts5(queries: list[dict[str, Any]], listings: list[dict[str, Any]]) -> dict[str, Result]:
    """The reference engine: SQLite FTS5, Porter + unicode61 (diacritics removed), ranked by ``bm25()``."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, title, description, location, "
               "tokenize='porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO docs VALUES (?, ?, ?, ?)", [
        (listing["key"], listing["meta"]["title"], _TAG.sub(" ", listing["meta"]["description"]), listing["meta"]["location"])
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
        for name in (query["kind"], "all"):
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


def report(queries: list[dict[str, Any]], ours_: dict[str, Result], fts: dict[str, Result],
           judgments: dict[str, dict[str, int]]) -> list[str]:
    """Print the per-class table and the per-query reads; return the budgets missed."""
    a, b = evaluate_engine(ours_, queries, judgments), evaluate_engine(fts, queries, judgments)
    print(f"{'class':<12} {'queries':>7} | {'nDCG@10 ours':>12} {'FTS5':>6} | {'recall@20 ours':>14} {'FTS5':>6} |"
          f" {'results ours':>12} {'FTS5':>6}")
    order = [*dict.fromkeys(q["kind"] for q in queries), "typo (1+2)", "all"]
    for name in order:
        x, y = a[name], b[name]
        count = len(x.ndcg) if name in ("all", "typo (1+2)") else sum(1 for q in queries if q["kind"] == name)
        print(f"{name:<12} {count:>7} | {_mean(x.ndcg):>12.3f} {_mean(y.ndcg):>6.3f} | {_mean(x.recall):>14.3f}"
              f" {_mean(y.recall):>6.3f} | {_mean([float(v) for v in x.returned]):>12.1f} {_mean([float(v) for v in y.returned]):>6.1f}")
    failures: list[str] = []
    if _mean(a["all"].ndcg) < _mean(b["all"].ndcg):
        failures.append(f"nDCG@10 overall {_mean(a['all'].ndcg):.3f} < FTS5 {_mean(b['all'].ndcg):.3f}")
    if _mean(a["all"].recall) < _mean(b["all"].recall):
        failures.append(f"recall@20 overall {_mean(a['all'].recall):.3f} < FTS5 {_mean(b['all'].recall):.3f}")
    if _mean(a["typo (1+2)"].recall) < TYPO_RECALL_BUDGET:
        failures.append(f"typo recall@20 {_mean(a['typo (1+2)'].recall):.3f} < {TYPO_RECALL_BUDGET}")
    worst = max(ours_.values(), key=lambda r: r.items_read / r.budget)
    print(f"\nitems read per query (pageSize {PAGE_SIZE}): max {max(r.items_read for r in ours_.values())}, "
          f"mean {_mean([float(r.items_read) for r in ours_.values()]):.0f}; highest read / budget "
          f"{worst.items_read} / {worst.budget}")
    for query in queries:
        result = ours_[query["id"]]
        if result.items_read > result.budget:
            failures.append(f"query {query['id']} {query['q']!r} read {result.items_read} > budget {result.budget}")
    return failures


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; with ``--check`` return 1 when a budget is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is missed")
    args = parser.parse_args(argv)
    data = json.loads(SET.read_text(encoding="utf-8"))
    listings, queries, judgments = data["listings"], data["queries"], data["judgments"]

    from tests.e2e.conftest import start_stack, stop_stack

    started = time.perf_counter()
    stack = start_stack()
    try:
        # This process reads the stack's tables directly for the read counts (the embedded AWS).
        resources = dict(line.split("=", 1) for line in os.popen(f"{sys.executable} -m local_stack.resources").read().split())
        os.environ.update(resources)
        os.environ.update({"AWS_ENDPOINT_URL": stack.moto_url, "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
                           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
        ids = load(stack, listings)
        wait_indexed(ids)
        print(f"loaded {len(ids)} listings through the API in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        from chalicelib.categories.registry import all_categories
        from chalicelib.listings.service import search_text

        items = [{"categoryKey": i["categoryKey"], "roleKey": i["roleKey"], "meta": i["meta"],
                  "searchText": search_text(all_categories()[i["categoryKey"]], i["meta"])} for i in listings]
        ours_ = ours(stack, queries, ids, items)
    finally:
        stop_stack(stack)
    fts = fts5(queries, listings)
    failures = report(queries, ours_, fts, judgments)
    for failure in failures:
        print(f"BUDGET MISSED: {failure}")
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 1 if failures and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
