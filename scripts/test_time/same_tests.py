"""Run "the same tests" as a baseline commit: a pytest plugin and the list it reads.

``make test`` of today holds more tests than the baseline (12d280e, ``baseline-12d280e.txt``,
895 node ids) because the branches keep adding them. To compare wall times like for like,
``measure.sh`` runs today's ``make test`` (same Makefile, same workers) restricted to the
tests that already existed at the baseline:

* ``python scripts/test_time/same_tests.py BASELINE_IDS CURRENT_IDS`` prints the current node
  ids that are baseline tests. Tests moved between files when the suite was split by what they
  need (``tests/unit/test_x.py`` -> ``tests/integration/test_x_api.py``), so a test is matched by
  its name within its module (``Class::test[param]``); a name that exists in several current
  files is matched once, preferring a file of the same name. Baseline tests without a match
  (renamed, merged, or moved to ``make package``) are counted on stderr.
* ``PYTEST_ADDOPTS="-p same_tests" SAME_TESTS=<that list>`` (with this directory on
  ``PYTHONPATH``) makes every pytest run deselect the tests not in the list.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from pathlib import Path

import pytest


def _name(nodeid: str) -> str:
    return nodeid.split("::", 1)[1]


def _module(nodeid: str) -> str:
    return Path(nodeid.split("::", 1)[0]).name


def select(baseline: list[str], current: list[str]) -> tuple[list[str], list[str]]:
    """The current node ids matching a baseline test, and the baseline ids without a match.

    Parameters
    ----------
    baseline, current:
        pytest node ids (``path::[Class::]test[params]``).

    Returns
    -------
    tuple[list[str], list[str]]
        ``(selected current ids in current order, unmatched baseline ids)``.
    """
    by_name: dict[str, list[str]] = defaultdict(list)
    for nodeid in current:
        by_name[_name(nodeid)].append(nodeid)
    chosen: set[str] = set()
    unmatched: list[str] = []
    for nodeid in baseline:
        candidates = [c for c in by_name.get(_name(nodeid), []) if c not in chosen]
        if not candidates:
            unmatched.append(nodeid)
            continue
        same_module = [c for c in candidates if _module(c) == _module(nodeid)]
        chosen.add((same_module or candidates)[0])
    return [c for c in current if c in chosen], unmatched


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep only the items listed in the file ``$SAME_TESTS`` (one node id a line)."""
    listed = set(Path(os.environ["SAME_TESTS"]).read_text().splitlines())
    kept = [item for item in items if item.nodeid in listed]
    deselected = [item for item in items if item.nodeid not in listed]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


if __name__ == "__main__":
    base_ids = [line for line in Path(sys.argv[1]).read_text().splitlines() if "::" in line]
    current_ids = [line for line in Path(sys.argv[2]).read_text().splitlines() if "::" in line]
    selected, missing = select(base_ids, current_ids)
    print("\n".join(selected))
    print(f"{len(selected)} of {len(base_ids)} baseline tests matched; {len(missing)} without a match:", file=sys.stderr)
    for nodeid in missing:
        print(f"  {nodeid}", file=sys.stderr)
