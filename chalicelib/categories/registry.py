"""The seeded categories, loaded once per process from ``data/*.json``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from chalicelib.categories.models import Category
from chalicelib.kernel import errors

DATA_DIR = Path(__file__).with_name("data")


@lru_cache(maxsize=1)
def all_categories() -> dict[str, Category]:
    """Every category by key, in file-name order (validated at load; a bad file fails the cold start)."""
    categories = [Category.model_validate_json(p.read_text()) for p in sorted(DATA_DIR.glob("*.json"))]
    return {c.key: c for c in categories}


def category_key_schema(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` of a category key: ``enum`` of the seeded keys (read at schema time)."""
    schema["enum"] = list(all_categories())


def role_key_schema(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` of a role key: ``enum`` of every category's role keys, sorted.

    Which roles a category has is a rule across two fields the schema does not express; the
    operations that take both say so in their descriptions.
    """
    schema["enum"] = sorted({role.key for category in all_categories().values() for role in category.roles})


def get_category(key: str) -> Category:
    """Return the category ``key``.

    Raises
    ------
    NotFound
        No category has that key.
    """
    category = all_categories().get(key)
    if category is None:
        raise errors.NotFound(f"Category '{key}' not found")
    return category
