"""Load a script of the repository (``scripts/``, ``bench/``) as a module, to test its functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative_path: str, name: str) -> ModuleType:
    """The module of the file ``relative_path`` (from the repository's root), executed as ``name``.

    Raises
    ------
    FileNotFoundError
        No such file.
    """
    spec = importlib.util.spec_from_file_location(name, ROOT / relative_path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    saved = list(sys.path)  # a bench script puts the repository's root first on the path
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module
