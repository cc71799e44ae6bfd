"""The OpenAPI 3.1 document, generated from the route table and the pydantic models.

Nothing here is maintained by hand: every operation comes from a
:class:`~chalicelib.edge.http.RouteSpec` in :data:`chalicelib.edge.http.ROUTES` (path, method, auth,
body, query and response models, status, tags, extra query names) and every schema from
pydantic's :func:`~pydantic.json_schema.models_json_schema`. Request bodies and query
parameters use the models' *validation* schemas, responses their *serialization* schemas
(what ``model_dump(mode="json")`` produces, nullable fields as ``anyOf`` with ``null``).

``GET /v1/openapi.json`` serves the document without a key.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from chalice.app import Request
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from chalicelib.edge import json_input, path_ids
from chalicelib.edge.http import ROUTES, ErrorBody, RouteSpec
from chalicelib.kernel.json_types import CONTROL_FREE, CONTROL_FREE_KEY
from chalicelib.openapi.links import add_links
from chalicelib.openapi.webhooks import WEBHOOKS_TAG, envelope_models, webhooks_section

__all__ = ["ERROR_RESPONSES", "build_document", "document", "error_statuses"]

OPENAPI_VERSION = "3.1.0"
REF_TEMPLATE = "#/components/schemas/{model}"
TITLE = "Matching Service API"
API_VERSION = "1.0.0"
SECURITY_SCHEME = "bearerAuth"

#: Error status -> (components.responses name, description). Every one carries :class:`ErrorBody`.
ERROR_RESPONSES: dict[int, tuple[str, str]] = {
    400: ("ValidationError", "VALIDATION_ERROR: malformed JSON, or a body, path or query value is invalid (`details` names it)."),
    401: ("Unauthorized", "UNAUTHORIZED: the `Authorization: Bearer <key>` header is missing, malformed or names no key."),
    403: ("Forbidden", "FORBIDDEN: the key lacks the admin scope, or the caller may not act on this resource; "
          "BLOCKED: a block stands between the caller and the other user (a request or message is refused)."),
    404: ("NotFound", "NOT_FOUND: the resource does not exist or is not visible to the caller."),
    409: ("Conflict", "CONFLICT: duplicate resource, or a state change not allowed from the current state, or "
          "(with `Retry-After`) a write that kept losing its race with concurrent writes: send it again; "
          "IDEMPOTENCY_KEY_IN_USE: a request with the same `Idempotency-Key` is still running (retry after `Retry-After`)."),
    412: ("PreconditionFailed", "PRECONDITION_FAILED: `If-Match` names another version than the current one; nothing changed."),
    413: ("PayloadTooLarge", "PAYLOAD_TOO_LARGE: the body exceeds 256 KiB."),
    415: ("UnsupportedMediaType", "UNSUPPORTED_MEDIA_TYPE: the body is not `application/json`, or is sent with a `Content-Encoding`."),
    422: ("IdempotencyKeyReused", "IDEMPOTENCY_KEY_REUSED: the `Idempotency-Key` was used with another request in the last 24 hours."),
    429: ("RateLimited", "RATE_LIMITED: too many requests with this API key (its token bucket), a daily quota of the "
          "user reached (match requests, profile requests, messages), or the stage's own throttling; retry after "
          "`Retry-After` seconds. `RateLimit-Policy` and `RateLimit` (`r=0`) name the policy that refused, except on the "
          "stage's throttling."),
    500: ("InternalError", "INTERNAL_ERROR: an unexpected fault (no stack trace in the body)."),
    503: ("ServiceUnavailable",
          "SERVICE_UNAVAILABLE: DynamoDB or SQS did not answer in time or kept throttling; retry after `Retry-After` seconds."),
}

#: Response headers of some error statuses (always sent with them).
_ERROR_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "`Bearer realm=...`", "required": True, "schema": {"type": "string"}}},
    429: {
        "Retry-After": {"description": "Seconds to wait.", "required": True, "schema": {"type": "string", "pattern": "^[0-9]+$"}},
        "RateLimit-Policy": {"$ref": "#/components/headers/RateLimit-Policy"},
        "RateLimit": {"$ref": "#/components/headers/RateLimit"},
    },
    409: {"Retry-After": {"description": "Seconds to wait before sending the same request again (only when that may succeed).",
                          "required": False, "schema": {"type": "string", "pattern": "^[0-9]+$"}}},
    503: {"Retry-After": {"description": "Seconds to wait.", "required": True, "schema": {"type": "string", "pattern": "^[0-9]+$"}}},
}

#: The document's tags, in display order, with their descriptions.
TAGS: dict[str, str] = {
    "listings": "Create, search, read, update, pause and delete listings.",
    "saved-searches": "Saved listing searches, their matches and alerts (`listing.matched` webhook events).",
    "requests": "Match requests (about a listing) and profile requests (about a user), and their decisions.",
    "conversations": "Conversations opened by accepted requests, and their messages.",
    "profiles": "The caller's own profile and other users' public profiles.",
    "channels": "Contact channels (telegram, discord, ...) the caller connects.",
    "categories": "Categories, their roles and typed fields.",
    "geocoding": "Addresses to coordinates.",
    "webhooks": "Register webhooks and read their delivery log.",
    "events": "Every event the caller's webhooks would carry, for 30 days: list, read one, and its delivery attempts.",
    "reports": "Report a listing, profile or message to the administrators.",
    "blocks": "Block users: no requests or messages between you, and neither sees the other's listings and profile.",
    "admin": "Administrator operations: users, verification levels, listing approval, reports, the audit log.",
    "system": "Health and this document.",
    WEBHOOKS_TAG: "The signed requests this service sends to registered webhook URLs.",
}

#: Request header parameters: request ids, safe retries, conditional requests.
HEADER_PARAMETERS: dict[str, dict[str, Any]] = {
    "XRequestId": {
        "name": "X-Request-Id", "in": "header", "required": False,
        "description": "Your id for this request: one of safe form (1..128 of `A-Za-z0-9._:-`, starting with a "
        "letter or digit) is echoed in the `X-Request-Id` response header and the logs; any other value is "
        "replaced by one the API assigns (never refused).",
        "schema": {"type": "string"},
    },
    "IdempotencyKey": {
        "name": "Idempotency-Key", "in": "header", "required": False,
        "description": "Makes a retry safe: the same key and request within 24 hours return the first response "
        "(`Idempotent-Replayed: true`) without doing the work again; the same key with another request is 422 "
        "IDEMPOTENCY_KEY_REUSED; while the first is running, 409 IDEMPOTENCY_KEY_IN_USE. Keys are per API user.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
    },
    "IfMatch": {
        "name": "If-Match", "in": "header", "required": False,
        "description": "Apply the change only if the resource still has this `ETag` (from its GET), else 412 "
        "PRECONDITION_FAILED; `*` only requires it to exist.",
        "schema": {"type": "string"},
    },
    "IfNoneMatch": {
        "name": "If-None-Match", "in": "header", "required": False,
        "description": "Answer 304 Not Modified (no body) if the resource still has one of these `ETag`s.",
        "schema": {"type": "string"},
    },
}

#: Response headers (``components.headers``).
RESPONSE_HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-Id": {"description": "This request's id (also `requestId` in error bodies); quote it when reporting a problem.",
                     "required": True, "schema": {"type": "string"}},
    "ETag": {"description": "Version of the resource (`\"<version>-<digest>\"`), for `If-Match` and `If-None-Match`.",
             "required": True, "schema": {"type": "string"}},
    "Idempotent-Replayed": {"description": "`true` when this is the stored response of an earlier request with the same "
                            "`Idempotency-Key`.", "required": False, "schema": {"type": "string", "enum": ["true"]}},
    # draft-ietf-httpapi-ratelimit-headers-11 (chalicelib.rate_limits.header_fields): Structured Field Lists.
    "RateLimit-Policy": {
        "description": "The rate-limit policy of the request (draft-ietf-httpapi-ratelimit-headers): "
        "`\"per-key\";q=<burst>;w=<seconds an empty bucket takes to fill>` for the caller's token bucket (one per user, "
        "shared by all its API keys and Dashboard sessions), or "
        "`\"<match-requests|profile-requests|messages>\";q=<daily quota>;w=86400` for a refused write.",
        "required": False, "schema": {"type": "string"}, "example": '"per-key";q=100;w=5',
    },
    "RateLimit": {
        "description": "What is left of that policy: `r` requests now, `t` seconds until the bucket is full again "
        "(on a refusal `r=0` and `t` equals `Retry-After`). Sent on every response to an admitted authenticated request.",
        "required": False, "schema": {"type": "string"}, "example": '"per-key";r=99;t=1',
    },
}


def _header_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/headers/{name}"}

_PATH_PARAM = re.compile(r"{([^}]+)}")
_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def path_params(path: str) -> list[str]:
    """The parameter names of a path template, in order (``/v1/x/{id}`` -> ``["id"]``)."""
    return _PATH_PARAM.findall(path)


def error_statuses(spec: RouteSpec) -> list[int]:
    """The error statuses ``spec``'s route can return, inferred from what it takes.

    400 always (a query parameter or body an operation does not take is refused); 401 with a
    key; 403 for admin routes and for user routes acting on a resource (ownership, policies);
    404 with path parameters or a body naming other resources; 409 for writes; 413 and 415
    always (any request may carry a body: one over 256 KiB, or not plain JSON, is refused before
    the operation reads it, :mod:`chalicelib.edge.fields`); 429 (rate limits, API Gateway
    throttling) and 500 and 503 (a dependency timing out) always. A route adds more through its
    ``error_statuses`` (e.g. 404 of ``GET /v1/geocode``).
    """
    has_params = bool(path_params(spec.path))
    acts_on_resource = has_params or spec.body is not None
    statuses = {400, 413, 415, 429, 500, 503, *spec.error_statuses}
    if spec.auth != "none":
        statuses.add(401)
    if spec.auth == "admin" or (spec.auth == "user" and acts_on_resource):
        statuses.add(403)
    if acts_on_resource:
        statuses.add(404)
    if spec.method in _WRITE_METHODS:
        statuses.add(409)
    if spec.conditional:
        statuses.add(412)
    if spec.idempotent:
        statuses.update((409, 422))
    return sorted(statuses)


def _model_inputs(routes: Sequence[RouteSpec]) -> list[tuple[type[BaseModel], JsonSchemaMode]]:
    inputs: dict[tuple[type[BaseModel], JsonSchemaMode], None] = {(ErrorBody, "serialization"): None}
    for envelope in envelope_models():
        inputs[(envelope, "serialization")] = None
    for spec in routes:
        for model in (spec.body, spec.query):
            if model is not None:
                inputs[(model, "validation")] = None
        if spec.response is not None:
            inputs[(spec.response, "serialization")] = None
    return list(inputs)


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter is absent rather than ``null``: drop ``null`` from an ``anyOf``."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or {"type": "null"} not in options:
        return schema
    rest = [o for o in options if o != {"type": "null"}]
    stripped = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
    merged = {**stripped, **rest[0]} if len(rest) == 1 else {**stripped, "anyOf": rest}
    if schema.get("default") is not None:
        merged["default"] = schema["default"]
    return merged


def _query_parameters(model_schema: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(model_schema.get("required", []))
    params = []
    for name, prop in model_schema.get("properties", {}).items():
        schema = _without_null({k: v for k, v in prop.items() if k not in ("title", "description")})
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in required, "schema": schema}
        if schema.get("type") == "array":  # one comma-separated value, as the server reads it (a repeated name is a 400)
            param.update(style="form", explode=False)
        if prop.get("description"):
            param["description"] = prop["description"]
        params.append(param)
    return params


def _path_parameters(spec: RouteSpec) -> list[dict[str, Any]]:
    # The path-id rule of the HTTP edge (chalicelib.edge.path_ids): anything else is 404 before any read;
    # a constrained parameter (an enum of channel keys) states its own type.
    parameters = []
    for name in path_params(spec.path):
        kind = spec.path_types.get(name)
        schema: dict[str, Any] = {
            "type": "string", "minLength": 1, "maxLength": path_ids.LONG_IDS.get(name, path_ids.MAX_LENGTH), "pattern": path_ids.PATTERN,
        }
        if kind is not None:
            schema |= {k: v for k, v in TypeAdapter(kind).json_schema().items() if k != "title"}
        parameters.append({"name": name, "in": "path", "required": True, "schema": schema})
    return parameters


#: Heading of the list of rules an operation checks beyond its schema.
RULES_HEADING = "Checked beyond the schema (400 VALIDATION_ERROR, `details` naming the field):"
#: The rule of every operation with a ``cursor`` query parameter (:mod:`chalicelib.kernel.cursors`).
CURSOR_RULE = (
    "`cursor` must be a `nextCursor` this operation returned for the same other parameters and `pageSize` "
    "(an opaque, signed token)"
)
#: What :data:`CURSOR_RULE` adds on an operation that also takes ``page``.
CURSOR_PAGE_RULE = ", and `page`, when given with it, must be the page it continues at"


def validation_rules(spec: RouteSpec) -> list[str]:
    """The input rules of ``spec``'s operation that its schema cannot express: the route's own,
    plus :data:`CURSOR_RULE` when its query takes a ``cursor`` (and :data:`CURSOR_PAGE_RULE`
    when it takes ``page`` too)."""
    rules = list(spec.rules)
    fields = spec.query.model_fields if spec.query is not None else {}
    if "cursor" in fields:
        rules.append(CURSOR_RULE + (CURSOR_PAGE_RULE if "page" in fields else "") + ".")
    return rules


def _bound_inputs(paths: dict[str, Any], schemas: dict[str, Any]) -> None:
    """State the number limits every request is held to (:mod:`chalicelib.edge.json_input`) on the
    inputs: parameters, request bodies and every schema they reach through ``$ref``."""
    inputs = [op.get("parameters", []) for item in paths.values() for op in item.values()]
    inputs += [op["requestBody"] for item in paths.values() for op in item.values() if "requestBody" in op]
    reached: set[str] = set()
    pending = [inputs]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(REF_TEMPLATE.format(model="")):
                name = ref.rsplit("/", 1)[-1]
                if name not in reached and name in schemas:
                    reached.add(name)
                    pending.append(schemas[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    reached_schemas = [schemas[name] for name in sorted(reached)]
    _bound_numbers([inputs, reached_schemas])
    _free_of_controls([inputs, reached_schemas])


def _free_of_controls(node: Any, key_schema: bool = False) -> None:
    """State the control-character rule of :mod:`chalicelib.edge.json_input` on every input string
    without a pattern of its own (an enum, a pattern or a format already excludes them)."""
    if isinstance(node, dict):
        if (node.get("type") == "string" or key_schema) and not {"pattern", "enum", "const", "format"} & node.keys():
            node["pattern"] = CONTROL_FREE_KEY if key_schema else CONTROL_FREE
        for name, value in node.items():
            _free_of_controls(value, key_schema=name == "propertyNames")
    elif isinstance(node, list):
        for value in node:
            _free_of_controls(value)


def _bound_numbers(node: Any) -> None:
    """Give every integer and number schema without bounds the limits every body is held to
    (:mod:`chalicelib.edge.json_input`: +-(2**53 - 1)), so the document states them."""
    if isinstance(node, dict):
        if node.get("type") in ("integer", "number"):
            # An exclusive bound already bounds that side (Redocly: no-mixed-number-range-constraints).
            if "exclusiveMinimum" not in node:
                node.setdefault("minimum", -json_input.MAX_SAFE_INTEGER)
            if "exclusiveMaximum" not in node:
                node.setdefault("maximum", json_input.MAX_SAFE_INTEGER)
        for value in node.values():
            _bound_numbers(value)
    elif isinstance(node, list):
        for value in node:
            _bound_numbers(value)


def _description(spec: RouteSpec) -> str:
    doc = (spec.handler.__doc__ or "").strip()
    parts = [doc] if doc else []
    if spec.auth == "admin":
        parts.append("Requires an API key with the admin scope.")
    elif spec.auth == "none":
        parts.append("No API key needed.")
    rules = validation_rules(spec)
    if rules:
        parts.append(RULES_HEADING + "\n\n" + "\n".join(f"- {rule}" for rule in rules))
    return "\n\n".join(parts)


def _operation_id(spec: RouteSpec, taken: set[str]) -> str:
    if spec.operation_id is not None:
        taken.add(spec.operation_id)
        return spec.operation_id
    module = spec.handler.__module__.removesuffix(".routes").rsplit(".", 1)[-1]
    candidate = f"{module}_{spec.handler.__name__}"
    if candidate in taken:
        candidate = f"{candidate}_{spec.method.lower()}"
    taken.add(candidate)
    return candidate


#: ``models_json_schema``'s answer: the ``$ref`` of each (model, mode).
Refs = Mapping[tuple[Any, JsonSchemaMode], dict[str, Any]]


def _operation(spec: RouteSpec, refs: Refs, schemas: dict[str, Any], taken: set[str]) -> dict[str, Any]:
    doc = (spec.handler.__doc__ or "").strip()
    operation: dict[str, Any] = {
        "operationId": _operation_id(spec, taken),
        "summary": doc.splitlines()[0] if doc else f"{spec.method} {spec.path}",
        "description": _description(spec),
        "tags": list(spec.tags),
    }
    parameters = _path_parameters(spec)
    if spec.query is not None:
        name = refs[(spec.query, "validation")]["$ref"].rsplit("/", 1)[-1]
        parameters += _query_parameters(schemas[name])
    if spec.extra_parameters is not None:
        parameters += spec.extra_parameters()
    if validation_rules(spec):
        operation["x-validation-rules"] = validation_rules(spec)
    headers = ["XRequestId"]
    headers += ["IdempotencyKey"] if spec.idempotent else []
    headers += ["IfMatch"] if spec.conditional else []
    headers += ["IfNoneMatch"] if spec.etag else []
    parameters += [HEADER_PARAMETERS[name] for name in headers]
    operation["parameters"] = parameters
    if spec.body is not None:
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": refs[(spec.body, "validation")]}}}
    success_schema = refs[(spec.response, "serialization")] if spec.response is not None else {"type": "object"}
    success_headers = {"X-Request-Id": _header_ref("X-Request-Id")}
    if spec.auth != "none":  # the user's bucket admitted the request (chalicelib.rate_limits.edge)
        success_headers |= {"RateLimit-Policy": _header_ref("RateLimit-Policy"), "RateLimit": _header_ref("RateLimit")}
    if spec.etag:
        success_headers["ETag"] = _header_ref("ETag")
    if spec.idempotent:
        success_headers["Idempotent-Replayed"] = _header_ref("Idempotent-Replayed")
    responses: dict[str, Any] = {
        str(spec.status): {
            "description": "Success.", "headers": success_headers, "content": {"application/json": {"schema": success_schema}}
        }
    }
    if spec.etag:
        responses["304"] = {
            "description": "Not Modified: `If-None-Match` names the current `ETag`; no body.",
            "headers": {"X-Request-Id": _header_ref("X-Request-Id"), "ETag": _header_ref("ETag")},
        }
    for status in error_statuses(spec):
        responses[str(status)] = {"$ref": f"#/components/responses/{ERROR_RESPONSES[status][0]}"}
    operation["responses"] = responses
    operation["security"] = [] if spec.auth == "none" else [{SECURITY_SCHEME: []}]
    return operation


def _error_components(error_ref: dict[str, Any]) -> dict[str, Any]:
    responses = {}
    for status, (name, description) in ERROR_RESPONSES.items():
        response: dict[str, Any] = {"description": description, "content": {"application/json": {"schema": error_ref}}}
        response["headers"] = {"X-Request-Id": _header_ref("X-Request-Id"), **_ERROR_HEADERS.get(status, {})}
        responses[name] = response
    return responses


LOCAL_SERVER = "http://127.0.0.1:8000"

INFO_DESCRIPTION = """Listings in categories under roles, search (text, category, role, typed `meta.*` filters,
geo nearest-first), profiles, match and profile requests, conversations, contact channels, signed webhooks
and administrator approval.

