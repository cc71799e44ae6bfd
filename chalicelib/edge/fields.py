"""Request header fields as HTTP defines them, and the checks of a request's content fields.

RFC 9110 §5.3: several field lines of one name mean the same as one line holding their values
joined by commas, in order. API Gateway's REST proxy event keeps only the last line of a
repeated name in ``headers`` and every line in ``multiValueHeaders``; the local stack joins
repeated lines before the app sees them (``local_stack/server.py``). :func:`header_value` reads both the
same way, so a request with two ``Authorization`` or two ``Idempotency-Key`` lines is read as
the joined value (a malformed key, 401; an invalid idempotency key, 400), never as one of them.
"""

from __future__ import annotations

from chalice.app import Request

from chalicelib.kernel import errors

#: The one media type of request bodies (RFC 8259 JSON; parameters such as ``charset`` aside).
JSON_MEDIA_TYPE = "application/json"


def header_value(request: Request, name: str) -> str | None:
    """The value of header field ``name`` (any case), or ``None`` when absent.

    Parameters
    ----------
    request:
        The Chalice request; its original event's ``multiValueHeaders`` (API Gateway's REST
        proxy event, through :meth:`chalice.app.Request.to_original_event`) are read when they
        hold more than one line of ``name``.
    name:
        The field name, e.g. ``"authorization"``.

    Returns
    -------
    str | None
        One line's value, or the values of every line of ``name`` joined by ``", "`` (RFC 9110 §5.3).
    """
    lines = request.to_original_event().get("multiValueHeaders") or {}
    wanted = name.lower()
    values = [value for key, given in lines.items() if key.lower() == wanted for value in (given or [])]
    if len(values) > 1:
        return ", ".join(values)
    value: str | None = request.headers.get(wanted)
    return value


def check_content_fields(request: Request) -> None:
    """Refuse a request body the API cannot read as it is labelled.

    The body must be JSON: ``Content-Type`` absent (read as JSON) or one ``application/json``
    media type (RFC 9110 §8.3; Chalice's own check also passes a list of types holding it, or
    ``*/*``), and sent as is: no ``Content-Encoding`` other than ``identity`` (RFC 9110 §8.4,
    §15.5.16: the API decodes no content coding). A request without a body passes.

    Raises
    ------
    UnsupportedMediaType
        ``details`` naming ``Content-Type`` or ``Content-Encoding``.
    """
    if not request.raw_body:
        return
    content_type = header_value(request, "content-type")
    if content_type is not None and content_type.split(";", 1)[0].strip().lower() != JSON_MEDIA_TYPE:
        raise errors.UnsupportedMediaType(
            f"Request body must be {JSON_MEDIA_TYPE}",
            [errors.FieldIssue(field="Content-Type", issue=f"must be one {JSON_MEDIA_TYPE} media type, not {content_type[:100]!r}")],
        )
    encoding = header_value(request, "content-encoding")
    if encoding is not None and encoding.strip().lower() not in ("", "identity"):
        raise errors.UnsupportedMediaType(
            "Request body must not be compressed",
            [errors.FieldIssue(field="Content-Encoding", issue=f"{encoding[:100]!r} is not supported: send the body as is")],
        )
