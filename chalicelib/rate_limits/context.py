"""The admission of the request being served, kept for the response's ``RateLimit`` fields.

:func:`chalicelib.rate_limits.service.admit` records it; the HTTP middleware
(:mod:`chalicelib.rate_limits.edge`) clears it before the request and reads it after, so a
response carries the fields only when its own request was admitted by the bucket. A context
variable, so that the threads of the local server never see each other's.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol


class Admitted(Protocol):
    """What the edge needs of an admission: its response header fields."""

    def headers(self) -> dict[str, str]:
        """The ``RateLimit-Policy`` and ``RateLimit`` fields."""
        ...


_current: ContextVar[Admitted | None] = ContextVar("rate_limit_admission", default=None)


def remember(admission: Admitted) -> None:
    """Record the admission of the request being served."""
    _current.set(admission)


def clear() -> None:
    """Forget any admission (the start of a request)."""
    _current.set(None)


def current() -> Admitted | None:
    """The admission of the request being served, if the bucket admitted it."""
    return _current.get()
