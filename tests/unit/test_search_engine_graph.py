"""The search engine's place in the module graph (issue 20): no import cycle, no domain below it.

``chalicelib.search`` importing no domain package is an import contract (pyproject.toml,
``search-engine``); this test adds what import-linter does not check: the module graph of
``chalicelib`` has no cycle, and in the search area no package imports back into a package
that imports it at run time (the former ``listings.service <-> listings.search <->
listings.repository`` loop). The HTTP edge (``listings.routes``) names the search modules for
type checking only and loads them lazily (:mod:`chalicelib.lazy`), so it is left out of the
run-time package check.
"""

from __future__ import annotations

import sys
from itertools import product

import grimp

SEARCH_AREA = ("chalicelib.search", "chalicelib.listings", "chalicelib.listings.search", "chalicelib.profiles",
               "chalicelib.saved_searches")


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.find_modules_directly_imported_by(node) & modules:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in sorted(modules):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_module_graph_of_chalicelib_has_no_cycle() -> None:
    graph = grimp.build_graph("chalicelib")
    assert _cycles(graph, set(graph.modules)) == []


def test_no_package_of_the_search_area_imports_back_at_run_time() -> None:
    graph = grimp.build_graph("chalicelib", exclude_type_checking_imports=True)

    def own(package: str) -> set[str]:
        inner = [p for p in SEARCH_AREA if p != package and p.startswith(package + ".")]
        # A package's routes module is the HTTP edge above it (it names search modules in its
        # lazy_imports block, resolved on first call): an edge importing both sides is no loop.
        return {m for m in graph.modules if (m == package or m.startswith(package + "."))
                and not m.endswith(".routes")
                and not any(m == p or m.startswith(p + ".") for p in inner)}

    def imports(a: str, b: str) -> bool:
        return any(graph.direct_import_exists(importer=x, imported=y) for x, y in product(own(a), own(b)))

    loops = [(a, b) for a, b in product(SEARCH_AREA, SEARCH_AREA) if a < b and imports(a, b) and imports(b, a)]
    assert loops == []
    assert not any(imports("chalicelib.search", p) for p in SEARCH_AREA if p != "chalicelib.search")
