"""Pagination (DESIGN §2): ``page`` 1-based (default 1), ``pageSize`` 1..100 (default 20), ``cursor``.

Envelope: ``{<items>, total, page, pageSize, nextCursor}``. ``nextCursor`` is an opaque
cursor (:mod:`chalicelib.kernel.cursors`) for the next page, ``null`` on the last one; passing it
back as ``cursor`` (with the same other parameters) continues where the page ended without
re-reading earlier pages on the routes that page natively from an index. ``page`` still
works as an offset. ``total`` is exact unless ``totalRelation`` says ``"gte"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import ConfigDict, Field

from chalicelib.kernel import cursors, errors
from chalicelib.kernel.model_base import Model

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20
MAX_CURSOR_LENGTH = 1024


class PageQuery(Model):
    """The pagination query parameters; other query models extend it."""

    model_config = ConfigDict(extra="forbid")
    page: int = Field(default=1, ge=1, le=10_000)
    pageSize: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    cursor: str | None = Field(default=None, min_length=1, max_length=MAX_CURSOR_LENGTH)

    def slice[T](self, items: Sequence[T]) -> list[T]:
        """The items of this page (``page`` only; see :meth:`position` for cursors)."""
        start = (self.page - 1) * self.pageSize
        return list(items[start : start + self.pageSize])

    def filters_text(self) -> str:
        """Canonical text of this query's parameters other than ``page``, ``pageSize`` and ``cursor``."""
        rest = self.model_dump(mode="json", exclude={"page", "pageSize", "cursor"}, exclude_none=True)
        return json.dumps(rest, sort_keys=True, separators=(",", ":"))

    def position_in(self, route: str, caller_id: str) -> Position:
        """:meth:`position` with the scope made of ``route``, ``caller_id`` and :meth:`filters_text`."""
        return self.position(f"{route}|{caller_id}|{self.filters_text()}")

    def position(self, scope: str) -> Position:
        """Where this request starts within the query ``scope`` (the cursor decoded and verified).

        ``scope`` names the route, the caller and every filter (not ``page``/``pageSize``/``cursor``).

        Raises
        ------
        RuleViolation
            ``cursor`` is malformed, edited or from another query (field ``cursor``), or
            ``page`` contradicts the cursor (field ``page``).
        """
        if self.cursor is None:
            return Position(scope=scope, page=self.page, page_size=self.pageSize)
        try:
            state = cursors.decode(f"{scope}|{self.pageSize}", self.cursor)
        except cursors.InvalidCursor as exc:
            raise errors.RuleViolation.for_field("cursor", str(exc), f"Invalid cursor: {exc}") from exc
        if state.key is not None and not _plausible_key(state.key):
            raise errors.RuleViolation.for_field("cursor", "is not a cursor issued by this API", "Invalid cursor")
        if "page" in self.model_fields_set and self.page != state.page:
            raise errors.RuleViolation.for_field(
                "page", f"the cursor continues at page {state.page}; leave page out when giving a cursor"
            )
        return Position(scope=scope, page=state.page, page_size=self.pageSize, key=state.key)


def _plausible_key(key: str) -> bool:
    """Whether ``key`` may be a position key this API wrote: non-empty, at most
    :data:`MAX_CURSOR_LENGTH` characters, no control character (every sort key of the lists is
    ids, ISO 8601 timestamps and numbers joined by ``#``). A signed cursor is trusted to be
    ours, but never its content to be well-formed: each list still checks the key's shape
    (e.g. :meth:`chalicelib.search.keyset.ListIndex.start_key`), so any content is a 400."""
    return 0 < len(key) <= MAX_CURSOR_LENGTH and key.isprintable()


@dataclass(frozen=True)
class Position:
    """A resolved page: its 1-based ``page``, ``page_size`` and optional index position ``key``.

    ``key`` is the sort key of the last item of the previous page when the request came with
    a cursor of a natively paged route; ``None`` means "skip ``(page - 1) * page_size``".
    """

    scope: str
    page: int
    page_size: int
    key: str | None = None

    @property
    def offset(self) -> int:
        """Items before this page."""
        return (self.page - 1) * self.page_size

    def slice[T](self, items: Sequence[T]) -> list[T]:
        """This page out of the full, ordered result list."""
        return list(items[self.offset : self.offset + self.page_size])

    def next_cursor(self, has_more: bool, key: str | None = None) -> str | None:
        """The ``nextCursor`` of this page: ``None`` unless ``has_more``; ``key`` = last item's sort key."""
        if not has_more:
            return None
        state = cursors.CursorState(page=self.page + 1, page_size=self.page_size, key=key)
        return cursors.encode(f"{self.scope}|{self.page_size}", state)

    def after(self, total: int) -> bool:
        """True when results remain after this page, out of ``total``."""
        return self.offset + self.page_size < total


class CursorQuery(Model):
    """Query parameters of a list that pages by cursor only (no ``page``): ``pageSize`` 1..100
    (default 20) and the opaque ``cursor`` of the previous page's ``nextCursor``; the list's
    filters are the subclass's fields (the cursor's scope names them, :meth:`filters_text`)."""

    model_config = ConfigDict(extra="forbid")
    pageSize: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    cursor: str | None = Field(default=None, min_length=1, max_length=MAX_CURSOR_LENGTH)

    def page_query(self) -> PageQuery:
        """This query's paging as a :class:`PageQuery` (page 1 unless the cursor says otherwise)."""
        return PageQuery(pageSize=self.pageSize, cursor=self.cursor)

    def filters_text(self) -> str:
        """The filters as the cursor's scope names them (the fields other than ``pageSize`` and ``cursor``)."""
        return self.model_dump_json(exclude={"pageSize", "cursor"})


class Envelope(Model):
    """Common fields of every paginated response."""

    total: int
    page: int
    pageSize: int
    nextCursor: str | None = Field(
        default=None, description="Opaque cursor of the next page (pass it as `cursor`); null on the last page."
    )


class SearchEnvelope(Envelope):
    """Envelope of searches whose ``total`` may be a lower bound."""

    totalRelation: Literal["eq", "gte"] = Field(
        default="eq",
        description='"eq": total is exact; "gte": total is a lower bound (counting exactly would exceed the read budget).',
    )


class Deleted(Model):
    """Response of a DELETE: ``{id, deleted: true}`` (as the spec's webhook delete)."""

    id: str
    deleted: bool = True
