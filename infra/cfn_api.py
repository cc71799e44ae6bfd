"""API Gateway settings merged into Chalice's ``RestAPI``: stage throttling and gateway responses.

API Gateway answers some requests itself, before the Lambda function runs: a path with no
route ("Missing Authentication Token", 403 by default), throttling, bodies over 10 MB,
authorizer denials, integration timeouts. The gateway responses below give all of them the
spec's error body ``{"code", "error"}`` (spec §7, DESIGN §2) instead of API Gateway's
``{"message"}``.
"""

from __future__ import annotations

import json
from typing import Any

from infra.cfn_parameters import number_parameter

#: CloudFormation parameters of the stage's throttling (requests per second, and burst): the outer
#: guard over all clients together, unauthenticated requests included. Each API key has its own,
#: smaller bucket in the app (chalicelib.rate_limits: 20/s and 100 by default, administrators
#: 100/s and 500), so the stage's defaults sit above one administrator's limits; otherwise one busy
#: key would exhaust the stage for everyone (tests/unit/test_rate_limits.py holds that order).
PARAMETERS: dict[str, Any] = {
    "ApiThrottlingRateLimit": number_parameter(
        "Steady-state requests per second the API stage accepts (all clients together) before answering "
        "429 RATE_LIMITED; each API key also has its own limit in the app.",
        default=500, minimum=1,
    ),
    "ApiThrottlingBurstLimit": number_parameter(
        "Burst of concurrent requests the API stage accepts above the steady rate (all clients together).", default=1000, minimum=1
    ),
}

#: Seconds a throttled client is told to wait (``Retry-After``); API Gateway's token bucket refills every second.
RETRY_AFTER_SECONDS = 1


def _body(code: str, message: str | None) -> str:
    """A response template: ``message`` as literal text, or API Gateway's own message when ``None``;
    ``requestId`` is API Gateway's request id (as the app's error bodies, chalicelib.edge.request_context)."""
    error = "$context.error.messageString" if message is None else json.dumps(message)  # the former is quoted JSON
    return '{"code": ' + json.dumps(code) + ', "error": ' + error + ', "requestId": "$context.requestId"}'


#: Headers of every gateway answer. A path under ``/dashboard`` that matches no route is answered
#: here, not by the app, and every Dashboard answer carries the Dashboard's security headers
#: (``chalicelib.dashboard.web.SECURITY_HEADERS``); gateway responses cannot depend on
#: the path, and on a JSON error body these headers harm no API client. The CSP is ``sandbox``
#: (no script, no plugin, a unique origin) because a static gateway header value is itself quoted
#: in single quotes and cannot hold the quoted keywords of ``default-src 'none'``.
SECURITY_HEADERS = {
    "Content-Security-Policy": "sandbox",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _response(status: int | None, code: str, message: str | None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {
        "ResponseParameters": {
            "Headers": {
                **{name: f"'{value}'" for name, value in {**SECURITY_HEADERS, **(headers or {})}.items()},
                "X-Request-Id": "context.requestId",
            }
        },
        "ResponseTemplates": {"application/json": _body(code, message)},
    }
    if status is not None:
        response["StatusCode"] = str(status)
    return response


#: Gateway response type -> its status and error body (None status: keep API Gateway's own).
GATEWAY_RESPONSES: dict[str, dict[str, Any]] = {
    # API Gateway (REST) answers a path or method without a route with this type.
    "MISSING_AUTHENTICATION_TOKEN": _response(404, "NOT_FOUND", "No route matches this method and path"),
    "RESOURCE_NOT_FOUND": _response(404, "NOT_FOUND", "No route matches this method and path"),
    "THROTTLED": _response(
        429, "RATE_LIMITED", "Too many requests; retry after the Retry-After seconds", {"Retry-After": str(RETRY_AFTER_SECONDS)}
    ),
    "QUOTA_EXCEEDED": _response(
        429, "RATE_LIMITED", "Request quota exceeded; retry after the Retry-After seconds", {"Retry-After": str(RETRY_AFTER_SECONDS)}
    ),
    "REQUEST_TOO_LARGE": _response(413, "PAYLOAD_TOO_LARGE", "Request body too large"),
    "UNSUPPORTED_MEDIA_TYPE": _response(415, "UNSUPPORTED_MEDIA_TYPE", "The request body must be application/json"),
    "BAD_REQUEST_BODY": _response(400, "VALIDATION_ERROR", None),
    "BAD_REQUEST_PARAMETERS": _response(400, "VALIDATION_ERROR", None),
    "UNAUTHORIZED": _response(
        401, "UNAUTHORIZED", "Missing or invalid API key", {"WWW-Authenticate": 'Bearer realm="matching-service"'}
    ),
    "ACCESS_DENIED": _response(403, "FORBIDDEN", "Access denied"),
    "EXPIRED_TOKEN": _response(403, "FORBIDDEN", "Access denied"),
    "INVALID_SIGNATURE": _response(403, "FORBIDDEN", "Access denied"),
    "INVALID_API_KEY": _response(403, "FORBIDDEN", "Access denied"),
    "WAF_FILTERED": _response(403, "FORBIDDEN", "Request blocked"),
    "AUTHORIZER_FAILURE": _response(500, "INTERNAL_ERROR", "An internal error occurred"),
    "AUTHORIZER_CONFIGURATION_ERROR": _response(500, "INTERNAL_ERROR", "An internal error occurred"),
    "API_CONFIGURATION_ERROR": _response(500, "INTERNAL_ERROR", "An internal error occurred"),
    "INTEGRATION_FAILURE": _response(None, "INTERNAL_ERROR", "An internal error occurred"),
    "INTEGRATION_TIMEOUT": _response(None, "INTERNAL_ERROR", "The request timed out"),
    "DEFAULT_4XX": _response(None, "REQUEST_REJECTED", None),
    "DEFAULT_5XX": _response(None, "INTERNAL_ERROR", "An internal error occurred"),
}


def rest_api_override() -> dict[str, Any]:
    """What the merge template adds to Chalice's ``RestAPI`` (``AWS::Serverless::Api``)."""
    return {
        "Type": "AWS::Serverless::Api",
        "Properties": {
            "MethodSettings": [
                {
                    "ResourcePath": "/*",
                    "HttpMethod": "*",
                    "ThrottlingRateLimit": {"Ref": "ApiThrottlingRateLimit"},
                    "ThrottlingBurstLimit": {"Ref": "ApiThrottlingBurstLimit"},
                    "MetricsEnabled": True,
                }
            ],
            "GatewayResponses": GATEWAY_RESPONSES,
        },
    }
