"""Memory of the local stack under a realistic load: the embedded AWS's resident memory as listings are loaded.

The local stack of this tree starts as ``make run DEMO=1`` does (the demo data seeded), behind
the recording proxy (:mod:`bench.stack`, started with ``demo=True``). Realistic listings
(:mod:`bench.corpus`: titles of 4-10 words, descriptions of 30-150 Zipf words, skewed
categories and cities) are then loaded through the public API in steps of ``--step``: the owners
create them, the administrator approves them through the review queue and the live indexer
indexes them (:func:`bench.corpus.wait_findable`: every one findable and the indexer quiet).
After each step the table gets a row: the listings loaded, the resident memory (``VmRSS``) of the
embedded AWS (``local_stack.moto_server``) and of the stack's own process (the API, the event
runner and the lane workers), and the embedded AWS's growth per listing since the previous row.

The embedded AWS holds the items in moto's objects (about 4.3 KB per SearchIndex item), every
stream record and every shard iterator it handed out (docs/operations.md, "Memory"), so it grows
with what is stored and with what was done; this benchmark bounds it at ``make run DEMO=1`` plus
5,000 realistic listings.

With ``--baseline REV`` the same load runs first on the tree at ``REV`` (extracted by
:func:`bench.stack.tree`): before and after in one run, on the same corpus.

Budget (``--check`` exits 1 when missed): this tree's embedded AWS at most :data:`MAX_AWS_MB` MB
once ``--listings`` (default 5,000) are loaded.

Usage: ``python bench/memory.py [--listings 5000] [--step 1000] [--baseline REV] [--max-aws-mb 3000] [--check]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus
from bench.stack import running_stack, tree

#: Listings loaded by default (on top of ``make run DEMO=1``'s demo data).
LISTINGS = 5_000
#: Listings per step (one table row each).
STEP = 1_000
#: Budget: resident memory of the embedded AWS, MB, once :data:`LISTINGS` are loaded.
MAX_AWS_MB = 3_000.0


def load_side(label: str, rev: str, listings: int, step: int) -> float:
    """Start the stack of ``rev`` (this tree when empty) with the demo data, load ``listings`` realistic
    listings in steps of ``step``, printing a row after each; returns the embedded AWS's last resident MB."""
    started = time.monotonic()
    with tree(rev) as root, running_stack(root, label, images=False, log_name="memory", demo=True) as stack:
        bodies = corpus.listings(listings, stack.admin().get("/v1/categories").json()["categories"])
        owners = corpus.create_users(stack, max(4, listings // corpus.OWNERS_PER_LISTINGS))
        loaded, aws_mb = 0, stack.aws_rss_mb()
        print(f"{label:<10} {loaded:>8} {aws_mb:>15,.0f} {stack.stack_rss_mb():>8,.0f} {'':>18} {time.monotonic() - started:>9.0f}")
        while loaded < listings:
            size = min(loaded + step, listings)
            corpus.approve_all(stack, corpus.create_listings(stack, bodies[loaded:size], owners))
            corpus.wait_findable(stack, corpus.category_counts(bodies[:size]))
            now_mb = stack.aws_rss_mb()
            per_listing_kb = (now_mb - aws_mb) * 1024 / (size - loaded)
            print(f"{label:<10} {size:>8,} {now_mb:>15,.0f} {stack.stack_rss_mb():>8,.0f} {per_listing_kb:>18,.0f} "
                  f"{time.monotonic() - started:>9.0f}", flush=True)
            loaded, aws_mb = size, now_mb
    return aws_mb


def main(argv: list[str] | None = None) -> int:
    """Load the listings step by step on each side, a row per step; with ``--check`` return 1 when the budget is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--listings", type=int, default=LISTINGS, help="realistic listings to load")
    parser.add_argument("--step", type=int, default=STEP, help="listings per step (a table row each)")
    parser.add_argument("--baseline", default="", help="the baseline commit, loaded first ('' for none)")
    parser.add_argument("--max-aws-mb", type=float, default=MAX_AWS_MB, help="the budget, MB")
    parser.add_argument("--check", action="store_true", help="exit 1 when the embedded AWS ends above the budget")
    args = parser.parse_args(argv)
    print(f"{'tree':<10} {'listings':>8} {'embedded AWS MB':>15} {'stack MB':>8} {'AWS KB per listing':>18} {'elapsed s':>9}")
    if args.baseline:
        load_side("before", args.baseline, args.listings, max(1, args.step))
    aws_mb = load_side("after", "", args.listings, max(1, args.step))
    over = aws_mb > args.max_aws_mb
    print(f"budget: embedded AWS <= {args.max_aws_mb:,.0f} MB at {args.listings:,} listings -> "
          f"{'OVER' if over else 'ok'} ({aws_mb:,.0f} MB)")
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
