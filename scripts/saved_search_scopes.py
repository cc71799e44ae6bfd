"""Recount the saved searches of each percolator scope (operator command).

The percolator reads one item before anything else, the count of saved searches per scope
(PercolatorTable ``#scopes``, :func:`chalicelib.saved_searches.repository.scope_counts`), and
stops when no saved search could match. The transactions that create and delete saved searches
keep it exact; saved searches stored before the count existed are not in it. This command Scans
the SavedSearches table (an offline Scan, never a request path), counts every saved search
under its scope (:func:`chalicelib.saved_searches.postings.scope_of` of its first posting key)
and writes the whole item. Run it once after deploying the count, while no saved search is
created or deleted (a change between the Scan and the write is not in the recount; run it again
to settle).

Usage::

    python scripts/saved_search_scopes.py     # tables from the environment (SAVED_SEARCHES_TABLE, PERCOLATOR_TABLE)
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def saved_searches() -> Iterator[dict[str, Any]]:
    """Every saved search item (paged Scan; the owners' counter items are left out)."""
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage

    for page in storage.dynamodb().get_paginator("scan").paginate(TableName=settings().SAVED_SEARCHES_TABLE):
        for item in page.get("Items", []):
            found = storage.from_item(item) or {}
            if str(found.get("savedSearchId", "")).startswith("ss_"):
                yield found


def recount() -> dict[str, int]:
    """Write the scopes item with the counts of every stored saved search; returns ``{scope: count}``."""
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage
    from chalicelib.saved_searches import postings, repository

    counts = Counter(postings.scope_of(str(s["postings"][0])) for s in saved_searches() if s.get("postings"))
    item = {"postingKey": repository.SCOPES, **{repository.SCOPE_PREFIX + scope: n for scope, n in counts.items()}}
    storage.put(settings().PERCOLATOR_TABLE, item)
    return dict(counts)


def main() -> int:
    """Run the recount and print the counts."""
    print(recount())
    return 0


if __name__ == "__main__":
    sys.exit(main())
