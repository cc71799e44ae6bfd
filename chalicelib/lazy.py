"""Modules imported on first use: what a route needs only once a request for it arrives.

A Lambda cold start imports ``app.py``, which imports every route module to register its paths;
with eager imports that pulls in every service, repository and model of every domain, although
an invocation serves one route (``bench/cold_start.py``). A route module therefore binds its
domain's modules with :func:`lazy_import`: the name is bound at once, the module is imported on
the first attribute read (the first request of one of its routes, or the OpenAPI build).

Route modules use it with the real import under ``TYPE_CHECKING``, so that mypy checks every use
and import-linter sees the same dependency graph::

    if TYPE_CHECKING:
        from chalicelib.listings import service
    else:
        service = lazy_import("chalicelib.listings.service")

The bound object is a read-only stand-in: each attribute read is answered by the real module,
imported by the ordinary import system (``importlib.import_module``, with its per-module locks
and deadlock handling, so concurrent first requests are safe). The real module is not replaced
or registered early, so any other import of it behaves as usual, and a test that patches the
real module is seen through the stand-in. (The standard library's ``importlib.util.LazyLoader``
was not used: its load runs under a lock of its own, outside the import system's deadlock
detection, and a failed load leaves a half-initialised module in ``sys.modules``.)
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any


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