**Authentication**: every request carries `Authorization: Bearer <API key>` (`msk_...`) unless the operation
says otherwise. **Errors**: every non-2xx response has the body `{code, error, details?, requestId}`;
`details` lists `{field, issue}` for validation errors. **Headers**: every response carries `X-Request-Id`;
POST and PATCH accept `Idempotency-Key` for safe retries; listing and profile reads return an `ETag` for
`If-None-Match` (304) and `If-Match` (412 on a stale version) on their changes. **Rate limits**: each user has
one token bucket for all its keys and Dashboard sessions (by default 100 requests at once, refilled at 20 per
second; more for administrators),
and each user a daily quota of match requests, profile requests and messages (UTC days); beyond them the answer
is 429 `RATE_LIMITED` with `Retry-After`, and responses carry the IETF `RateLimit-Policy` and `RateLimit` fields
(draft-ietf-httpapi-ratelimit-headers). Browsers may call the API
from the origins the deployment allows (CORS). **Pagination**: list routes take `pageSize` (1..100, default 20);
most also take `page` (from 1) and answer `{<items>, total, page, pageSize}`, those whose schema has `nextCursor`
continue with `cursor`, and the administrators' queues, the audit log and the block list page by `cursor` only
(`{<items>, pageSize, nextCursor}`); each operation's parameters say which. **Webhooks**: the events this service
sends, their bodies and signature headers are in the `webhooks` section.

