"""Per-request context at the HTTP edge: the request id, the structured logger and the access log.

Every response carries ``X-Request-Id``; error bodies carry the same value as ``requestId``;
every log line written while the request is served carries it as powertools' ``correlation_id``.
The id is the caller's ``X-Request-Id`` when it has a safe form (:data:`SAFE_REQUEST_ID`), else
API Gateway's request id (``requestContext.requestId``) in AWS, else a new UUID (local runs and
tests, where no gateway assigns one). Each request ends with one JSON access-log line
(``"message": "request"``: method, path, status, durationMs) and one EMF metric line
(``Requests`` and ``RequestLatency`` by route template and status class, :mod:`chalicelib.telemetry.metrics`);
the request is one X-Ray subsegment annotated with its id (:mod:`chalicelib.telemetry.tracing`).

Logs are powertools' structured JSON (one object per line) on stdout, as CloudWatch expects;
the local stack sends them to a file unless ``VERBOSE=1`` (``local_stack``).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

from aws_lambda_powertools import Logger
from chalice.app import Request, Response

from chalicelib.edge import path_ids
from chalicelib.edge.fields import header_value
from chalicelib.telemetry import correlation, metrics, tracing

#: The one structured logger of the API (powertools; service name from ``POWERTOOLS_SERVICE_NAME``).
logger = Logger(service="matching-service")

REQUEST_ID_HEADER = "X-Request-Id"

#: A caller-supplied request id is echoed only in this form: 1..128 characters of letters, digits
#: and ``._:-`` starting with a letter or digit (no spaces, quotes or control characters that
#: could forge log lines or headers). Anything else is replaced by the gateway's id.
SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")

def choose_request_id(supplied: str | None, gateway_id: str | None) -> str:
    """The id of a request: ``supplied`` if it matches :data:`SAFE_REQUEST_ID`, else ``gateway_id``, else a UUID4.

    Parameters
    ----------
    supplied:
        The caller's ``X-Request-Id`` header, if any.
    gateway_id:
        API Gateway's ``requestContext.requestId`` (absent locally).
    """
    if supplied and SAFE_REQUEST_ID.match(supplied):
        return supplied
    return gateway_id or str(uuid.uuid4())


def current_request_id() -> str | None:
    """The id of the request being served on this thread, or ``None`` outside a request."""
    return correlation.current_request_id()


def request_context_middleware(event: Request, get_response: Callable[[Request], Response]) -> Response:
    """HTTP middleware (outermost): request id, log correlation, ``X-Request-Id`` header, access log line."""
    context = event.context or {}
    request_id = choose_request_id(header_value(event, REQUEST_ID_HEADER), context.get("requestId"))
    route = context.get("resourcePath") or "unmatched"
    logger.thread_safe_append_keys(correlation_id=request_id)
    started = time.perf_counter()
    status = 500  # an exception escaping the app is served as a 500 by Chalice
    try:
        with correlation.bound(request_id), tracing.segment("request", request_id, route=route):
            response = get_response(event)
        response.headers[REQUEST_ID_HEADER] = request_id
        status = response.status_code
        logger.info(
            "request",
            extra={
                "method": event.method,
                "path": path_ids.loggable(str(context.get("path") or context.get("resourcePath") or "")),
                "status": response.status_code,
                "durationMs": round((time.perf_counter() - started) * 1000, 1),
                "gatewayRequestId": context.get("requestId"),
            },
        )
        return response
    finally:
        metrics.record_request(route, status, (time.perf_counter() - started) * 1000)
        logger.thread_safe_remove_keys(["correlation_id"])
