"""Hot partition keys: a scaled-down day of the mixed workload, projected to the target traffic.

Starts the embedded AWS (``local_stack.moto_server``), a **recording proxy** in front of it and
the local stack (``python -m local_stack``) pointed at the proxy (``AWS_ENDPOINT_URL``), then
drives the public API over HTTP in three measured phases, one per kind of traffic:

* ``approvals``: listings created (skewed over the categories, :data:`CATEGORY_WEIGHTS`),
  claimed and approved by an administrator, with everything the stream consumers do for them
  (search postings, counters, percolation, the review queue);
* ``searches``: the search mix of :data:`SEARCH_MIX` (category pages, category + role, common
  and rare words, meta filters, geo nearest-first, profile search);
* ``messages``: messages in accepted conversations (requests and acceptance are set-up, not
  measured).

The recording proxy (``bench/proxy.py``) sees every DynamoDB call and counts its **capacity
units per partition key** (table or index, and the partition key's value) as DynamoDB bills them (AWS docs, "Read/write
capacity mode" and "Item sizes and formats"): a write 1 WCU per KB of the larger of the item's
old and new images (twice in a transaction), each global secondary index whose keys or
projection the write changes 1 WCU per KB of the index entry (+100 bytes) at the old and/or new
index key; a read 1 RCU per 4 KB (half when eventually consistent, twice in a transaction), a
Query per 4 KB of all the items it read. To see index writes the proxy reads each written item
before and after the write (serialized under a lock; those reads are not counted).

**Projection.** Per phase, a key's units per operation are multiplied by the target rate of
that phase (:data:`TARGET_PER_SECOND`: 300 approvals/s, 5,000 searches/s, 2,000 messages/s) and
summed. A key whose value names one entity (a user, listing, conversation, ...: an id such as
``usr_...``) shares its phase's traffic with every other entity of its kind at the target
(:data:`TARGET_ENTITIES`: 1 million users, 10 million listings, ...), so its projection is also
multiplied by (entities of that kind seen in the phase / entities at the target), i.e. traffic
spread evenly over entities; shared keys (a category, a word, the review queue, a counter) are
not diluted.

**Before and after sharding.** "after" is what the replay measured (the code's keys); "before"
merges the write shards the code uses back into one key each (:func:`unsharded`): the
category/role shards of the newest-first indexes (``<category>#<shard>``), the profile index
shards (``S0``..``S7``) and the counters' shards and copies
(``count#listings#<category>#<shard>#<copy>``). It prints the ten hottest keys of both
(projected RCU/s and WCU/s against half of a partition's limits, 1,500 RCU/s and 500 WCU/s).

``--check`` exits 1 when a key of "after" projects above half a partition's limits, except the
keys of :data:`KNOWN_OVER` (printed as known), which it holds under a whole partition's limits.

Usage: ``python bench/hot_keys.py [--check] [--scale N]`` (``--scale`` multiplies the replayed
operations; default 1: 40 approvals, 120 searches, 50 messages: one to three minutes, as loaded as the machine is).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The repository root replaces this script's folder on the path (bench/requests.py would shadow `requests`).
sys.path[0] = str(ROOT)

import httpx  # noqa: E402

from bench.proxy import (  # noqa: E402
    ENTITY,
    Recorder,
    _kind,
    free_port,
    proxy_server,
    schemas,
    wait_idle,
)
from bench.stack import wait_answering  # noqa: E402
from local_stack.cities import CITIES  # noqa: E402
from local_stack.demo import _listing, approve_pending  # noqa: E402

#: Target traffic per phase, operations per second.
TARGET_PER_SECOND = {"approvals": 300, "searches": 5000, "messages": 2000}
#: Entities at the target (1 million users, 10 million listings). Conversations and the
#: rest are assumptions of this model: five conversations per user; one webhook and one saved
#: search per user; events, requests and attempts are written once each (never hot).
TARGET_ENTITIES = {"usr": 1_000_000, "lst": 10_000_000, "cnv": 5_000_000, "whk": 1_000_000, "ss": 1_000_000,
                   "msg": 10**9, "evt": 10**9, "req": 10**8, "dlv": 10**9, "key": 1_000_000,
                   "ledger": 1}  # not used for ledgers: PER_BATCH
#: A partition's limits (AWS docs, "Service quotas": 3,000 RCU and 1,000 WCU per second per
#: partition) and the budget: half of each.
PARTITION_RCU, PARTITION_WCU = 3000, 1000
BUDGET_RCU, BUDGET_WCU = PARTITION_RCU / 2, PARTITION_WCU / 2
#: Listings per category: real data is skewed (one large category), as in bench/search.py.
CATEGORY_WEIGHTS = {"jobs": 0.55, "cofounders": 0.15, "mentoring": 0.15, "housing": 0.15}
#: The search mix (weights): what a day of searches asks.
SEARCH_MIX = {"category": 30, "category+role": 15, "common word": 15, "rare word": 5, "meta filter": 10, "geo": 20,
              "profiles": 5}
#: Keys known to project above half a partition's limits, by table/index label, with the reason
#: and the remedy (docs/capacity.md, "Over budget"): printed as ``known``, and ``--check`` holds
#: them under a whole partition's limits (:data:`KNOWN_CEILING`) instead of half. None today:
#: every key is held under half a partition's limits.
KNOWN_OVER: dict[str, str] = {}
#: Load (share of half a partition's limits) a known key may not exceed: 2.0 = a whole partition.
KNOWN_CEILING = 2.0
#: On-demand prices, US East (N. Virginia), USD, as AWS lists them since its November 2024 price
#: cut (docs/capacity.md "Cost"): per million write and read request units; transactional writes
#: and strongly consistent reads are already counted twice and eventually consistent reads half.
PRICE_PER_MILLION_WRU, PRICE_PER_MILLION_RRU = 0.625, 0.125
SECONDS_PER_MONTH = 30 * 86400
#: The kind of key written once per stream batch (:data:`ENTITY`); not diluted or multiplied by
#: traffic: its whole life (written with a batch's states, then consumed) is charged as one second.
PER_BATCH = "ledger"
# -- the workload ---------------------------------------------------------------------------------

WORDS_COMMON = ["engineer", "startup", "mentor"]
WORDS_RARE = ["zeppelin", "quokka"]



def weighted(rng: random.Random, weights: dict[str, float]) -> str:
    """One key of ``weights``, drawn in proportion to its weight."""
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def listing_in(rng: random.Random, category: str, index: int) -> dict[str, Any]:
    """A demo-shaped listing body (``local_stack.demo``) of ``category``, in a city of the list."""
    kind = list(CATEGORY_WEIGHTS).index(category)
    body = _listing(rng, kind + 4 * index, CITIES[rng.randrange(len(CITIES))])
    if index % 25 == 0:  # a few listings carry the rare words
        body["meta"]["title"] += " " + rng.choice(WORDS_RARE)
    return {**body, "channels": ["telegram"]}


@dataclass
class Run:
    """Operations replayed per phase and the distinct entities the workload used."""

    ops: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def drive(base_url: str, admin_key: str, recorder: Recorder, scale: int, rng: random.Random) -> Run:
    """Replay the three phases against the stack at ``base_url``; returns the operations per phase."""
    run = Run()
    admin = {"Authorization": f"Bearer {admin_key}"}
    with httpx.Client(base_url=base_url, timeout=60) as http:
        users = []
        for index in range(12 * scale):
            response = http.post("/v1/admin/users", headers=admin, json={
                "displayName": f"Bench user {index}", "country": rng.choice(["de", "fr", "gb", "us", "br"]),
                "channels": {"telegram": f"@bench{index}"},
            })
            response.raise_for_status()
            users.append(response.json())
        wait_idle(recorder)

        recorder.phase = "approvals"
        listings: list[tuple[str, str]] = []  # (listing id, owner's key)
        for index in range(40 * scale):
            user = users[index % len(users)]
            category = weighted(rng, CATEGORY_WEIGHTS)
            owner = {"Authorization": f"Bearer {user['apiKey']}"}
            created = http.post("/v1/listings", headers=owner, json=listing_in(rng, category, index))
            created.raise_for_status()
            listings.append((created.json()["id"], user["apiKey"]))
        wait_idle(recorder)
        approved = approve_pending(http, admin, len(listings))
        wait_idle(recorder)
        run.ops["approvals"] = approved

        recorder.phase = "setup"  # conversations to write in: requests and their acceptance
        conversations = []
        for index in range(8 * scale):
            listing_id, owner_key = listings[index]
            requester = users[(index + 7) % len(users)]
            if requester["apiKey"] == owner_key:
                continue
            request = http.post("/v1/match-requests", headers={"Authorization": f"Bearer {requester['apiKey']}"},
                                json={"listingId": listing_id, "message": "Hello, still open?", "channels": ["telegram"]})
            if request.status_code != 201:
                continue
            accepted = http.patch(f"/v1/match-requests/{request.json()['requestId']}/status",
                                  headers={"Authorization": f"Bearer {owner_key}"}, json={"status": "ACCEPTED"})
            accepted.raise_for_status()
            conversation = accepted.json().get("conversationId")
            if conversation:
                conversations.append((conversation, owner_key, requester["apiKey"]))
        wait_idle(recorder)

        recorder.phase = "searches"
        cities = CITIES[:20]
        for _ in range(120 * scale):
            shape = weighted(rng, SEARCH_MIX)
            user = rng.choice(users)
            category = weighted(rng, CATEGORY_WEIGHTS)
            params: dict[str, str] = {"pageSize": "20"}
            path = "/v1/listings/search"
            if shape == "category":
                params["category"] = category
            elif shape == "category+role":
                params |= {"category": "jobs", "role": rng.choice(["hiring", "seeking"])}
            elif shape == "common word":
                params["q"] = rng.choice(WORDS_COMMON)
            elif shape == "rare word":
                params["q"] = rng.choice(WORDS_RARE)
            elif shape == "meta filter":
                params |= {"category": "jobs", "meta.remote": rng.choice(["onsite", "hybrid", "remote"])}
            elif shape == "geo":
                _, _, lat, lng = rng.choice(cities)
                params |= {"category": category, "meta.location_lat": f"{lat:.4f}", "meta.location_lng": f"{lng:.4f}", "radiusKm": "50"}
            else:
                path = "/v1/profiles/search"
                params = {"pageSize": "20", "country": rng.choice(["de", "fr", "gb", "us", "br"])}
            response = http.get(path, params=params, headers={"Authorization": f"Bearer {user['apiKey']}"})
            response.raise_for_status()
            run.ops["searches"] += 1
        wait_idle(recorder)

        recorder.phase = "messages"
        for index in range(50 * scale):
            conversation, owner_key, requester_key = conversations[index % len(conversations)]
            key = owner_key if index % 2 else requester_key
            sent = http.post(f"/v1/conversations/{conversation}/messages", headers={"Authorization": f"Bearer {key}"},
                             json={"content": f"Message {index}: when can we talk?"})
            sent.raise_for_status()
            run.ops["messages"] += 1
        wait_idle(recorder)
        recorder.phase = "done"
    return run


# -- projection -----------------------------------------------------------------------------------


def unsharded(key: str) -> str:
    """The key a write-sharded key would be without its shard (the "before sharding" view).

    ``ListingsTable.activeByCategoryShard jobs#3`` -> ``... jobs``; ``UsersTable.bySearchShard S5``
    -> ``... S``; ``CountersTable count#listings#jobs#1#0`` -> ``... count#listings#jobs``.
    """
    label, _, value = key.partition(" ")
    if value.startswith("count#listings#"):  # write shard and read copy
        value = re.sub(r"(#\d+)+$", "", value)
    elif label.endswith(("activeByCategoryShard", "activeByRoleShard", "pendingReview")):
        value = re.sub(r"#\d+$", "", value)
    elif label.endswith("bySearchShard"):
        value = re.sub(r"\d+$", "", value)
    return f"{label} {value}"


@dataclass
class Projection:
    """One key's projected units per second at the target traffic."""

    key: str
    rcu: float
    wcu: float

    @property
    def over(self) -> bool:
        """Above half of a partition's limits."""
        return self.rcu > BUDGET_RCU or self.wcu > BUDGET_WCU

    @property
    def known(self) -> bool:
        """Listed in :data:`KNOWN_OVER` (reported, held under :data:`KNOWN_CEILING`)."""
        return self.key.partition(" ")[0] in KNOWN_OVER

    @property
    def failed(self) -> bool:
        """What ``--check`` fails on: over half a partition, or a known key over a whole one."""
        return self.load > KNOWN_CEILING if self.known else self.over

    @property
    def load(self) -> float:
        """The larger of the two shares of the budget (1.0 = at half a partition's limits)."""
        return max(self.rcu / BUDGET_RCU, self.wcu / BUDGET_WCU)


