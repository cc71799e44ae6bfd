"""CORS preflight answered by API Gateway: an ``OPTIONS`` mock integration on every API path.

The browser's preflight never reaches the Lambda function. Each path of Chalice's API
definition gets an ``options`` operation whose mock integration answers 204 with the methods
and headers of :mod:`chalicelib.edge.cors` and, when the request's ``Origin`` is one of the stage's
allowed origins (the ``CorsAllowedOrigins`` parameter, which also becomes the functions'
``CORS_ALLOWED_ORIGINS``), ``Access-Control-Allow-Origin`` (set by a mapping template through
``$context.responseOverride``). The local server answers preflights with the same rules
(``local_stack/server.py``).
"""

from __future__ import annotations

from typing import Any

from chalicelib.edge import cors
from infra.cfn_parameters import string_parameter

PARAMETER = "CorsAllowedOrigins"

PARAMETERS: dict[str, Any] = {
    PARAMETER: string_parameter(
        "Origins allowed to call the API from a browser (CORS): comma-separated exact origins "
        "without spaces, * for any, empty (the default) for none.",
        r"^(\*|https?://[^,\s]+(,https?://[^,\s]+)*)?$", default="",
    ),
}

#: Sets Access-Control-Allow-Origin only for an allowed Origin (``${CorsAllowedOrigins}`` is
#: substituted by CloudFormation's Fn::Sub; the rest is API Gateway's Velocity template language).
_ORIGIN_TEMPLATE = """#set($origin = $input.params().header.get('Origin'))
#if("$!origin" == "")#set($origin = $input.params().header.get('origin'))#end
#set($allowed = ",${CorsAllowedOrigins},")
#if("$!origin" != "")
#if($allowed.contains(",*,"))
#set($context.responseOverride.header.Access-Control-Allow-Origin = "*")
#elseif($allowed.contains(",$origin,"))
#set($context.responseOverride.header.Access-Control-Allow-Origin = "$origin")
#end
#end
"""


def preflight_operation(methods: list[str]) -> dict[str, Any]:
    """The ``options`` operation (Swagger 2.0 with API Gateway extensions) of a path serving ``methods``."""
    allowed = cors.allow_field(methods)
    static = {
        "Allow": allowed,
        "Access-Control-Allow-Methods": allowed,
        "Access-Control-Allow-Headers": ", ".join(cors.ALLOWED_HEADERS),
        "Access-Control-Max-Age": str(cors.MAX_AGE_SECONDS),
        "Vary": "Origin",
    }
    declared = [*static, "Access-Control-Allow-Origin"]
    return {
        "consumes": ["application/json"],
        "produces": ["application/json"],
        "responses": {"204": {"description": "CORS preflight", "headers": {h: {"type": "string"} for h in declared}}},
        "x-amazon-apigateway-integration": {
            "type": "mock",
            "passthroughBehavior": "when_no_match",
            "requestTemplates": {"application/json": '{"statusCode": 204}'},
            "responses": {
                "default": {
                    "statusCode": "204",
                    "responseParameters": {f"method.response.header.{h}": f"'{v}'" for h, v in static.items()},
                    "responseTemplates": {"application/json": {"Fn::Sub": _ORIGIN_TEMPLATE}},
                }
            },
        },
    }


def with_preflight(rest_api: dict[str, Any], routes: dict[str, list[str]]) -> dict[str, Any]:
    """``rest_api`` (the ``RestAPI`` override) plus an ``options`` operation for each path of ``routes``.

    Parameters
    ----------
    rest_api:
        The ``AWS::Serverless::Api`` override of ``infra/cfn_api.py``.
    routes:
        Path template -> its methods (:func:`api_routes`).
    """
    paths = {path: {"options": preflight_operation(methods)} for path, methods in sorted(routes.items())}
    properties = {**rest_api["Properties"], "DefinitionBody": {"paths": paths}}
    return {**rest_api, "Properties": properties}


def api_routes() -> dict[str, list[str]]:
    """Path template -> methods of the app's public API routes (``/v1/...``; imports ``app``)."""
    from app import app

    return {path: sorted(entries) for path, entries in app.routes.items() if path.startswith(cors.API_PREFIX)}
