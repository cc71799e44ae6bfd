"""The base class of the service's pydantic models: validators are built on first use, not at import.

pydantic builds a model's validator and serializer (its core schema) when the class is defined
unless ``defer_build`` is set; with it, the build happens on the model's first validation,
serialization or JSON Schema. A cold start defines every model of every route but serves one
route, so deferring moves that work to the paths that use it (``bench/cold_start.py``).
Behaviour is the same: only the moment of the build changes.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A pydantic model whose schema is built on first use (``defer_build``); subclass it like ``BaseModel``."""

    model_config = ConfigDict(defer_build=True)
