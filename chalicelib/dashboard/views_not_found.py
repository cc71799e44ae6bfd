"""The Dashboard's HTML 404 page for an address no page answers (not the API's JSON error body)."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.dashboard.web import NOT_FOUND_MESSAGE, Page, Refused, page


@page("/dashboard/{unknown}", access="public")
def unknown_page(current: Page, unknown: str) -> Response:
    """Any one-segment path under ``/dashboard`` that no page has: the 404 page with the security headers.

    Raises
    ------
    Refused
        Always: 404.
    """
    raise Refused(404, NOT_FOUND_MESSAGE)
