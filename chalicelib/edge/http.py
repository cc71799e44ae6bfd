"""The HTTP edge: route registration, parsing, serialization and error bodies.

Every route is registered through :func:`route`, which

* authenticates the caller (``auth="user"`` or ``"admin"``; ``"none"`` for public routes),
* rejects bodies over :data:`MAX_BODY_BYTES` and malformed JSON,
* validates the body and query string with the given pydantic models,
* serializes the returned model, and
* turns every :class:`~chalicelib.kernel.errors.DomainError` (and any unexpected exception) into the
  spec's error body (spec §7), never leaking a stack trace.

It also records each route in :data:`ROUTES`, from which the OpenAPI document is generated.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from aws_lambda_powertools import Logger
from chalice.app import Blueprint, Chalice, Request, Response
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from chalicelib.edge import cors, json_input, path_ids
from chalicelib.edge.fields import JSON_MEDIA_TYPE, check_content_fields, header_value
from chalicelib.edge.request_context import current_request_id
from chalicelib.kernel import errors, query_text
from chalicelib.kernel.lazy_imports import lazy_imports
from chalicelib.kernel.model_base import Model

with lazy_imports(__name__):  # with the first request that renders a view or holds a cursor, not at cold start
    from chalicelib.edge import conditional as conditional_requests
    from chalicelib.kernel import cursors

logger = Logger(service="matching-service", child=True)

#: Largest accepted request body: 256 KiB (DESIGN; API Gateway itself allows 10 MB).
MAX_BODY_BYTES = 256 * 1024

AuthMode = Literal["user", "admin", "none"]
Router = Chalice | Blueprint
#: A pydantic model class, or a function returning one (``lambda: models.Listing``). Route modules
#: pass the function so that the model's module loads with the first request of the route (or the
#: OpenAPI build) instead of at cold start (:mod:`chalicelib.kernel.lazy_imports`).
ModelRef = type[BaseModel] | Callable[[], type[BaseModel]]


class Principal(Protocol):
    """The authenticated caller as the edge sees it (:class:`chalicelib.auth.service.Caller`)."""

    @property
    def user_id(self) -> str:
        """The caller's user id (scopes its idempotency keys and cursors)."""

    @property
    def key_id(self) -> str:
        """The API key's SHA-256 (empty for a Dashboard session)."""

    @property
    def is_admin(self) -> bool:
        """Whether the key carries the admin scope."""


#: ``(authorization header, require_admin) -> Principal``; raises ``Unauthorized`` or ``Forbidden``.
Authenticate = Callable[[str | None, bool], Principal]
#: ``(user_id, is_admin) -> None``-like; raises ``RateLimited`` once the user's bucket (all its keys) is empty.
Admit = Callable[[str, bool], object]
#: ``(scope, key, request fingerprint, work, lambda context, authorization header) -> response``, ``work``
#: run at most once a key (its stored response sealed with the presented credential).
RunOnce = Callable[[str, str, dict[str, Any], Callable[[], Response], Any, str | None], Response]


@dataclass(frozen=True)
class Gate:
    """What the edge asks of the domain around every view: its ports, filled by the composition root.

    ``app.py`` installs :func:`chalicelib.composition.services` (:func:`install_gate`) before any request,
    so that this module, the HTTP edge, reaches DynamoDB through nothing: the API keys, the rate
    limit buckets and the idempotency records stay behind their services.
    """

    authenticate: Authenticate
    admit: Admit
    run_once: RunOnce


_gate: list[Gate] = []


def install_gate(gate: Gate) -> None:
    """Make ``gate`` the services every route's handler calls (the last installed wins)."""
    _gate[:] = [gate]


def current_gate() -> Gate:
    """The installed :class:`Gate`.

    Raises
    ------
    RuntimeError
        None is installed (``app.py`` installs it at import).
    """
    if not _gate:
        raise RuntimeError("no Gate installed: import app (or call chalicelib.edge.http.install_gate) before serving requests")
    return _gate[0]


#: The request header naming an idempotent retry (Stripe's semantics, :mod:`chalicelib.idempotency.service`).
IDEMPOTENCY_HEADER = "Idempotency-Key"

