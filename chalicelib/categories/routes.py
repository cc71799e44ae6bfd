"""``GET /v1/categories`` and ``GET /v1/categories/{key}``."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.categories.models import Category, CategoryList
from chalicelib.categories.registry import all_categories, get_category
from chalicelib.http import route

bp = Blueprint(__name__)


@route(bp, "/v1/categories", "GET", response=CategoryList, tags=("categories",))
def list_categories(caller: Caller) -> CategoryList:
    """List every category with its roles and fields."""
    return CategoryList(categories=list(all_categories().values()))


@route(bp, "/v1/categories/{key}", "GET", response=Category, tags=("categories",))
def category_detail(caller: Caller, key: str) -> Category:
    """One category: roles, fields, required flags and value encodings."""
    return get_category(key)
