"""``GET /v1/health`` (no key)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.http import route
from chalicelib.model_base import Model
from chalicelib.system import health as readiness

bp = Blueprint(__name__)


class Health(Model):
    """Health response."""

    status: str = "ok"


@route(bp, "/v1/health", "GET", auth="none", response=Health, tags=("system",))
def health() -> Health:
    """Readiness: 200 when every table and queue answers, else 503 SERVICE_UNAVAILABLE naming them."""
    readiness.check()
    return Health()
