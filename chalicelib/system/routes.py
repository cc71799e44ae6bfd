"""``GET /v1/health`` (no key)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.http import route
from chalicelib.model_base import Model

bp = Blueprint(__name__)


class Health(Model):
    """Health response."""

    status: str = "ok"


@route(bp, "/v1/health", "GET", auth="none", response=Health, tags=("system",))
def health() -> Health:
    """Liveness: 200 once the API serves requests (locally: once the whole stack is up)."""
    return Health()
