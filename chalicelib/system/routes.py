"""``GET /v1/health`` (no key; an administrator's key adds the details of a failure)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import authenticate
from chalicelib.edge.http import routes
from chalicelib.kernel import errors
from chalicelib.kernel.model_base import Model
from chalicelib.system import health as readiness

bp = Blueprint(__name__)
route = routes(bp, tags=("system",), auth="none")


class Health(Model):
    """Health response."""

    status: str = "ok"


def _is_admin(authorization: str | None) -> bool:
    """Whether ``authorization`` is an administrator's key. Anything else, including a key that
    cannot be checked because storage is down, counts as anonymous: health never fails on it."""
    if not authorization:
        return False
    try:
        return authenticate(authorization, require_admin=True).is_admin
    except errors.DomainError:
        return False


@route("/v1/health", "GET", response=Health)
def health() -> Health:
    """Readiness: 200 ``{"status": "ok"}`` when every table and queue answers, else 503
    SERVICE_UNAVAILABLE ("unavailable"). Which dependencies failed, and how, is named in
    ``details`` only for an administrator's key (``Authorization: Bearer <admin key>``): the
    public answer reveals no setting names or exception classes."""
    try:
        readiness.check()
    except errors.Unavailable as exc:
        request = bp.current_request
        if request is not None and _is_admin(request.headers.get("authorization")):
            raise
        raise errors.Unavailable("unavailable") from exc
    return Health()
