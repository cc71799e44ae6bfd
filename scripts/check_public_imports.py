"""Fail when any Python file of the tree imports a private part of moto or botocore.

The tree runs on moto and botocore as they ship: a dependency upgrade is a version bump. So
moto is used only through its public API, the modules ``moto`` (``mock_aws``), ``moto.server``
(``ThreadedMotoServer``, the ``moto_server`` command) and ``moto.core``'s top-level names; and
no private botocore name is imported (a module or name starting with ``_``), nor anything from
botocore's response parsers (``botocore.parsers``: the place a private parse hook would be
overridden). The local stack's embedded AWS is the one exception (:data:`EMBEDDED_AWS`).
import-linter (``make lint``) sees only ``chalicelib`` and external packages as a whole, so this
check parses every file of the tree with :mod:`ast`.

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
#: The one exception: the local stack's embedded AWS (``make run``, the end-to-end tier, the
#: benchmarks), whose shim (:mod:`local_stack.moto_server`'s docstring: one request at a time,
#: transactions rolled back from an undo log instead of table copies, a Query reading its
#: partition, FIFO deduplication and ``ClientRequestToken`` as in AWS) replaces parts of moto's
#: internals, and the tests of exactly that module (marked ``embedded_aws``; ``make compat``
#: deselects them). It stays because moto as it ships does not hold a realistic load:
#: ``DynamoDBBackend.transact_write_items`` deep-copies every table a ``TransactWriteItems`` names,
#: once per item, and every copy stays in moto's model registry (``instances_tracked``) until a
#: reset. Measured on ``make run`` with moto 5.2.5 as it ships: the embedded AWS grew from 92 MB to
#: 3.5 GB after about 100 listings created and 95 approved. Everything else (production, the unit
#: and integration tiers) uses moto and botocore through their public API only.
EMBEDDED_AWS = frozenset({
    "local_stack/moto_server.py",
    "tests/integration/test_local_moto_server.py",
})
#: Folders that are not the tree's own code.
SKIPPED = frozenset({".venv", "build", "out", "node_modules", ".git", "__pycache__"})


def offending_imports(source: str) -> Iterator[tuple[int, str]]:
    """Each ``(line, module or name)`` of ``source`` (Python text) that imports a private part of
    moto or botocore: a ``moto`` submodule other than :data:`PUBLIC_MOTO`, a name starting with
    ``_`` from a public moto module or from botocore, or a module of :data:`FORBIDDEN`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private(alias.name):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _private(node.module):
                yield node.lineno, node.module
            elif node.module == "botocore" or node.module.startswith("botocore."):
                for alias in node.names:
                    if alias.name.startswith("_"):
                        yield node.lineno, f"{node.module}.{alias.name}"
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
    if module.startswith("botocore.") and any(part.startswith("_") for part in module.split(".")):
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
        if path.relative_to(root).as_posix() in EMBEDDED_AWS:
            continue
        for line, name in offending_imports(path.read_text(encoding="utf-8")):
            print(f"{path.relative_to(root)}:{line}: imports {name} (moto and botocore only through their public API)")
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
