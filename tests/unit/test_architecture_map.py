"""docs/architecture.md stays true: its diagram draws exactly the imports between domain packages.

The import contracts (pyproject.toml, `make lint`) forbid arrows that run upwards; this test
keeps the picture in step with the code both ways: every direct import from one domain package
into another is drawn, and every drawn arrow is an import (grimp, the graph import-linter reads).
Imports of ``auth`` are left out of the drawing on purpose (every package uses the ``Caller``).
"""

from __future__ import annotations

import re
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
#: Packages drawn in the diagram, and the ones whose imports it leaves out.
LEFT_OUT = {"auth"}


def _drawn() -> tuple[set[str], set[tuple[str, str]]]:
    """The packages and ``(importer, imported)`` arrows of the mermaid diagram (``a & b --> c & d`` lines)."""
    diagram = DOC.read_text(encoding="utf-8").split("```mermaid", 1)[1].split("```", 1)[0]
    nodes = set(re.findall(r"^\s*(\w+)[\[(]", diagram, flags=re.MULTILINE)) - {"app"}
    arrows: set[tuple[str, str]] = set()
    for line in diagram.splitlines():
        sides = line.split("-->")
        if len(sides) != 2:
            continue
        for importer in sides[0].split("&"):
            for imported in sides[1].split("&"):
                arrows.add((importer.strip(), imported.strip()))
    return nodes, {(a, b) for a, b in arrows if a != "app" and b not in LEFT_OUT}


def _imported(packages: set[str]) -> set[tuple[str, str]]:
    """Every ``(importer, imported)`` pair of packages with a direct import between their modules."""
    graph = grimp.build_graph("chalicelib")

    def modules(package: str) -> set[str]:
        return {m for m in graph.modules if m == f"chalicelib.{package}" or m.startswith(f"chalicelib.{package}.")}

    found = set()
    for importer in packages:
        for imported in packages - {importer} - LEFT_OUT:
            if any(graph.direct_import_exists(importer=a, imported=b) for a in modules(importer) for b in modules(imported)):
                found.add((importer, imported))
    return found


def test_the_diagram_draws_every_import_between_domain_packages_and_no_other() -> None:
    nodes, drawn = _drawn()
    assert {"listings", "workflows", "auth"} <= nodes  # the diagram was found and read
    actual = _imported(nodes)
    assert sorted(actual - drawn) == [], "imports missing from the diagram in docs/architecture.md"
    assert sorted(drawn - actual) == [], "arrows in docs/architecture.md that no import backs"
