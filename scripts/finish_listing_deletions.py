"""Reject the requests deleted listings left PENDING (operator command).

A listing deletion rejects its first pending requests in the deleting transaction and writes a
``listing.deleted`` event for the rest; the ``finish_listing_deletions`` stream consumer rejects
them. When that consumer kept failing past its retries (a dependency down for longer, a bug),
the event's batch lands in ``EventsStreamFailureQueue`` and the requests stay PENDING. Once the
cause is fixed, this command runs the consumer's work again for every ``listing.deleted`` event
still in the Events table (events live 7 days, ``outbox.EVENT_TTL_DAYS``); it is idempotent
(rejections are conditional on PENDING), so it may run while the stream flows and as often as
needed.

It reads the Events table once (a Scan: an offline command, never a request path) and prints, one
line per event, the listing id and the number of requests it rejected, then a count.

Usage::

    python scripts/finish_listing_deletions.py
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


def deletions() -> Iterator[dict[str, Any]]:
    """The ``data`` of every ``listing.deleted`` event in the Events table."""
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import outbox, storage

    for page in storage.dynamodb().get_paginator("scan").paginate(TableName=settings().EVENTS_TABLE):
        for raw in page.get("Items", []):
            item = storage.from_item(raw) or {}
            if item.get("type") == outbox.LISTING_DELETED:
                yield dict(item["data"])


def finish() -> list[tuple[str, int]]:
    """Reject the PENDING requests of every deleted listing with an event; ``(listingId, rejected)`` pairs."""
    from chalicelib.workflows import listing_deletion

    return [(str(data["listingId"]), listing_deletion.reject_remaining(data)) for data in deletions()]


def main(argv: list[str] | None = None) -> int:
    """Parse the (no) arguments, finish the deletions, print them and the count."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.parse_args(argv)
    done = finish()
    for listing_id, rejected in done:
        print(f"{listing_id} {rejected}")
    print(f"{sum(n for _, n in done)} request(s) rejected for {len(done)} deleted listing(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
