"""HTTP middleware: every admitted request's response carries its key's ``RateLimit-Policy`` and ``RateLimit``.

Refused requests carry the fields in their 429 already (:func:`chalicelib.rate_limits.service.refused`);
unauthenticated routes have no bucket and get none. Registered in ``app.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from chalice.app import Request, Response

from chalicelib.rate_limits import context


def rate_limit_fields_middleware(event: Request, get_response: Callable[[Request], Response]) -> Response:
    """Add the admitted request's rate-limit fields to its response (never replacing ones it has)."""
    context.clear()
    try:
        response = get_response(event)
        admission = context.current()
        if admission is not None:
            for name, value in admission.headers().items():
                response.headers.setdefault(name, value)
        return response
    finally:
        context.clear()