#: Longest accepted ``Idempotency-Key`` (Stripe: 255 characters).
MAX_IDEMPOTENCY_KEY_LENGTH = 255


def key_from(value: str | None) -> str | None:
    """The request's ``Idempotency-Key`` from the header's ``value``, or ``None`` when absent.

    Raises
    ------
    RuleViolation
        Empty, longer than :data:`MAX_IDEMPOTENCY_KEY_LENGTH`, or not printable ASCII without
        spaces (``details`` names ``Idempotency-Key``).
    """
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_IDEMPOTENCY_KEY_LENGTH or not all("!" <= c <= "~" for c in value):
        raise errors.RuleViolation.for_field(
            IDEMPOTENCY_HEADER, f"1..{MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters without spaces (e.g. a UUID)",
            "Invalid Idempotency-Key header",
        )
    return value


def resolve_model(ref: ModelRef) -> type[BaseModel]:
    """The model class ``ref`` names: ``ref`` itself when it is a class, else what calling it returns."""
    return ref if isinstance(ref, type) else ref()


@dataclass(frozen=True)
class RouteSpec:
    """What the OpenAPI generator needs to know about one route."""

    path: str
    method: str
    handler: Callable[..., Any]
    auth: AuthMode
    #: The models as the route names them (see :data:`ModelRef`); read them as ``body``, ``query``, ``response``.
    body_ref: ModelRef | None
    query_ref: ModelRef | None
    response_ref: ModelRef | None
    status: int
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: OpenAPI parameter objects of query parameters no model declares (``meta.<key>`` filters).
    extra_parameters: Callable[[], list[dict[str, Any]]] | None = None
    #: Error statuses the view raises beyond those ``chalicelib.openapi.document.error_statuses`` infers.
    error_statuses: tuple[int, ...] = field(default_factory=tuple)
    #: The view honours ``If-Match`` (412 on a mismatch).
    conditional: bool = False
    #: The view returns :class:`~chalicelib.edge.conditional.Versioned`: ``ETag``, ``If-None-Match`` -> 304.
    etag: bool = False
    #: The OpenAPI ``operationId`` when the view's module does not name its domain (``None``: derived).
    operation_id: str | None = None
    #: Types of path parameters whose values are constrained (an enum of channel keys, ...).
    path_types: dict[str, Any] = field(default_factory=dict)
    #: Input rules JSON Schema cannot state, checked by the service (400 VALIDATION_ERROR).
    rules: tuple[str, ...] = field(default_factory=tuple)

    @property
    def body(self) -> type[BaseModel] | None:
        """The JSON body's model (its module is imported now if the route named it lazily)."""
        return None if self.body_ref is None else resolve_model(self.body_ref)

    @property
    def query(self) -> type[BaseModel] | None:
        """The query string's model (imported now if named lazily)."""
        return None if self.query_ref is None else resolve_model(self.query_ref)

    @property
    def response(self) -> type[BaseModel] | None:
        """The response's model (imported now if named lazily)."""
        return None if self.response_ref is None else resolve_model(self.response_ref)

    @property
    def idempotent(self) -> bool:
        """Whether the route honours ``Idempotency-Key`` (every POST and PATCH)."""
        return self.method in IDEMPOTENT_METHODS


#: Methods whose requests honour ``Idempotency-Key``.
IDEMPOTENT_METHODS = frozenset({"POST", "PATCH"})

#: Every registered route, in registration order.
ROUTES: list[RouteSpec] = []


class ErrorBody(Model):
    """The spec's error body (spec §7)."""

    code: str
    error: str
    details: list[errors.FieldIssue] | None = None
    #: The request's ``X-Request-Id`` (quote it when reporting a problem).
    requestId: str | None = None


