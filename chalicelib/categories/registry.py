"""The seeded categories, loaded once per process from ``data/*.json``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from chalicelib import errors
from chalicelib.categories.models import Category

DATA_DIR = Path(__file__).with_name("data")


@lru_cache(maxsize=1)
def all_categories() -> dict[str, Category]:
    """Every category by key, in file-name order (validated at load; a bad file fails the cold start)."""
    categories = [Category.model_validate_json(p.read_text()) for p in sorted(DATA_DIR.glob("*.json"))]
    return {c.key: c for c in categories}


def get_category(key: str) -> Category:
    """Return the category ``key``.

    Raises
    ------
    NotFoundError
        No category has that key.
    """
    category = all_categories().get(key)
    if category is None:
        raise errors.NotFoundError(f"Category '{key}' not found")
    return category