Each operation's schema states every input rule JSON Schema can express; rules it cannot (they depend on
stored data) are listed in the operation's description and in `x-validation-rules`."""


def _drop_query_models(routes: Sequence[RouteSpec], refs: Refs, schemas: dict[str, Any]) -> None:
    """Query models become parameters; their component schemas would be unused (Redocly: no-unused-components)."""
    used = {model for spec in routes for model in (spec.body, spec.response) if model is not None}
    for spec in routes:
        if spec.query is not None and spec.query not in used:
            schemas.pop(refs[(spec.query, "validation")]["$ref"].rsplit("/", 1)[-1], None)


def _drop_property_titles(schemas: dict[str, Any]) -> None:
    """Drop pydantic's per-property ``title`` ("Opentowork"): the property name says it, and
    generated clients would name types after it. Model titles stay."""
    for schema in schemas.values():
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)


def build_document(routes: Sequence[RouteSpec]) -> dict[str, Any]:
    """Build the OpenAPI 3.1 document of ``routes``.

    Parameters
    ----------
    routes:
        Route specs, usually :data:`chalicelib.edge.http.ROUTES`.

    Returns
    -------
    dict
        The JSON-ready document: one operation per route, schemas under
        ``components.schemas`` (``$ref`` ``#/components/schemas/<Model>``), the error body
        as shared ``components.responses``, the HTTP bearer security scheme, and links
        between operations (:mod:`chalicelib.openapi.links`).
    """
    refs, definitions = models_json_schema(_model_inputs(routes), ref_template=REF_TEMPLATE)
    schemas: dict[str, Any] = definitions.get("$defs", {})
    paths: dict[str, dict[str, Any]] = {}
    taken: set[str] = set()
    for spec in routes:
        paths.setdefault(spec.path, {})[spec.method.lower()] = _operation(spec, refs, schemas, taken)
    add_links(paths, schemas, {path: path_params(path) for path in paths})
    _bound_inputs(paths, schemas)
    _drop_query_models(routes, refs, schemas)
    _drop_property_titles(schemas)
    envelope_refs = {model.__name__: refs[(model, "serialization")]["$ref"] for model in envelope_models()}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": TITLE,
            "version": API_VERSION,
            "description": INFO_DESCRIPTION,
            "license": {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"},
        },
        "servers": [{"url": LOCAL_SERVER, "description": "The local stack (`make run`); the served document names its own host."}],
        "tags": [{"name": name, "description": description} for name, description in TAGS.items()],
        "paths": paths,
        "webhooks": webhooks_section(envelope_refs),
        "components": {
            "schemas": schemas,
            "responses": _error_components(refs[(ErrorBody, "serialization")]),
            "headers": RESPONSE_HEADERS,
            "securitySchemes": {
                SECURITY_SCHEME: {"type": "http", "scheme": "bearer", "description": "An API key (`msk_...`) as bearer token."}
            },
        },
        "security": [{SECURITY_SCHEME: []}],
    }


@functools.lru_cache(maxsize=4)
def _document_of(route_count: int) -> dict[str, Any]:
    return build_document(ROUTES[:route_count])


def document() -> dict[str, Any]:
    """The document of every route registered so far (cached; do not mutate it)."""
    return _document_of(len(ROUTES))


def server_url(request: Request) -> str | None:
    """The base URL the caller reached the API at (scheme, host, stage prefix), if known."""
    headers = request.headers
    host = headers.get("host")
    if not host:
        return None
    context = request.context or {}
    path, resource = str(context.get("path") or ""), str(context.get("resourcePath") or "")
    prefix = path[: -len(resource)] if resource and path.endswith(resource) else ""
    return f"{headers.get('x-forwarded-proto', 'http')}://{host}{prefix.rstrip('/')}"