#: The one table from the domain's errors to the API's answers: status and the spec's error code
#: (spec §7, DESIGN §2). A subclass not listed takes its nearest listed base's row
#: (``DependencyUnavailable`` is ``Unavailable``'s 503); anything else is 500 INTERNAL_ERROR.
ERROR_STATUSES: dict[type[errors.DomainError], tuple[int, str]] = {
    errors.RuleViolation: (400, "VALIDATION_ERROR"),
    errors.Unauthorized: (401, "UNAUTHORIZED"),
    errors.Forbidden: (403, "FORBIDDEN"),
    errors.Blocked: (403, "BLOCKED"),
    errors.NotFound: (404, "NOT_FOUND"),
    errors.MethodNotAllowed: (405, "METHOD_NOT_ALLOWED"),
    errors.Conflict: (409, "CONFLICT"),
    errors.IdempotencyKeyInUse: (409, "IDEMPOTENCY_KEY_IN_USE"),
    errors.PreconditionFailed: (412, "PRECONDITION_FAILED"),
    errors.TooLarge: (413, "PAYLOAD_TOO_LARGE"),
    errors.UnsupportedMediaType: (415, "UNSUPPORTED_MEDIA_TYPE"),
    errors.IdempotencyKeyReused: (422, "IDEMPOTENCY_KEY_REUSED"),
    errors.RateLimited: (429, "RATE_LIMITED"),
    errors.Internal: (500, "INTERNAL_ERROR"),
    errors.Unavailable: (503, "SERVICE_UNAVAILABLE"),
}

#: The message of every 500: a fault's own text never reaches a client.
INTERNAL_MESSAGE = "An internal error occurred"

#: ``WWW-Authenticate`` of every 401 (RFC 6750 §3).
AUTHENTICATE_CHALLENGE = 'Bearer realm="matching-service"'


def error_status(exc: BaseException) -> tuple[int, str]:
    """The status and error code of ``exc`` (:data:`ERROR_STATUSES`; 500 ``INTERNAL_ERROR`` for any other exception)."""
    for kind in type(exc).__mro__:
        if kind in ERROR_STATUSES:
            return ERROR_STATUSES[kind]
    return ERROR_STATUSES[errors.Internal]


def error_headers(exc: BaseException) -> dict[str, str]:
    """The headers that go with ``exc``'s answer: ``WWW-Authenticate`` of a 401, ``Retry-After`` of a
    retryable error (409 in use, 429, 503) and the RateLimit fields of a 429 (:mod:`chalicelib.rate_limits`)."""
    headers: dict[str, str] = {}
    if isinstance(exc, errors.Unauthorized):
        headers["WWW-Authenticate"] = AUTHENTICATE_CHALLENGE
    if isinstance(exc, errors.RateLimited):
        headers.update(exc.limit_fields)
    retry_after = exc.retry_after_seconds if isinstance(exc, errors.DomainError) else None
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return headers


def error_body(exc: BaseException) -> dict[str, Any]:
    """The spec's error body of ``exc`` (``details`` omitted when empty; the message of a 500 is :data:`INTERNAL_MESSAGE`)."""
    status, code = error_status(exc)
    known = isinstance(exc, errors.DomainError) and status != 500
    message = exc.message if isinstance(exc, errors.DomainError) and known else INTERNAL_MESSAGE
    details = exc.details if isinstance(exc, errors.DomainError) and known else None
    return ErrorBody(code=code, error=message, details=details).model_dump(exclude_none=True)


def error_response(exc: BaseException) -> Response:
    """Render ``exc`` as a Chalice response with the spec's error body and the request's ``requestId``."""
    status, _ = error_status(exc)
    headers: dict[str, str | list[str]] = {"Content-Type": "application/json", **error_headers(exc)}
    body = error_body(exc)
    request_id = current_request_id()
    if request_id is not None:
        body["requestId"] = request_id
    return Response(body=json.dumps(body), status_code=status, headers=headers)


