"""Backfill the administrators' user-list attributes of existing users (operator command).

``GET /v1/admin/users`` (and the Dashboard's Users page) read the Users table's ``adminByName``,
``adminByCountry``, ``adminByLevel`` and ``adminByCountryLevel`` indexes, keyed by attributes that
every user write now carries (``nameKey``, ``adminAll``, ``adminLevel``, ``adminCountryLevel``:
:func:`chalicelib.users.repository.admin_list_attributes`). Users written before those indexes
existed lack them and are missing from the list until their next profile change. This command,
run once after deploying the indexes (and harmless to run again):

1. reads every user through the ``bySearchShard`` index, one shard (``S0``..``S7``) after another,
   page by page (Query, never a Scan, and outside any request path);
2. for each user whose attributes are missing or stale, writes them with one UpdateItem,
   conditional on the display name, level and country it read, so a profile change in between
   (which writes them itself) wins; such a user is counted ``changed`` and left alone.

It prints ``{"read": n, "current": n, "written": n, "changed": n}``. Reads: one Query page per
1 MB of users; writes: one UpdateItem per user that lacked the attributes.

Usage::

    python scripts/admin_users_backfill.py             # tables from the environment (USERS_TABLE)
    python scripts/admin_users_backfill.py --dry-run   # count only, write nothing
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def backfill(dry_run: bool = False) -> dict[str, int]:
    """Give every user the list attributes of :func:`admin_list_attributes`; returns the counts."""
    from chalicelib.users import repository

    counts = {"read": 0, "current": 0, "written": 0, "changed": 0}
    for shard in range(repository.SEARCH_SHARDS):
        for user in repository.iter_shard(f"S{shard}"):
            counts["read"] += 1
            listed = repository.admin_list_attributes(
                user["userId"], user["displayName"], user.get("country"), int(user["verifiedLevel"])
            )
            stored = {name: user.get(name) for name in ("nameKey", "adminAll", "adminLevel", "adminCountryLevel")}
            if stored == {**dict.fromkeys(stored), **listed}:
                counts["current"] += 1
            elif dry_run or repository.set_admin_list_attributes(user, listed):
                counts["written"] += 1
            else:
                counts["changed"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    """Command line: ``[--dry-run]``; prints the counts as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="count the users to backfill, write nothing")
    args = parser.parse_args(argv)
    print(json.dumps(backfill(args.dry_run)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
