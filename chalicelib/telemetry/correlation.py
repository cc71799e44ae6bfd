"""The request id of the work in progress: one id from the API request to the delivery attempt.

The HTTP edge (:mod:`chalicelib.edge.request_context`) binds the request's id for the time the
request is served; :mod:`chalicelib.persistence.outbox` writes it into every event the request's
transaction adds (``requestId``); the delivery pipeline carries it in its lane messages and
binds it again around each attempt, whose log line and attempt-log entry name it. So one id
finds a delivery's whole story: the access-log line, the event, the attempt (docs/operations.md,
"Following one request").

This module holds only the context variable (no Chalice, no logger), so services and the
outbox may read it without depending on the HTTP edge.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[str | None] = ContextVar("request_id", default=None)


def current_request_id() -> str | None:
    """The request id bound on this thread (or task), or ``None`` outside any request's work."""
    return _current.get()


@contextmanager
def bound(request_id: str | None) -> Iterator[None]:
    """Bind ``request_id`` for the ``with`` block (``None`` binds nothing new: ids stay unset).

    Parameters
    ----------
    request_id:
        The API request's id (``X-Request-Id``), e.g. read back from an outbox event.
    """
    token = _current.set(request_id)
    try:
        yield
    finally:
        _current.reset(token)