def to_jsonable(value: Any) -> Any:
    """Turn a pydantic model (or a list of them) into JSON-ready data, keeping nulls."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    return value


def json_text(value: Any) -> str:
    """A view's result as JSON text, nulls kept: a model by pydantic-core's own serializer in one
    pass (a search page of 20 listings: no intermediate dicts for ``json.dumps`` to walk again);
    anything else (lists, plain data) through :func:`to_jsonable` and ``json.dumps``."""
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    return json.dumps(to_jsonable(value))


def render(request: Request, result: Any, status: int) -> Response:
    """The response of a view's ``result``: JSON with ``status``; a :class:`~chalicelib.edge.conditional.Versioned` one with its
    ``ETag``, or 304 without a body when ``If-None-Match`` names that ETag."""
    if isinstance(result, Response):
        return result
    versioned = result if isinstance(result, conditional_requests.Versioned) else None
    text = json_text(versioned.result if versioned else result)
    headers: dict[str, str | list[str]] = {"Content-Type": "application/json"}
    if versioned is not None:
        tag = conditional_requests.etag(versioned.version, text.encode())
        if request.method == "GET" and conditional_requests.not_modified(header_value(request, "if-none-match"), tag):
            return Response(body="", status_code=304, headers={"ETag": tag})
        headers["ETag"] = tag
    return Response(body=text, status_code=status, headers=headers)


def parse_json_body(request: Request) -> Any:
    """Return the decoded JSON body of ``request``.

    Raises
    ------
    TooLarge
        Over :data:`MAX_BODY_BYTES`.
    RuleViolation
        Missing or malformed JSON (``details`` names ``body``).
    """
    raw = request.raw_body or b""
    if len(raw) > MAX_BODY_BYTES:
        raise errors.TooLarge(f"Request body exceeds {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        raise errors.RuleViolation.for_field("body", "a JSON object is required", "Request body is empty")
    try:
        data = json.loads(_utf8(raw), parse_int=json_input.parse_int, object_pairs_hook=json_input.unique_members)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise errors.RuleViolation.for_field("body", f"malformed JSON: {exc}", "Request body is not valid JSON") from exc
    except RecursionError as exc:  # nested far beyond json_input.MAX_DEPTH
        raise errors.RuleViolation.for_field(
            "body", f"nesting deeper than {json_input.MAX_DEPTH} levels", "Request body nests too deeply"
        ) from exc
    except ValueError as exc:  # any other refusal of the decoder: still the client's document
        raise errors.RuleViolation.for_field("body", f"not decodable: {exc}", "Request body is not valid JSON") from exc
    json_input.check_document(data)
    return data


def _utf8(raw: str | bytes) -> str:
    """The body as text: UTF-8, as JSON exchanged between systems must be (RFC 8259, section 8.1;
    ``json.loads`` given bytes would also read UTF-16 and UTF-32). A leading UTF-8 byte order mark
    is ignored, as that section allows a parser to.

    Raises
    ------
    UnicodeDecodeError
        ``raw`` is not UTF-8.
    """
    return raw if isinstance(raw, str) else raw.decode("utf-8-sig")


def parse_model[M: BaseModel](model: type[M], data: Any, prefix: str = "") -> M:
    """Validate ``data`` against ``model``.

    Raises
    ------
    RuleViolation
        One ``details`` item per invalid field (``prefix`` prepended to its path).
    """
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        raise errors.from_pydantic(exc, prefix, data=data) from exc


def _json_number(text: str) -> int | float:
    """A JSON number with a fraction or exponent: an ``int`` when integral (``1.0``, ``1e2``)."""
    number = float(text)
    return int(number) if number.is_integer() else number


def parse_body[M: BaseModel](model: type[M], request: Request) -> M:
    """Validate the JSON body of ``request`` against ``model``, in strict mode.

    JSON has types, so a body value must have the type the model (and the OpenAPI document)
    gives it: ``false`` is not an integer, ``0`` not a boolean, ``"5"`` not a number.

    Raises
    ------
    TooLarge, RuleViolation
        As :func:`parse_json_body` and :func:`parse_model`.
    """
    parse_json_body(request)  # size, emptiness and well-formedness, with their own messages
    # JSON Schema counts 1.0 as an integer (2020-12 validation §6.1.1 "a number with a zero
    # fractional part"); strict pydantic does not, so integral numbers are read as integers.
    data = json.loads(_utf8(request.raw_body or b""), parse_float=_json_number, parse_int=json_input.parse_int)
    try:
        return model.model_validate_json(json.dumps(data, ensure_ascii=False), strict=True)
    except PydanticValidationError as exc:
        from pydantic import RootModel  # loaded with the first root-model body (match_requests.StatusChange), not at cold start

        raise errors.from_pydantic(exc, tagged_union=issubclass(model, RootModel), data=data) from exc


def refuse_query(params: dict[str, str]) -> None:
    """Refuse query parameters sent to an operation that takes none: they would be ignored unread.

    Raises
    ------
    RuleViolation
        One ``details`` item per parameter.
    """
    if params:
        raise errors.RuleViolation(
            "This operation takes no query parameters",
            [errors.FieldIssue(field=name, issue="not a parameter of this operation: it takes none") for name in params],
        )


def refuse_body(request: Request) -> None:
    """Refuse a body sent to an operation that takes none (a GET included): its fields would be dropped unread.

    No body, a blank one and ``{}`` pass (clients that always send a JSON object work).

    Raises
    ------
    TooLarge, RuleViolation
        As :func:`parse_json_body`; a non-empty document is a :class:`RuleViolation` with one
        ``details`` item per member of an object, or one naming ``body`` for any other value.
    """
    raw = request.raw_body or b""
    if len(raw) <= MAX_BODY_BYTES and not raw.strip():
        return
    data = parse_json_body(request)
    if data == {}:
        return
    fields = list(data) if isinstance(data, dict) else ["body"]
    raise errors.RuleViolation(
        "This operation takes no request body",
        [errors.FieldIssue(field=name, issue="not a field of this operation: it takes no body") for name in fields],
    )


def check_path_ids(path_params: dict[str, Any]) -> None:
    """Refuse path ids that cannot name anything (:func:`chalicelib.edge.path_ids.is_valid`), before any read.

    Raises
    ------
    NotFound
        An id too long or with characters no id has; the message quotes at most
        :data:`chalicelib.edge.path_ids.MAX_LENGTH` characters of it.
    """
    for name, value in path_params.items():
        text = str(value)
        if not path_ids.is_valid(name, text):
            raise errors.NotFound(path_ids.not_found_message(name, text))


def query_params(request: Request) -> dict[str, str]:
    """The query string as a flat dict: parameter name -> its value.

    Raises
    ------
    RuleViolation
        A name given more than once (``details`` names it). A list is one comma-separated value
        (the OpenAPI document declares array parameters ``style: form, explode: false``); keeping
        one of several values would silently widen or change the query. Or a value holding
        U+FFFD: percent-encoded bytes that are not UTF-8 decode to it, and searching for it would
        match everything instead of refusing the value.
    """
    params = request.query_params
    if not params:
        return {}
    for name in params:
        if len(params.getlist(name)) > 1:
            raise errors.RuleViolation.for_field(
                name, "is given more than once: send it once (a list as one comma-separated value)", f"Repeated query parameter {name}"
            )
        if "\ufffd" in params[name]:
            raise errors.RuleViolation.for_field(name, "is not UTF-8 text (percent-encode the value's UTF-8 bytes)")
    return dict(params)


def route(
    router: Router,
    path: str,
    method: str,
    *,
    auth: AuthMode = "user",
    body: ModelRef | None = None,
    query: ModelRef | None = None,
    response: ModelRef | None = None,
    status: int = 200,
    tags: tuple[str, ...] = (),
    extra_parameters: Callable[[], list[dict[str, Any]]] | None = None,
    error_statuses: tuple[int, ...] = (),
    conditional: bool = False,
    etag: bool = False,
    operation_id: str | None = None,
    path_types: dict[str, Any] | None = None,
    rules: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a view on ``router`` with authentication, validation and error handling.

    The view is called as ``view(caller, **path_params, body=..., query=...)``: ``caller``
    is the authenticated :class:`~chalicelib.auth.service.Caller` (omitted when
    ``auth="none"``), ``body`` and ``query`` are the validated models when given. It returns
    a pydantic model (or JSON-ready data), sent with ``status``.

    Parameters
    ----------
    router:
        The Chalice app or blueprint.
    path, method:
        As for ``Chalice.route``; one method per registration.
    auth:
        ``"user"`` (any valid key), ``"admin"`` (a key with the admin scope) or ``"none"``.
    body, query, response:
        pydantic models of the JSON body, the query string and the response (OpenAPI), each
        a class or a function returning it (:data:`ModelRef`; the function is called on the
        route's first request, so the model's module stays out of the cold start).
    extra_parameters:
        Returns the OpenAPI parameter objects of query parameters the view reads itself
        (the ``query`` model then allows extra keys).
    error_statuses:
        Error statuses the view raises that OpenAPI cannot infer from the inputs (e.g. 404 of
        a lookup by query string); see :func:`chalicelib.openapi.document.error_statuses`.
    conditional:
        The view honours ``If-Match``: it gets ``expected_version`` (see
        :func:`chalicelib.edge.conditional.expected_version`) and answers 412 on a mismatch.
    etag:
        The view returns :class:`~chalicelib.edge.conditional.Versioned` (documented ``ETag`` and 304).

    A read view may return :class:`~chalicelib.edge.conditional.Versioned` to send an ``ETag`` (and
    answer ``If-None-Match`` with 304). POST and PATCH honour ``Idempotency-Key``
    (:mod:`chalicelib.idempotency.service`).
    operation_id:
        The OpenAPI ``operationId``, for a view registered outside its domain's routes module
        (the cross-domain routes of :mod:`chalicelib.workflows.routes`); derived when ``None``.
    path_types:
        Types (pydantic-compatible) of constrained path parameters, for their OpenAPI schema.
    rules:
        Input rules the JSON Schema cannot express, listed in the operation's description
        (and excluded by operation id from the contract run's positive-data check).
    """

    def register(view: Callable[..., Any]) -> Callable[..., Any]:
        def failed(exc: Exception) -> Response:
            """The error response of ``exc`` (call it while handling ``exc``: faults are logged with it).

            An :class:`~chalicelib.kernel.errors.DomainError` is rendered as it is (a dependency that did not
            answer is logged too); anything else is logged and answered 500 without details.
            """
            if isinstance(exc, errors.DependencyUnavailable):
                logger.exception("dependency unavailable", extra={"path": path, "method": method, "cause": exc.cause})
            if not isinstance(exc, errors.DomainError):
                logger.exception("unhandled error", extra={"path": path, "method": method})
            return error_response(exc)

        def run(request: Request, args: list[Any], kwargs: dict[str, Any]) -> Response:
            """Call the view and render its result or error (never raises); cursors are the caller's own."""
            try:
                if conditional:  # read within the idempotent part: the same key with another If-Match is 422, not 412
                    kwargs["expected_version"] = conditional_requests.expected_version(header_value(request, "if-match"))
                with cursors.held_by(args[0].user_id if args else ""):
                    return render(request, view(*args, **kwargs), status)
            except Exception as exc:  # noqa: BLE001 -- every error becomes a response; faults are logged
                return failed(exc)

        @functools.wraps(view)
        def handler(**path_params: Any) -> Response:
            request = router.current_request
            assert request is not None  # Chalice sets it before calling a view
            try:
                kwargs: dict[str, Any] = dict(path_params)
                args: list[Any] = []
                scope = "public"
                gate = current_gate()
                check_content_fields(request)
                if auth != "none":
                    caller = gate.authenticate(header_value(request, "authorization"), auth == "admin")
                    args.append(caller)
                    scope = caller.user_id
                    gate.admit(caller.user_id, caller.is_admin)  # 429 RATE_LIMITED once the user's bucket is empty
                check_path_ids(path_params)
                params = query_params(request)
                json_input.check_document(params)  # every route, also those reading params themselves
                if query is None and extra_parameters is None:
                    refuse_query(params)
                if body is not None:
                    kwargs["body"] = parse_body(resolve_model(body), request)
                else:
                    refuse_body(request)
                if query is not None:
                    model, params = resolve_model(query), query_params(request)
                    query_text.check(model, params)
                    kwargs["query"] = parse_model(model, params)
                key = key_from(header_value(request, IDEMPOTENCY_HEADER)) if method in IDEMPOTENT_METHODS else None
                if key is None:
                    return run(request, args, kwargs)
                fingerprint = {
                    "method": method, "route": path, "params": path_params,
                    # The body as validated (1.0 read as 1): the same request whatever its JSON spelling.
                    "body": kwargs["body"].model_dump(mode="json") if body is not None else None,
                    "ifMatch": header_value(request, "if-match"), "ifNoneMatch": header_value(request, "if-none-match"),
                }
                lambda_context = getattr(router, "lambda_context", None)
                return gate.run_once(
                    scope, key, fingerprint, lambda: run(request, args, kwargs), lambda_context, header_value(request, "authorization")
                )
            except Exception as exc:  # noqa: BLE001 -- e.g. the API-key lookup of authenticate(), outside run()
                return failed(exc)

        # No Chalice media-type check (content_types=[]): it refused a request without a body for its
        # Content-Type alone; check_content_fields judges the label of a body that is there.
        router.route(path, methods=[method], content_types=[])(handler)
        ROUTES.append(
            RouteSpec(
                path, method, view, auth, body, query, response, status, tags, extra_parameters, error_statuses,
                operation_id=operation_id, conditional=conditional, etag=etag, path_types=dict(path_types or {}), rules=rules,
            )
        )
        return view

    return register


