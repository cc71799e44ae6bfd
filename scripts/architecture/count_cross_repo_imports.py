"""Count the imports of a domain's table-owning module from outside its package (grimp).

A domain package owns its tables; only the package itself may import the modules that name
them (its ``repository`` and, for webhooks and the Dashboard, ``delivery.attempt_log`` and
``session_store``). This prints every direct import of such a module from another package,
one line each (``importer -> imported``, with line numbers), and their count; ``--check``
exits 1 when there is any. The import contracts in ``pyproject.toml`` (``*-own-*``) enforce
the same rule in ``make lint``; this script gives the number the issue asks for.

Usage: ``.venv/bin/python scripts/architecture/count_cross_repo_imports.py [--check]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
#: Modules that read or write a table, besides every ``<domain>.repository``.
OTHER_TABLE_MODULES = ("chalicelib.webhooks.delivery.attempt_log", "chalicelib.dashboard.session_store")


def domain(module: str) -> str:
    """The package ``module`` belongs to (``chalicelib.users.service`` -> ``users``); shared modules are their own."""
    return module.split(".")[1] if module.count(".") >= 1 else module


def owns_a_table(module: str) -> bool:
    """Whether ``module`` is a table-owning module (a domain's repository, or one of :data:`OTHER_TABLE_MODULES`)."""
    parts = module.split(".")
    return (len(parts) >= 3 and parts[-1] == "repository") or module in OTHER_TABLE_MODULES


def cross_imports(graph: grimp.ImportGraph) -> list[tuple[str, str, tuple[int, ...]]]:
    """Every direct import of a table-owning module from another package: ``(importer, imported, lines)``."""
    found = []
    for imported in sorted(m for m in graph.modules if owns_a_table(m)):
        for importer in sorted(graph.find_modules_that_directly_import(imported)):
            if domain(importer) != domain(imported):
                details = graph.get_import_details(importer=importer, imported=imported)
                found.append((importer, imported, tuple(d["line_number"] for d in details)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when any cross-package import exists")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph("chalicelib", cache_dir=None)
    rows = cross_imports(graph)
    for importer, imported, lines in rows:
        print(f"{importer} -> {imported} (line {', '.join(map(str, lines))})")
    services = sum(1 for importer, _, _ in rows if importer.endswith(".service"))
    print(f"cross-package imports of table-owning modules: {len(rows)} (from services: {services})")
    return 1 if args.check and rows else 0


if __name__ == "__main__":
    sys.exit(main())
