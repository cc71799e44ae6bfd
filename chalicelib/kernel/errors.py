"""The domain's error vocabulary: what went wrong, in the domain's words, with no HTTP in it.

Services, repositories and :mod:`chalicelib.persistence.storage` raise these exceptions. Each HTTP edge holds
the one table that maps them to a response: :data:`chalicelib.edge.http.ERROR_STATUSES` gives the
status and the spec's error code (spec §7, DESIGN §2) of the API's error body
``{"code", "error", "details"}`` (the Dashboard's ``chalicelib.dashboard.web.page_status``
answers its pages with the same statuses). An exception carries its message (the body's ``error``), the
fields at fault (``details``) and what a client needs to retry (``retry_after_seconds``), never
a status or a header.
"""

from __future__ import annotations

from typing import Any

from chalicelib.kernel.json_types import PATTERN_RULES
from chalicelib.kernel.model_base import Model


class FieldIssue(Model):
    """One item of an error's ``details``: the offending field and what is wrong with it."""

    field: str
    issue: str


class DomainError(Exception):
    """Base of every error the service reports to its caller.

    Parameters
    ----------
    message:
        Human-readable text (the error body's ``error``).
    details:
        Optional list of :class:`FieldIssue` naming the offending fields.
    """

    #: Seconds after which a retry may succeed (``Retry-After`` at the HTTP edge); ``None``: no hint.
    retry_after_seconds: int | None = None

    def __init__(self, message: str, details: list[FieldIssue] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or None


class RuleViolation(DomainError):
    """The input breaks a rule: malformed, out of range, or not allowed here; ``details`` names the field."""

    @classmethod
    def for_field(cls, field: str, issue: str, message: str | None = None) -> RuleViolation:
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


class Unauthorized(DomainError):
    """The caller is not known: a missing, malformed, unknown or revoked API key."""


class Forbidden(DomainError):
    """The caller is known but may not do this."""


class Blocked(Forbidden):
    """A block stands between the caller and the other user: no request or message crosses it."""


class NotFound(DomainError):
    """The resource does not exist or is not visible to the caller."""


def not_found(kind: str, resource_id: str) -> NotFound:
    """The 404 of an id that names nothing the caller may see: ``<kind> '<id>' not found``.

    The one message for an unknown id and for another user's non-public resource (see
    :func:`not_owner`), so the two answers are byte for byte the same but for the id. The id is
    quoted to at most 128 characters (:data:`chalicelib.edge.path_ids.MAX_LENGTH`).
    """
    return NotFound(f"{kind} '{resource_id[:128]}' not found")


def not_owner(kind: str, resource_id: str, public: bool, forbidden_message: str) -> DomainError:
    """What a caller who is not a resource's owner gets when they try to read or change it as its owner.

    The rule (no existence oracle): another user's resource that is not public (a
    PENDING, REJECTED or PAUSED listing, a webhook, a saved search, a conversation or request the
    caller is no party to) is indistinguishable from a missing one, exactly the 404 of
    :func:`not_found`; only a public resource, whose existence is no secret, answers 403.
    Services raise what this returns wherever they check ownership; the API and the Dashboard
    render it alike (404 and 403 by their edges' tables).

    Parameters
    ----------
    kind, resource_id:
        As for :func:`not_found` (``"Listing"``, the id from the path).
    public:
        Whether the resource is visible to every caller (an ACTIVE listing).
    forbidden_message:
        The 403's message when it is.
    """
    return Forbidden(forbidden_message) if public else not_found(kind, resource_id)


class MethodNotAllowed(DomainError):
    """The path exists, but not with this method."""


class Conflict(DomainError):
    """A duplicate, a state change not allowed from the current state, or a write that lost a race."""


class Contended(Conflict):
    """A write lost its race with concurrent writes to the same items, attempt after attempt: the
    same request may succeed when sent again a second later (``Retry-After: 1``)."""

    retry_after_seconds = 1


class IdempotencyKeyInUse(DomainError):
    """A request with this ``Idempotency-Key`` is still running; retry after a second."""

    retry_after_seconds = 1


class PreconditionFailed(DomainError):
    """The caller named another version than the resource's current one (``If-Match``)."""


class IdempotencyKeyReused(DomainError):
    """The ``Idempotency-Key`` was used for another request within 24 hours."""


class TooLarge(DomainError):
    """The input exceeds its size limit (a body over ``MAX_BODY_BYTES``, 256 KiB)."""


class UnsupportedMediaType(DomainError):
    """The input is not in a format the service reads (a body that is not JSON)."""


class RateLimited(DomainError):
    """Too many requests: a key's rate or a daily quota is spent.

    Parameters
    ----------
    message:
        As for :class:`DomainError`.
    retry_after_seconds:
        Seconds until the next request may be admitted.
    limit_fields:
        The RateLimit fields of the refused quota (``{"RateLimit-Policy": ..., "RateLimit": ...}``,
        :mod:`chalicelib.rate_limits.header_fields`), sent along by the HTTP edge.
    """

    def __init__(self, message: str, retry_after_seconds: int = 1, limit_fields: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds
        self.limit_fields = dict(limit_fields or {})


class Unavailable(DomainError):
    """A dependency (DynamoDB, SQS, the geocoder) did not answer in time; retry after ``retry_after_seconds`` (5)."""

    def __init__(self, message: str, details: list[FieldIssue] | None = None, retry_after_seconds: int = 5) -> None:
        super().__init__(message, details)
        self.retry_after_seconds = retry_after_seconds


class DependencyUnavailable(Unavailable):
    """DynamoDB, SQS or another AWS service timed out, refused the connection or kept throttling.

    Raised by :mod:`chalicelib.persistence.storage` for every client it creates, after botocore's retries
    (:func:`chalicelib.persistence.storage.boto_config`), so no layer above knows botocore's exception types.
    """

    def __init__(self, cause: str) -> None:
        super().__init__("A storage dependency is unavailable or overloaded; retry later")
        #: The botocore fault, ``"<class>: <message>"`` (for logs; never shown to clients).
        self.cause = cause


class Internal(DomainError):
    """An unexpected fault; its message is never shown to a client."""


#: pydantic error types of a discriminated union whose tag is missing or unknown.
_UNION_TAG_ERRORS = frozenset({"union_tag_invalid", "union_tag_not_found"})


_ABSENT = object()


def _in_input(data: Any, loc: tuple[Any, ...], missing: bool) -> list[Any]:
    """The parts of ``loc`` that name something in the validated ``data``: pydantic also puts the
    member of a union it tried (``constrained-str``, ``int``) and ``[key]`` (a dict key's own
    error) in ``loc``, names no client sent. The last part of a ``missing`` error stays."""
    parts: list[Any] = []
    node = data
    for index, part in enumerate(loc):
        in_dict = isinstance(node, dict) and part in node
        if in_dict or (isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)):
            node = node[part]
        elif not (missing and index == len(loc) - 1):
            continue
        parts.append(part)
    return parts


def _location(err: dict[str, Any], tagged_union: bool, data: Any = _ABSENT) -> str:
    """The dotted field path of one pydantic error.

    In a discriminated union (a root model such as ``StatusChange``) pydantic puts the tag
    value first in ``loc`` (``ACCEPTED.reason``); clients know the field as ``reason``. A
    missing or unknown tag is reported on the discriminator field itself (``status``). With the
    validated ``data``, parts naming nothing in it are left out (:func:`_in_input`).
    """
    if tagged_union and err.get("type") in _UNION_TAG_ERRORS:
        return str((err.get("ctx") or {}).get("discriminator", "")).strip("'")
    loc = tuple(part for part in err.get("loc", ()) if part != "__root__")
    if tagged_union and len(loc) > 1:
        loc = loc[1:]
    if data is not _ABSENT:
        loc = tuple(_in_input(data, loc, err.get("type") == "missing"))
    return ".".join(str(part) for part in loc)


def _issues(errs: list[dict[str, Any]], tagged_union: bool, data: Any) -> dict[str, list[str]]:
    """Issues per field path. The members of a union each report an error at the same path: a
    member whose type matched reports the one that counts (``string_too_long``), so the others'
    type mismatches (``*_type``, ``*_parsing``) are dropped when it exists, else all are kept."""
    found: dict[str, list[dict[str, Any]]] = {}
    for err in errs:
        found.setdefault(_location(err, tagged_union, data), []).append(err)
    issues: dict[str, list[str]] = {}
    for loc, group in found.items():
        typed = [e for e in group if not str(e.get("type", "")).endswith(("_type", "_parsing"))]
        issues[loc] = list(dict.fromkeys(_message(e) for e in (typed if len(group) > 1 and typed else group)))
    return issues


def _message(err: dict[str, Any]) -> str:
    """The issue of one pydantic error: a validator's own ``ValueError`` text as it wrote it
    (pydantic prefixes it with ``"Value error, "``), the rule in words of a shared pattern
    (:data:`chalicelib.kernel.json_types.PATTERN_RULES`), else pydantic's message."""
    context = err.get("ctx") or {}
    raised = context.get("error")
    if err.get("type") == "value_error" and raised is not None:
        return str(raised)
    if err.get("type") == "string_pattern_mismatch" and context.get("pattern") in PATTERN_RULES:
        return PATTERN_RULES[context["pattern"]]
    return str(err["msg"])


def from_pydantic(exc: Any, prefix: str = "", tagged_union: bool = False, data: Any = _ABSENT) -> RuleViolation:
    """Convert a ``pydantic.ValidationError`` into a :class:`RuleViolation`.

    Parameters
    ----------
    exc:
        The pydantic exception.
    prefix:
        Prepended to every field path (e.g. ``"query."``); empty for bodies.
    tagged_union:
        The validated model is a discriminated union (see :func:`_location`).
    data:
        The validated input, when known: locations keep only the parts that name something in
        it, and the errors of one path become one item (:func:`_issues`).

    Returns
    -------
    RuleViolation
        One ``details`` item per field path in error, its ``field`` the dotted location.
    """
    details = [
        FieldIssue(field=prefix + loc if loc else prefix.rstrip(".") or "body", issue="; ".join(messages))
        for loc, messages in _issues(exc.errors(), tagged_union, data).items()
    ]
    fields = ", ".join(d.field for d in details)
    return RuleViolation(f"Request validation failed: {fields}", details)
