"""No import cycle in ``chalicelib``, read from grimp's graph (the one import-linter checks).

Two kinds of cycle are looked for:

* between modules: ``a`` imports ``b`` which (through others) imports ``a``;
* between the children of one package, each subpackage taken as a whole: ``webhooks.signing``
  importing ``webhooks.delivery.envelope`` while ``webhooks.delivery.attempt`` imports
  ``webhooks.signing`` was such a cycle, although no two modules formed one.

Cycles are the strongly connected components of the graph with more than one node (Tarjan,
"Depth-first search and linear graph algorithms", SIAM J. Comput. 1(2), 1972).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import grimp


def _components(nodes: Iterable[str], edges: Callable[[str], Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted, in node order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in edges(node):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return found


def test_the_components_of_a_graph_with_a_cycle_are_found() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
    assert _components(graph, lambda node: graph[node]) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph("chalicelib")
    assert _components(graph.modules, graph.find_modules_directly_imported_by) == []


def test_no_package_has_children_that_import_each_other_in_a_cycle() -> None:
    graph = grimp.build_graph("chalicelib")
    packages = {parent for module in graph.modules for parent in [module.rpartition(".")[0]] if parent}
    cycles = []
    for package in sorted(packages):
        prefix = package + "."

        def child(module: str, prefix: str = prefix) -> str | None:
            """The child of the package that ``module`` is or lies in (``None``: outside the package)."""
            return prefix + module[len(prefix):].split(".")[0] if module.startswith(prefix) else None

        arrows: dict[str, set[str]] = {}
        for module in graph.modules:
            importer = child(module)
            for imported in graph.find_modules_directly_imported_by(module):
                target = child(imported)
                if importer and target and target != importer:
                    arrows.setdefault(importer, set()).add(target)
        cycles += _components(arrows, lambda node, arrows=arrows: sorted(arrows.get(node, ())))
    assert cycles == []