def routes(
    router: Router, *, tags: tuple[str, ...] = (), auth: AuthMode = "user"
) -> functools.partial[Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """:func:`route` with the router, tags and authentication that a routes module's views share.

    A module binds them once (``route = routes(bp, tags=("webhooks",))``) and registers each view
    with ``@route(path, method, ...)``; a registration may still pass its own ``tags`` or ``auth``.

    Returns
    -------
    functools.partial
        :func:`route` with ``router``, ``tags`` and ``auth`` given.
    """
    return functools.partial(route, router, tags=tags, auth=auth)


#: Chalice's own error codes (raised before our views run) mapped to the API's vocabulary.
_CHALICE_ERRORS: dict[str, type[errors.DomainError]] = {
    "BadRequestError": errors.RuleViolation,
    "MethodNotAllowedError": errors.MethodNotAllowed,
    "UnsupportedMediaType": errors.UnsupportedMediaType,
    "NotFoundError": errors.NotFound,
    "UnauthorizedError": errors.Unauthorized,
    "ForbiddenError": errors.Forbidden,
    "ConflictError": errors.Conflict,
    "TooManyRequestsError": errors.RateLimited,
    "RequestTooLargeError": errors.TooLarge,
    "InternalServerError": errors.Internal,
}


def chalice_errors_middleware(event: Request, get_response: Callable[[Request], Response]) -> Response:
    """HTTP middleware: rewrite errors that Chalice produces itself into the spec's error body.

    Chalice answers a wrong method (405), an unsupported media type (415) and a few others
    before our views run, with ``{"Code", "Message"}``; clients must only ever see
    ``{"code", "error"}``.
    """
    response = get_response(event)
    body = response.body
    if response.status_code >= 400 and isinstance(body, dict) and "Code" in body:
        error_type = _CHALICE_ERRORS.get(str(body["Code"]), errors.Internal)
        message = str(body.get("Message") or "Request failed")
        error = error_type(message)
        if isinstance(error, errors.UnsupportedMediaType):  # Chalice's check of the Content-Type it read
            error.details = [errors.FieldIssue(field="Content-Type", issue=f"must be {JSON_MEDIA_TYPE}")]
        rendered = error_response(error)
        resource = str((event.context or {}).get("resourcePath") or "")
        allowed = allowed_methods(resource)
        if error_type is errors.MethodNotAllowed and allowed:  # RFC 9110 §15.5.6: a 405 lists the methods
            rendered.headers["Allow"] = cors.allow_field(allowed) if resource.startswith(cors.API_PREFIX) else ", ".join(allowed)
        return rendered
    return response


def allowed_methods(path: str) -> list[str]:
    """The methods registered for the route template ``path`` (e.g. ``/v1/listings/{listingId}``)."""
    return sorted({spec.method for spec in ROUTES if spec.path == path})
