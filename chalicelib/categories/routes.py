"""``GET /v1/categories`` and ``GET /v1/categories/{key}``."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.categories import models, registry

bp = Blueprint(__name__)
route = routes(bp, tags=("categories",))


@route("/v1/categories", "GET", response=lambda: models.CategoryList)
def list_categories(caller: Caller) -> models.CategoryList:
    """List every category with its roles and fields."""
    return models.CategoryList(categories=list(registry.all_categories().values()))


@route("/v1/categories/{key}", "GET", response=lambda: models.Category)
def category_detail(caller: Caller, key: str) -> models.Category:
    """One category: roles, fields, required flags and value encodings."""
    return registry.get_category(key)
