"""Pagination (DESIGN §2): ``page`` 1-based (default 1), ``pageSize`` 1..100 (default 20).

Envelope: ``{<items>, total, page, pageSize}``; ``total`` is exact.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ConfigDict, Field

from chalicelib.model_base import Model

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


class PageQuery(Model):
    """The pagination query parameters; other query models extend it."""

    model_config = ConfigDict(extra="forbid")
    page: int = Field(default=1, ge=1, le=10_000)
    pageSize: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)

    def slice[T](self, items: Sequence[T]) -> list[T]:
        """The items of this page out of the full, ordered candidate list."""
        start = (self.page - 1) * self.pageSize
        return list(items[start : start + self.pageSize])


class Envelope(Model):
    """Common fields of every paginated response."""

    total: int
    page: int
    pageSize: int


class Deleted(Model):
    """Response of a DELETE: ``{id, deleted: true}`` (as the spec's webhook delete)."""

    id: str
    deleted: bool = True
