"""Modules imported on first use: what a route needs only once a request for it arrives.

A Lambda cold start imports ``app.py``, which imports every route module to register its paths;
with eager imports that pulls in every service, repository and model of every domain, although
an invocation serves one route (``bench/cold_start.py``). A route module therefore binds its
domain's modules with :func:`lazy_import`: the name is bound at once, the module is imported on
the first attribute read (the first request of one of its routes, or the OpenAPI build).

A route module declares them once, as ordinary ``from <package> import <module>`` statements
inside :func:`lazy_imports`; mypy types every use from them and import-linter sees the same graph,
while at run time each name is bound to a stand-in::

    with lazy_imports(__name__):  # loaded with the first request of one of these routes
        from chalicelib.listings import models, service

Classes are named through their module (``models.Listing`` in an annotation), since only a
module can stand in until first use; a statement importing anything but a module fails at import.

The bound object is a read-only stand-in: each attribute read is answered by the real module,
imported by the ordinary import system (``importlib.import_module``, with its per-module locks
and deadlock handling, so concurrent first requests are safe). The real module is not replaced
or registered early, so any other import of it behaves as usual, and a test that patches the
real module is seen through the stand-in. (The standard library's ``importlib.util.LazyLoader``
was not used: its load runs under a lock of its own, outside the import system's deadlock
detection, and a failed load leaves a half-initialised module in ``sys.modules``.)
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

#: Importer module -> the dotted names it declared in :func:`lazy_imports` (checked by a unit test).
DECLARED: dict[str, tuple[str, ...]] = {}


class LazyModule(ModuleType):
    """A stand-in for the module named ``__name__``, imported on the first attribute read.

    Reads go to the real module every time (so patches of it are seen); writes are refused,
    since they would change the stand-in instead of the module.
    """

    def __getattr__(self, attribute: str) -> Any:
        """``attribute`` of the real module (imported now if it is not yet).

        Raises
        ------
        AttributeError
            The module has no such attribute.
        """
        return getattr(importlib.import_module(self.__name__), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:
        """Refuse the write (patch the real module, ``importlib.import_module(name)``, instead).

        Raises
        ------
        AttributeError
            Always.
        """
        raise AttributeError(f"{self.__name__} is imported lazily here; set {attribute!r} on the module itself")


def lazy_import(name: str) -> ModuleType:
    """A stand-in for the module ``name`` (absolute dotted name), imported on first attribute read.

    The module's parent packages are imported now, to find the module (a misspelt name fails
    at import time, not at the first request); the module itself is not.

    Raises
    ------
    ModuleNotFoundError
        No module ``name`` exists.
    """
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return LazyModule(name)


def _is_package(name: str) -> bool:
    """Whether ``name`` names a package (its parents are imported to find it, the package itself is not)."""
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.submodule_search_locations is not None


@contextmanager
def lazy_imports(importer: str) -> Iterator[None]:
    """Bind the modules that ``from <package> import <module>`` statements in the block name to stand-ins.

    While the block runs, an import statement of the module ``importer`` (its ``__name__``) binds
    each named module to :func:`lazy_import`'s stand-in instead of importing it; imports of every
    other module (another thread's, or the parents' ``__init__``) go to the import system as usual.
    The names declared are kept in :data:`DECLARED`.

    Parameters
    ----------
    importer:
        The ``__name__`` of the module whose block this is.

    Raises
    ------
    ImportError
        A statement in the block that is not ``from <absolute package> import <module>, ...``
        (a relative import, a plain ``import x``, a class or function name).
    ModuleNotFoundError
        A named module does not exist.
    """
    real_import = builtins.__import__
    declared: list[str] = []

    def bind(
        name: str, globals: Mapping[str, object] | None = None, locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] | None = (), level: int = 0,
    ) -> ModuleType:
        if (globals or {}).get("__name__") != importer:
            return real_import(name, globals, locals, fromlist or (), level)
        if level or not fromlist or not _is_package(name):
            raise ImportError(f"{importer}: lazy_imports() takes 'from <absolute package> import <module>' only, not {name!r}")
        package = ModuleType(name)  # holds the stand-ins the statement binds
        for module in fromlist:
            dotted = f"{name}.{module}"
            if importlib.util.find_spec(dotted) is None:
                raise ImportError(f"{importer}: {dotted!r} is no module; name it through its module in lazy_imports()")
            package.__dict__[module] = LazyModule(dotted)
            declared.append(dotted)
        return package

    builtins.__import__ = bind
    try:
        yield
    finally:
        builtins.__import__ = real_import
        DECLARED[importer] = (*DECLARED.get(importer, ()), *declared)
