"""The Dashboard's one paging rule: a list page shows one page of the service's list and, while more
exist, a "Load more" control that is a plain link to the next page (whole page without JavaScript)
and, with htmx (``HX-Request: true``), an in-place load of only the next items.

Two directions share the rule:

* **newer to older** (a user's listings, conversations, a listing's incoming requests): the
  services' own lists are newest first, so the control continues at the service's signed
  ``nextCursor`` and follows the last item (:func:`forward`);
* **older pages above** (a conversation's messages): the service serves the messages oldest first
  in pages numbered from the first message, and the page shows the *newest* page first with a
  "Load earlier messages" control above it (:class:`EarlierPages`). The control carries a cursor
  of the same signed kind (:mod:`chalicelib.kernel.cursors`, through :class:`~chalicelib.kernel.pagination.PageQuery`),
  bound to the Dashboard view, the user, the conversation and the page size, whose position key
  names the service page to read next.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalice.app import Response

from chalicelib.dashboard.web import Page, is_htmx
from chalicelib.edge.http import parse_model
from chalicelib.kernel import errors
from chalicelib.kernel.lazy_imports import lazy_imports

with lazy_imports(__name__):  # loaded with the first paged page, not at the API's cold start
    from chalicelib.kernel import pagination


@dataclass(frozen=True)
class Shown:
    """The "Showing first–last of total <noun>." line above a list (item numbers 1-based, in list order)."""

    first: int
    last: int
    total: int


def page_query[Q: pagination.PageQuery](current: Page, model: type[Q], default_size: int | None = None) -> Q:
    """The list query of a paged Dashboard page: ``pageSize`` (default ``default_size``, else and at most 100)
    and the ``cursor`` of the previous page's control, both from the query string.

    Returns
    -------
    Q
        An instance of ``model`` (``page`` is always 1: the Dashboard pages by cursor only).

    Raises
    ------
    RuleViolation
        ``pageSize`` out of 1..100 or a malformed ``cursor`` (the page shows 400).
    """
    size = min(default_size or pagination.MAX_PAGE_SIZE, pagination.MAX_PAGE_SIZE)
    values = {"pageSize": current.query("pageSize") or str(size), "cursor": current.query("cursor") or None}
    return parse_model(model, {k: v for k, v in values.items() if v is not None})


def render(current: Page, path: str, templates: tuple[str, str], next_cursor: str | None, page_size: int,
           shown: Shown, extra_query: Mapping[str, str] | None = None, **context: Any) -> Response:
    """Render one page of a paged list, as the whole page or, for htmx, only its items fragment.

    Parameters
    ----------
    path:
        The page's path under the Dashboard (``/listings``), for the control's link.
    templates:
        ``(whole page, items fragment)``; the fragment is included by the whole page.
    next_cursor, page_size:
        The control's cursor (``None``: no control, this was the last page) and the page size it is bound to.
    shown:
        The count line's figures.
    extra_query:
        Query parameters the control's link keeps (a filtered list's filters; empty values dropped).

    A plain request (the link followed without JavaScript) gets the whole page at the cursor; an
    htmx request gets the fragment: the page's items and the next control, swapped in place of
    the old control, with the first new item focused (``autofocus``) and the count line replaced
    out of band. ``Vary: HX-Request`` keeps caches from mixing the two answers of one URL.
    """
    more = None
    if next_cursor:
        kept = {k: v for k, v in (extra_query or {}).items() if v}  # the filters the cursor is bound to
        more = f"{current.root}{path}?" + urllib.parse.urlencode({**kept, "pageSize": page_size, "cursor": next_cursor})
    htmx = is_htmx(current.request)
    response = current.render(templates[1] if htmx else templates[0], more=more, shown=shown, fragment=htmx,
                              continued=bool(current.query("cursor")), **context)
    response.headers["Vary"] = "HX-Request"
    return response


def forward(current: Page, path: str, templates: tuple[str, str], found: pagination.Envelope, count: int, **context: Any) -> Response:
    """:func:`render` for a list the service serves in the shown order (``found`` = its envelope
    with ``count`` items): the control continues at the service's own ``nextCursor``.

    The count line of a fragment counts from the list's first item (everything above is shown).
    """
    first = (found.page - 1) * found.pageSize + 1
    shown = Shown(first=1 if is_htmx(current.request) else first, last=first + count - 1, total=found.total)
    return render(current, path, templates, found.nextCursor, found.pageSize, shown, **context)


@dataclass(frozen=True)
class EarlierPages:
    """A list the service serves oldest first, shown from its newest page with earlier pages above.

    The service's pages are numbered from the oldest item (page ``p`` holds items
    ``(p - 1) x size + 1 .. p x size``); items are numbered once and never renumbered (messages),
    so a page always holds the same items while newer ones arrive. The first view reads the
    last page; each "Load earlier" cursor carries, as its position key, the service page to read
    (``"2"``). The fragment it loads sets only the first item number of the count line: the page's
    newest number and the total are the live poll's (``live_messages.html``).

    Attributes
    ----------
    position:
        The view's own page position (page 1 = the newest page; signed cursor decoded).
    page_to_read:
        The service page the cursor names (``None`` on the first view: the last page).
    """

    position: pagination.Position
    page_to_read: int | None = None

    @classmethod
    def of(cls, query: pagination.PageQuery, view: str, scope_id: str) -> EarlierPages:
        """Decode ``query``'s cursor for the view ``view`` of ``scope_id`` (caller and list, e.g. ``user|conversation``).

        Raises
        ------
        RuleViolation
            The cursor is malformed, edited, or from another view, user, list or page size (field ``cursor``).
        """
        position = query.position_in(view, scope_id)
        if position.key is None:
            return cls(position)
        if not (position.key.isdigit() and int(position.key) >= 1):
            raise errors.RuleViolation.for_field("cursor", "is not a cursor issued by this Dashboard")
        return cls(position, int(position.key))

    @property
    def size(self) -> int:
        """Items per page."""
        return self.position.page_size

    def page(self, total: int) -> int:
        """The service page to read: the cursor's, else the last page of ``total`` items (1 when empty)."""
        return self.page_to_read or max(1, -(-total // self.size))

    def render(self, current: Page, path: str, templates: tuple[str, str], page: int, count: int, total: int,
               **context: Any) -> Response:
        """:func:`render` the service page ``page`` (``count`` items, ``total`` in the list), with a
        "Load earlier" cursor while ``page > 1``."""
        first = (page - 1) * self.size + 1
        earlier = self.position.next_cursor(page > 1, str(page - 1))
        shown = Shown(first=first, last=first + count - 1, total=total)
        return render(current, path, templates, earlier, self.size, shown, **context)
