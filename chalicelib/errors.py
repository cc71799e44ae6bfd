"""The API's error vocabulary.

Every non-2xx response carries the spec's error body (spec §7)::

    {"code": "VALIDATION_ERROR", "error": "human readable", "details": [{"field": "...", "issue": "..."}]}

Codes and statuses follow DESIGN §2. Services raise these exceptions; the route wrapper
(:func:`chalicelib.http.route`) turns them into responses and
:func:`chalicelib.http.chalice_errors_middleware` rewrites Chalice's own errors, so no layer
below the route handler builds an HTTP response.
"""

from __future__ import annotations

from typing import Any

from chalicelib.model_base import Model


class FieldIssue(Model):
    """One item of an error body's ``details``: the offending field and what is wrong with it."""

    field: str
    issue: str


class ErrorBody(Model):
    """The spec's error body (spec §7)."""

    code: str
    error: str
    details: list[FieldIssue] | None = None
    #: The request's ``X-Request-Id`` (quote it when reporting a problem).
    requestId: str | None = None


class ApiError(Exception):
    """Base of every error the API reports to a client.

    Parameters
    ----------
    message:
        Human-readable text for the ``error`` field.
    details:
        Optional list of :class:`FieldIssue` naming the offending fields.
    """

    status: int = 500
    code: str = "INTERNAL_ERROR"

    def __init__(self, message: str, details: list[FieldIssue] | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or None
        #: Extra response headers (``WWW-Authenticate``, ``Retry-After``).
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """Return the JSON-ready error body (``details`` omitted when empty)."""
        return ErrorBody(code=self.code, error=self.message, details=self.details).model_dump(
            exclude_none=True
        )


class ValidationError(ApiError):
    """400 VALIDATION_ERROR: the request is malformed or names bad values."""

    status = 400
    code = "VALIDATION_ERROR"

    @classmethod
    def for_field(cls, field: str, issue: str, message: str | None = None) -> ValidationError:
        """Build an error whose ``details`` names one field.

        Parameters
        ----------
        field:
            Dotted path of the offending field or query parameter, e.g. ``meta.salary``.
        issue:
            What is wrong with it.
        message:
            Optional summary; defaults to ``"Invalid <field>: <issue>"``.
        """
        return cls(message or f"Invalid {field}: {issue}", [FieldIssue(field=field, issue=issue)])


class UnauthorizedError(ApiError):
    """401 UNAUTHORIZED: missing, malformed or unknown API key."""

    status = 401
    code = "UNAUTHORIZED"

    def __init__(self, message: str, details: list[FieldIssue] | None = None) -> None:
        super().__init__(message, details, headers={"WWW-Authenticate": 'Bearer realm="matching-service"'})


class ForbiddenError(ApiError):
    """403 FORBIDDEN: authenticated, but not allowed to do this."""

    status = 403
    code = "FORBIDDEN"


class NotFoundError(ApiError):
    """404 NOT_FOUND: the resource does not exist or is not visible to the caller."""

    status = 404
    code = "NOT_FOUND"


def not_found(kind: str, resource_id: str) -> NotFoundError:
    """The 404 of an id that names nothing the caller may see: ``<kind> '<id>' not found``.

    The one message for an unknown id and for another user's non-public resource (see
    :func:`not_owner`), so the two answers are byte for byte the same but for the id. The id is
    quoted to at most 128 characters (:data:`chalicelib.path_ids.MAX_LENGTH`).
    """
    return NotFoundError(f"{kind} '{resource_id[:128]}' not found")


def not_owner(kind: str, resource_id: str, public: bool, forbidden_message: str) -> ApiError:
    """What a caller who is not a resource's owner gets when they try to read or change it as its owner.

    The rule (issue 21, no existence oracle): another user's resource that is not public (a
    PENDING, REJECTED or PAUSED listing, a webhook, a saved search, a conversation or request the
    caller is no party to) is indistinguishable from a missing one, exactly the 404 of
    :func:`not_found`; only a public resource, whose existence is no secret, answers 403.
    Services raise what this returns wherever they check ownership; the API and the Dashboard
    render it alike.

    Parameters
    ----------
    kind, resource_id:
        As for :func:`not_found` (``"Listing"``, the id from the path).
    public:
        Whether the resource is visible to every caller (an ACTIVE listing).
    forbidden_message:
        The 403's message when it is.
    """
    return ForbiddenError(forbidden_message) if public else not_found(kind, resource_id)


class MethodNotAllowedError(ApiError):
    """405 METHOD_NOT_ALLOWED: the path exists but not with this method."""

    status = 405
    code = "METHOD_NOT_ALLOWED"


class ConflictError(ApiError):
    """409 CONFLICT: duplicate resource or a state change not allowed from the current state."""

    status = 409
    code = "CONFLICT"


class IdempotencyKeyInUseError(ApiError):
    """409 IDEMPOTENCY_KEY_IN_USE: a request with this ``Idempotency-Key`` is still running; retry shortly."""

    status = 409
    code = "IDEMPOTENCY_KEY_IN_USE"

    def __init__(self, message: str) -> None:
        super().__init__(message, headers={"Retry-After": "1"})


class PreconditionFailedError(ApiError):
    """412 PRECONDITION_FAILED: ``If-Match`` names another version than the resource's current one."""

    status = 412
    code = "PRECONDITION_FAILED"


class IdempotencyKeyReusedError(ApiError):
    """422 IDEMPOTENCY_KEY_REUSED: the ``Idempotency-Key`` was used for another request within 24 hours."""

    status = 422
    code = "IDEMPOTENCY_KEY_REUSED"


class PayloadTooLargeError(ApiError):
    """413 PAYLOAD_TOO_LARGE: the body exceeds ``MAX_BODY_BYTES`` (256 KiB)."""

    status = 413
    code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaTypeError(ApiError):
    """415 UNSUPPORTED_MEDIA_TYPE: a body that is not ``application/json``."""

    status = 415
    code = "UNSUPPORTED_MEDIA_TYPE"


class RateLimitedError(ApiError):
    """429 RATE_LIMITED: too many requests; carries ``Retry-After`` (seconds) and any ``headers``
    given (the ``RateLimit-Policy`` and ``RateLimit`` fields of :mod:`chalicelib.rate_limits`)."""

    status = 429
    code = "RATE_LIMITED"

    def __init__(self, message: str, retry_after_seconds: int = 1, headers: dict[str, str] | None = None) -> None:
        super().__init__(message, headers={**(headers or {}), "Retry-After": str(retry_after_seconds)})


class ServiceUnavailableError(ApiError):
    """503 SERVICE_UNAVAILABLE: a dependency (DynamoDB, SQS) did not answer in time; carries ``Retry-After``."""

    status = 503
    code = "SERVICE_UNAVAILABLE"

    def __init__(self, message: str, details: list[FieldIssue] | None = None, retry_after_seconds: int = 5) -> None:
        super().__init__(message, details, headers={"Retry-After": str(retry_after_seconds)})


class DependencyUnavailableError(ServiceUnavailableError):
    """503 SERVICE_UNAVAILABLE: DynamoDB, SQS or another AWS service timed out, refused the
    connection or kept throttling.

    Raised by :mod:`chalicelib.storage` for every client it creates, after botocore's retries
    (:func:`chalicelib.storage.boto_config`), so no layer above knows botocore's exception types.
    """

    def __init__(self, cause: str) -> None:
        super().__init__("A storage dependency is unavailable or overloaded; retry later")
        #: The botocore fault, ``"<class>: <message>"`` (for logs; never shown to clients).
        self.cause = cause


class InternalError(ApiError):
    """500 INTERNAL_ERROR: an unexpected fault; the body never carries a stack trace."""

    status = 500
    code = "INTERNAL_ERROR"


#: pydantic error types of a discriminated union whose tag is missing or unknown.
_UNION_TAG_ERRORS = frozenset({"union_tag_invalid", "union_tag_not_found"})


def _location(err: dict[str, Any], tagged_union: bool) -> str:
    """The dotted field path of one pydantic error.

    In a discriminated union (a root model such as ``StatusChange``) pydantic puts the tag
    value first in ``loc`` (``ACCEPTED.reason``); clients know the field as ``reason``. A
    missing or unknown tag is reported on the discriminator field itself (``status``).
    """
    if tagged_union and err.get("type") in _UNION_TAG_ERRORS:
        return str((err.get("ctx") or {}).get("discriminator", "")).strip("'")
    parts = [str(part) for part in err.get("loc", ()) if part != "__root__"]
    if tagged_union and len(parts) > 1:
        parts = parts[1:]
    return ".".join(parts)


def from_pydantic(exc: Any, prefix: str = "", tagged_union: bool = False) -> ValidationError:
    """Convert a ``pydantic.ValidationError`` into a :class:`ValidationError`.

    Parameters
    ----------
    exc:
        The pydantic exception.
    prefix:
        Prepended to every field path (e.g. ``"query."``); empty for bodies.
    tagged_union:
        The validated model is a discriminated union (see :func:`_location`).

    Returns
    -------
    ValidationError
        One ``details`` item per pydantic error, its ``field`` the dotted location.
    """
    details = []
    for err in exc.errors():
        loc = _location(err, tagged_union)
        details.append(FieldIssue(field=prefix + loc if loc else prefix.rstrip(".") or "body", issue=err["msg"]))
    fields = ", ".join(d.field for d in details)
    return ValidationError(f"Request validation failed: {fields}", details)
