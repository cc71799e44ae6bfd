"""CORS for the public API (Fetch standard, https://fetch.spec.whatwg.org/#http-cors-protocol).

Allowed origins are a per-stage setting, ``CORS_ALLOWED_ORIGINS``: a comma-separated list of
exact origins (``https://app.example.com``), ``*`` for any origin, or empty for none (the
default, and production's unless its deployment parameter ``CorsAllowedOrigins`` says otherwise);
the local stage allows ``*``. Clients authenticate with a bearer key in ``Authorization``, never
with cookies, so credentials are never allowed and ``*`` is safe where it is configured.

The rules live here once: the API's responses get their headers from
:func:`response_headers` (middleware), the local server answers preflights with
:func:`preflight_headers`, and the production template's preflight (an API Gateway mock
integration, ``infra/cfn_cors.py``) is generated from the same constants.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from chalice.app import Request, Response

from chalicelib.edge.fields import header_value
from chalicelib.kernel.config import settings

#: Request headers a browser client may send (Fetch's ``Access-Control-Allow-Headers``).
ALLOWED_HEADERS = ("Authorization", "Content-Type", "Idempotency-Key", "If-Match", "If-None-Match", "X-Request-Id")

#: Response headers a browser client may read beyond the CORS-safelisted ones.
EXPOSED_HEADERS = (
    "ETag", "X-Request-Id", "Idempotent-Replayed", "Retry-After", "Allow", "WWW-Authenticate", "RateLimit-Policy", "RateLimit",
)

#: Seconds a browser may cache a preflight answer (Chromium caps it at 7200).
MAX_AGE_SECONDS = 600


def allowed_origins(setting: str | None = None) -> frozenset[str]:
    """The allowed origins of ``setting`` (default: ``CORS_ALLOWED_ORIGINS``), ``{"*"}`` for any."""
    raw = settings().CORS_ALLOWED_ORIGINS if setting is None else setting
    return frozenset(o.strip().rstrip("/") for o in raw.split(",") if o.strip())


def allow_origin(origin: str | None, allowed: frozenset[str]) -> str | None:
    """The ``Access-Control-Allow-Origin`` value for a request from ``origin``, or ``None`` (not allowed)."""
    if not origin:
        return None
    if "*" in allowed:
        return "*"
    return origin if origin in allowed else None


def response_headers(origin: str | None, allowed: frozenset[str] | None = None) -> dict[str, str]:
    """CORS headers of an actual (non-preflight) response to a request from ``origin``; empty when not allowed."""
    allowed = allowed_origins() if allowed is None else allowed
    headers: dict[str, str] = {}
    if allowed and "*" not in allowed:
        headers["Vary"] = "Origin"  # the answer depends on the Origin header: caches must key on it
    value = allow_origin(origin, allowed)
    if value is not None:
        headers["Access-Control-Allow-Origin"] = value
        headers["Access-Control-Expose-Headers"] = ", ".join(EXPOSED_HEADERS)
    return headers


def allow_field(methods: Iterable[str]) -> str:
    """The ``Allow`` field (RFC 9110 §10.2.1) of an API path serving ``methods``: those and
    ``OPTIONS``, which the gateway answers on every API path (its CORS preflight)."""
    return ", ".join(sorted({*methods, "OPTIONS"}))


def preflight_headers(origin: str | None, methods: Iterable[str], allowed: frozenset[str] | None = None) -> dict[str, str]:
    """Headers of the answer (204) to a preflight ``OPTIONS`` from ``origin`` for a path serving ``methods``.

    ``Access-Control-Allow-Origin`` is present only for an allowed origin, so the browser
    refuses the cross-origin call otherwise; the other headers are the same for every origin
    (as the production template's static mock-integration headers, ``infra/cfn_cors.py``).
    """
    allowed = allowed_origins() if allowed is None else allowed
    listed = allow_field(methods)
    headers = {
        "Allow": listed,
        "Access-Control-Allow-Methods": listed,
        "Access-Control-Allow-Headers": ", ".join(ALLOWED_HEADERS),
        "Access-Control-Max-Age": str(MAX_AGE_SECONDS),
        "Vary": "Origin",
    }
    value = allow_origin(origin, allowed)
    if value is not None:
        headers["Access-Control-Allow-Origin"] = value
    return headers


#: The public API's paths (the Dashboard's pages are same-origin and get no CORS headers).
API_PREFIX = "/v1/"


def cors_middleware(event: Request, get_response: Callable[[Request], Response]) -> Response:
    """HTTP middleware: add the CORS headers of :func:`response_headers` to every public API response."""
    response = get_response(event)
    if not str((event.context or {}).get("resourcePath") or "").startswith(API_PREFIX):
        return response
    for name, value in response_headers(header_value(event, "origin")).items():
        response.headers.setdefault(name, value)
    return response
