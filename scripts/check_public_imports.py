"""Fail when any Python file of the tree imports a private part of moto or botocore.

The tree runs on moto and botocore as they ship: a dependency upgrade is a version bump. So
moto is used only through its public API, the modules ``moto`` (``mock_aws``), ``moto.server``
(``ThreadedMotoServer``, the ``moto_server`` command) and ``moto.core``'s top-level names; and
nothing is imported from botocore's response parsers (``botocore.parsers``: the place a private
parse hook would be overridden). import-linter (``make lint``) sees only ``chalicelib`` and
external packages as a whole, so this check parses every file of the tree with :mod:`ast`.

Usage: ``python scripts/check_public_imports.py [ROOT]`` (default: the checkout); exit status 1
and one line per offending import when there is one.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Modules the tree may import from moto.
PUBLIC_MOTO = frozenset({"moto", "moto.server", "moto.core"})
#: Modules no file may import (private hooks of botocore).
FORBIDDEN = frozenset({"botocore.parsers"})
#: The one file still reaching into moto: the search benchmark (it loads items straight into moto's
#: tables and times moto's work at its request hook) is being rewritten to go through the public API
#: with a recording proxy; it runs on its own, never in a test or the local stack. To end empty.
EXEMPT = frozenset({"bench/search.py"})
#: Folders that are not the tree's own code.
SKIPPED = frozenset({".venv", ".venv-compat", "build", "out", "node_modules", ".git", "__pycache__"})


def offending_imports(source: str) -> Iterator[tuple[int, str]]:
    """Each ``(line, module or name)`` of ``source`` (Python text) that imports a private part of
    moto or a forbidden botocore module: a ``moto`` submodule other than :data:`PUBLIC_MOTO`, a
    name starting with ``_`` from a public moto module, or a module of :data:`FORBIDDEN`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private(alias.name):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _private(node.module):
                yield node.lineno, node.module
            elif node.module in PUBLIC_MOTO:
                for alias in node.names:
                    if alias.name.startswith("_") or _private(f"{node.module}.{alias.name}", submodule=True):
                        yield node.lineno, f"{node.module}.{alias.name}"


def _private(module: str, submodule: bool = False) -> bool:
    """Whether importing ``module`` reaches past moto's public modules or into :data:`FORBIDDEN`.
    ``submodule``: ``module`` is ``package.name`` from ``from package import name``, private only
    when that name is one of moto's own submodules (``from moto import dynamodb``)."""
    if any(module == name or module.startswith(name + ".") for name in FORBIDDEN):
        return True
    if module != "moto" and not module.startswith("moto."):
        return False
    if module in PUBLIC_MOTO:
        return False
    if submodule:
        import importlib.util

        try:
            return importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            return False
    return True


def python_files(root: Path) -> Iterator[Path]:
    """The tree's Python files under ``root`` (virtualenvs and build output left out)."""
    for path in sorted(root.rglob("*.py")):
        if not SKIPPED & set(path.relative_to(root).parts):
            yield path


def main(argv: list[str]) -> int:
    """Check every file; print the offending imports; 1 when there is one, else 0."""
    root = Path(argv[0]).resolve() if argv else ROOT
    found = 0
    for path in python_files(root):
        if path.relative_to(root).as_posix() in EXEMPT:
            continue
        for line, name in offending_imports(path.read_text(encoding="utf-8")):
            print(f"{path.relative_to(root)}:{line}: imports {name} (moto and botocore only through their public API)")
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
