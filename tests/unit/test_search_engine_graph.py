"""The search engine's place in the module graph: no import cycle, no domain below it.

``chalicelib.search`` importing no domain package is an import contract (pyproject.toml,
``search-engine``); this test adds what import-linter does not check: in the search area no package imports back
into a package that imports it at run time (the former ``listings.service <-> listings.search <->
listings.repository`` loop). The HTTP edge (``listings.routes``) names the search modules in its
``lazy_imports`` block and loads them on first call (:mod:`chalicelib.kernel.lazy_imports`), so routes modules
are left out of the run-time package check. That no module of ``chalicelib`` imports itself through others is
``tests/unit/test_import_cycles.py``.
"""

from __future__ import annotations

from itertools import product

import grimp

SEARCH_AREA = ("chalicelib.search", "chalicelib.listings", "chalicelib.listings.search", "chalicelib.profiles",
               "chalicelib.saved_searches")


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
