"""``GET /v1/health`` (no key)."""

from __future__ import annotations

from chalice.app import Blueprint
from pydantic import BaseModel

from chalicelib.http import route

bp = Blueprint(__name__)


class Health(BaseModel):
    """Health response."""

    status: str = "ok"


@route(bp, "/v1/health", "GET", auth="none", response=Health, tags=("system",))
def health() -> Health:
    """Liveness: 200 once the API serves requests (locally: once the whole stack is up)."""
    return Health()
