"""Backfill the profile posting lists of existing users (operator command, issue 13).

Reads the Users table once (a Scan: this is an offline command, never a request path) and files
every user under its posting keys (:func:`chalicelib.profiles.index.posting_keys`) through
:func:`chalicelib.search.postings.apply`, exactly as the Users-stream consumer does. Applying is
idempotent and version-checked, so the command is safe to run while the consumer runs and to
run again: a user whose current version is applied already is left alone, and a newer change
applied by the consumer meanwhile is never overwritten by the older image read here.

Run it once after deploying the Users stream: users written before it have no stream record.
(A later change of what a user is filed under, :mod:`chalicelib.profiles.index`, is not a
backfill: the applied version equals the user's, so nothing would move; such a change needs
the lists rebuilt under a new namespace. The stem lists of issue 25 did so (``profiles.v2``), and
the covering entries of issue 20 again: the namespace is ``chalicelib.profiles.index``'s
``NAMESPACE`` (``profiles.v3``), and running this command once after deploying files every user
there.)

Usage::

    python scripts/profile_backfill.py      # tables from the environment (USERS_TABLE, ...)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chalicelib.search.postings import PostingKey

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def users() -> Iterator[dict[str, Any]]:
    """Every Users item (paged Scan)."""
    from chalicelib import storage
    from chalicelib.config import settings

    for page in storage.dynamodb().get_paginator("scan").paginate(TableName=settings().USERS_TABLE):
        for item in page.get("Items", []):
            yield storage.from_item(item) or {}


def filed(items: Iterable[dict[str, Any]]) -> Iterator[tuple[str, int, set[PostingKey]]]:
    """``(userId, version, posting keys)`` of each Users item, as the stream consumer files it."""
    from chalicelib.profiles.facets import facets
    from chalicelib.profiles.index import posting_keys
    from chalicelib.users.records import record
    from chalicelib.users.repository import version_of

    for item in items:
        user = record(item)
        yield user["userId"], version_of(user), posting_keys(facets(user))


def backfill() -> dict[str, int]:
    """File every user not yet filed at its current version; returns ``{"users", "applied"}``.

    Raises
    ------
    chalicelib.storage.Contention
        As :func:`chalicelib.search.postings.apply` (run the command again).
    """
    from chalicelib.profiles.index import NAMESPACE
    from chalicelib.search import postings

    seen = applied = 0
    for user_id, version, keys in filed(users()):
        seen += 1
        applied += postings.apply(NAMESPACE, user_id, version, keys)
    return {"users": seen, "applied": applied}


def main() -> int:
    """Run the backfill and print what it did."""
    print(backfill())
    return 0


if __name__ == "__main__":
    sys.exit(main())
