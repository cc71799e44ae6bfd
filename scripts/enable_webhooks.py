"""Re-enable, in bulk, the webhooks the failure policy switched off (operator command).

When deliveries failed because of a fault on our side (an outage, a bad deploy, the network
between Lambda and the receivers), the failure policy (spec §8: five consecutive failures) may
have switched off many healthy webhooks. This command switches back on every webhook disabled
at or after ``--since`` (ISO 8601 UTC, the ``disabledAt`` the policy wrote), with ``failCount`` 0,
exactly as its owner's "Enable" in the Dashboard does (``webhooks.repository.enable_owned``).
Events that were not delivered while a webhook was off are not replayed; owners redeliver them
from the delivery log.

It reads the Webhooks table once (a Scan: an offline command, never a request path) and prints
what it would do (``--dry-run``) or did, one webhook id per line, then a count.

Usage::

    python scripts/enable_webhooks.py --since 2026-11-24T18:00:00Z [--until ...] [--dry-run]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def disabled_between(since: str, until: str | None) -> Iterator[dict[str, Any]]:
    """Every webhook whose ``disabledAt`` lies in ``[since, until]`` (ISO 8601 UTC strings compare in time order)."""
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage

    for page in storage.dynamodb().get_paginator("scan").paginate(TableName=settings().WEBHOOKS_TABLE):
        for raw in page.get("Items", []):
            item = storage.from_item(raw) or {}
            disabled_at = str(item.get("disabledAt") or "")
            if not item.get("active") and disabled_at >= since and (until is None or disabled_at <= until):
                yield item


def enable(since: str, until: str | None = None, dry_run: bool = False) -> list[str]:
    """Switch on the webhooks disabled in ``[since, until]``; returns their ids (those it would switch with ``dry_run``)."""
    from chalicelib.kernel import clock
    from chalicelib.webhooks import repository

    done = []
    for item in disabled_between(since, until):
        webhook_id = str(item["webhookId"])
        if dry_run or repository.enable_owned(webhook_id, str(item["ownerId"]), clock.iso()) is not None:
            done.append(webhook_id)
    return done


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, enable, print the ids and the count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", required=True, help="ISO 8601 UTC: webhooks disabled at or after this time")
    parser.add_argument("--until", help="ISO 8601 UTC: ... and at or before this time")
    parser.add_argument("--dry-run", action="store_true", help="list them, change nothing")
    args = parser.parse_args(argv)
    ids = enable(args.since, args.until, args.dry_run)
    for webhook_id in ids:
        print(webhook_id)
    print(f"{len(ids)} webhook(s) {'would be ' if args.dry_run else ''}enabled", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