def project(recorder: Recorder, run: Run, merge: bool) -> list[Projection]:
    """Every key's projection (``merge``: shards merged back, :func:`unsharded`), hottest first."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (phase, key), (rcu, wcu) in recorder.units.items():
        if phase not in TARGET_PER_SECOND or not run.ops.get(phase):
            continue
        factor = TARGET_PER_SECOND[phase] / run.ops[phase]
        kinds = {_kind(m) for m in ENTITY.finditer(key)}
        for kind in kinds:  # spread over the kind's entities at the target
            seen = max(1, len(recorder.entities[(phase, kind)]))
            factor *= seen / TARGET_ENTITIES[kind]
        if PER_BATCH in kinds:  # more traffic, more ledgers: one ledger's whole life as one second's load
            factor = 1.0
        name = unsharded(key) if merge else key
        totals[name][0] += rcu * factor
        totals[name][1] += wcu * factor
    return sorted((Projection(k, r, w) for k, (r, w) in totals.items()), key=lambda p: p.load, reverse=True)


def totals(recorder: Recorder, run: Run) -> str:
    """Per table and index: projected RCU/s and WCU/s at the target (every key), mean entry size, monthly cost."""
    by_label: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (phase, key), (rcu, wcu) in recorder.units.items():
        if phase in TARGET_PER_SECOND and run.ops.get(phase):
            factor = TARGET_PER_SECOND[phase] / run.ops[phase]
            label = key.partition(" ")[0]
            by_label[label][0] += rcu * factor
            by_label[label][1] += wcu * factor
    lines = ["### Every table and index at the target traffic (all keys)", "",
             "| table[.index] | RCU/s | WCU/s | mean entry written (bytes) | USD / month (on demand, sustained) |",
             "|---|---:|---:|---:|---:|"]
    month_rcu = month_wcu = 0.0
    def dollars(units: list[float]) -> float:
        return (units[0] * PRICE_PER_MILLION_RRU + units[1] * PRICE_PER_MILLION_WRU) * SECONDS_PER_MONTH / 1e6

    for label, (rcu, wcu) in sorted(by_label.items(), key=lambda kv: -dollars(kv[1])):
        sizes = recorder.sizes.get(label) or []
        cost = dollars([rcu, wcu])
        month_rcu, month_wcu = month_rcu + rcu, month_wcu + wcu
        mean = f"{sum(sizes) / len(sizes):,.0f}" if sizes else "-"
        lines.append(f"| `{label}` | {rcu:,.0f} | {wcu:,.0f} | {mean} | {cost:,.0f} |")
    total = dollars([month_rcu, month_wcu])
    lines.append(f"| **total** | {month_rcu:,.0f} | {month_wcu:,.0f} | | {total:,.0f} |")
    return "\n".join(lines)


def table(title: str, rows: list[Projection], top: int = 10) -> str:
    """The ``top`` hottest keys as a Markdown table."""
    budget = f"of budget ({BUDGET_RCU:.0f} RCU/s, {BUDGET_WCU:.0f} WCU/s)"
    lines = [f"### {title}", "", f"| key (table[.index] partition value) | RCU/s | WCU/s | {budget} |",
             "|---|---:|---:|---:|"]
    for row in rows[:top]:
        flag = ("  **OVER** (known)" if row.known else "  **OVER**") if row.over else ""
        lines.append(f"| `{row.key}` | {row.rcu:,.1f} | {row.wcu:,.1f} | {row.load:.0%}{flag} |")
    return "\n".join(lines)


def start(recorder_holder: list[Recorder]) -> Iterator[tuple[str, str, Recorder]]:
    """Start moto, the proxy and the local stack; yields (API URL, admin key, recorder); stops them."""
    from local_stack.__main__ import start_moto

    template = json.loads((ROOT / "infra" / "resources.json").read_text())
    moto_port = free_port()
    moto = start_moto("127.0.0.1", moto_port)
    recorder = Recorder(f"http://127.0.0.1:{moto_port}", schemas(template))
    proxy = proxy_server(recorder)
    port, admin_key = free_port(), "msk_bench_hot_keys_admin_0123456789"
    env = {**os.environ, "PORT": str(port), "ADMIN_API_KEY": admin_key, "LOCAL_STACK_START_SECONDS": "180",
           "AWS_ENDPOINT_URL": f"http://127.0.0.1:{proxy.server_address[1]}", "POWERTOOLS_METRICS_DISABLED": "true",
           "AWS_CONNECT_TIMEOUT_SECONDS": "10", "AWS_READ_TIMEOUT_SECONDS": "60"}
    log = (ROOT / ".local").joinpath("hot_keys_stack.log")
    log.parent.mkdir(exist_ok=True)
    with log.open("wb") as out:
        stack = subprocess.Popen([sys.executable, "-m", "local_stack"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_answering(f"{base_url}/v1/health", stack, "local stack", log)
        recorder_holder.append(recorder)
        yield base_url, admin_key, recorder
    finally:
        stack.send_signal(signal.SIGTERM)
        try:
            stack.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stack.kill()
        proxy.shutdown()
        moto.terminate()
        moto.wait(timeout=10)


def main() -> int:
    """Run the replay, print both tables; with ``--check`` exit 1 when a key is over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a key projects above half a partition's limits")
    parser.add_argument("--scale", type=int, default=1, help="multiply the replayed operations")
    args = parser.parse_args()
    started = time.monotonic()
    holder: list[Recorder] = []
    for base_url, admin_key, recorder in start(holder):
        run = drive(base_url, admin_key, recorder, args.scale, random.Random(24))
    recorder = holder[0]
    before, after = project(recorder, run, merge=True), project(recorder, run, merge=False)
    replayed = ", ".join(f"{n} {p}" for p, n in run.ops.items())
    print(f"Replayed {replayed} in {time.monotonic() - started:.0f} s; projected to "
          + ", ".join(f"{r:,}/s {p}" for p, r in TARGET_PER_SECOND.items()) + ".\n")
    print(table("Ten hottest keys before sharding (write shards merged)", before))
    print()
    print(table("Ten hottest keys after sharding (as the code writes them)", after))
    print()
    print(totals(recorder, run))
    print()
    for row in (p for p in after if p.over):
        reason = KNOWN_OVER.get(row.key.partition(" ")[0])
        print(f"over: {row.key} at {row.load:.0%} of budget: " + (f"known ({reason})" if reason else "NOT KNOWN"))
    failed = [p for p in after if p.failed]
    if failed:
        print(f"FAIL: {len(failed)} key(s) over budget: " + ", ".join(p.key for p in failed))
    else:
        print(f"OK: every other key under half a partition's limits; known ones under {KNOWN_CEILING / 2:.0%} of a partition's.")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
