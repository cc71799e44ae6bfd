"""Safe retries: the ``Idempotency-Key`` header of POST and PATCH requests (Stripe's semantics).

* The first request with a key runs and its response (status, body byte for byte, and the
  headers in :data:`REPLAYED_HEADERS`) is stored for :data:`EXPIRES_AFTER_SECONDS` (24 h).
* A retry with the same key and the same request (method, route, path parameters and JSON body,
  compared after parsing, so whitespace and key order do not matter) gets the stored response
  again, marked ``Idempotent-Replayed: true``, without doing the work again.
* The same key with another request is 422 ``IDEMPOTENCY_KEY_REUSED``; a retry while the first
  is still running is 409 ``IDEMPOTENCY_KEY_IN_USE`` (``Retry-After: 1``).
* Keys are scoped to the caller (the authenticated user), so two users never collide.
* What is stored: every response of a request that reached the operation, except 5xx, 409 and
  429 — those mean "nothing happened, try again" (a fault, a concurrent change, throttling), so
  a retry runs again, as Stripe does for errors that may be transient. Requests refused before
  the operation (bad key, invalid body: 400, 401, 403, 413, 415) store nothing either.

Built on powertools' idempotency utility (``idempotent_function`` with its DynamoDB persistence
layer, https://docs.powertools.aws.dev/lambda/python/latest/utilities/idempotency/) over the
``IdempotencyTable`` of ``infra/resources.json`` (partition key ``id``, TTL ``expiration``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
from chalice.app import Response

from chalicelib import errors, storage
from chalicelib.config import settings

HEADER = "Idempotency-Key"

#: Stored responses are replayed for 24 hours (Stripe's window).
EXPIRES_AFTER_SECONDS = 24 * 60 * 60

#: Longest accepted key (Stripe: 255 characters).
MAX_KEY_LENGTH = 255

#: Response headers stored and replayed with the body (the request id is each request's own).
REPLAYED_HEADERS = ("Content-Type", "ETag", "Location", "Retry-After")

#: Header marking a replayed response.
REPLAYED_MARKER = "Idempotent-Replayed"


class _NotStored(Exception):
    """Carries a response that must not be stored (powertools deletes the in-progress record)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def key_from(headers: Any) -> str | None:
    """The request's ``Idempotency-Key``, or ``None`` when absent.

    Raises
    ------
    ValidationError
        Empty, longer than :data:`MAX_KEY_LENGTH`, or not printable ASCII without spaces
        (``details`` names ``Idempotency-Key``).
    """
    value: str | None = headers.get(HEADER.lower())
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not all("!" <= c <= "~" for c in value):
        raise errors.ValidationError.for_field(
            HEADER, f"1..{MAX_KEY_LENGTH} printable ASCII characters without spaces (e.g. a UUID)",
            "Invalid Idempotency-Key header",
        )
    return value


def _stored(response: Response) -> dict[str, Any]:
    body = response.body
    text = body if isinstance(body, str) else json.dumps(body) if body is not None else ""
    kept = {k: str(v) for k, v in response.headers.items() if k in REPLAYED_HEADERS}
    return {"status": response.status_code, "headers": kept, "body": text}


def _replayed(response: Any, idempotent_data: DataRecord) -> Any:
    """powertools' response hook: called only when a stored response is returned instead of running."""
    return {**response, "replayed": True}


def _must_not_store(response: Response) -> bool:
    return response.status_code >= 500 or response.status_code in (409, 429)


def run_once(scope: str, key: str, request: dict[str, Any], work: Callable[[], Response], lambda_context: Any) -> Response:
    """Run ``work`` at most once per ``(scope, key)`` within 24 hours; replay its stored response otherwise.

    Parameters
    ----------
    scope:
        Whose key it is (the caller's user id).
    key:
        The ``Idempotency-Key`` value (see :func:`key_from`).
    request:
        What identifies the request (JSON-ready: method, route, path parameters, parsed body);
        a stored key is only replayed for an equal ``request``.
    work:
        Runs the operation and renders its response (never raises for API errors).
    lambda_context:
        The Lambda context (its remaining time bounds how long a crashed attempt blocks the key).

    Raises
    ------
    IdempotencyKeyReusedError
        ``key`` was used for another request within 24 hours (422).
    IdempotencyKeyInUseError
        A request with ``key`` is still running (409).
    """
    config = IdempotencyConfig(
        event_key_jmespath="[scope, key]",
        payload_validation_jmespath="request",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=EXPIRES_AFTER_SECONDS,
        hash_function="sha256",
        response_hook=_replayed,
    )
    if lambda_context is not None:
        config.register_lambda_context(lambda_context)
    persistence = DynamoDBPersistenceLayer(
        table_name=settings().IDEMPOTENCY_TABLE,
        key_attr="id",
        expiry_attr="expiration",  # the table's TTL attribute (epoch seconds)
        boto3_client=storage.client("dynamodb"),
    )

    def work_and_keep(data: dict[str, Any]) -> dict[str, Any]:
        response = work()
        if _must_not_store(response):
            raise _NotStored(response)
        return _stored(response)

    once: Callable[..., dict[str, Any]] = idempotent_function(
        work_and_keep, data_keyword_argument="data", persistence_store=persistence, config=config, key_prefix="http"
    )
    try:
        result = once(data={"scope": scope, "key": key, "request": request})
    except _NotStored as exc:
        return exc.response
    except IdempotencyValidationError as exc:
        raise errors.IdempotencyKeyReusedError(
            "This Idempotency-Key was already used with another request in the last 24 hours; use a new key"
        ) from exc
    except IdempotencyAlreadyInProgressError as exc:
        raise errors.IdempotencyKeyInUseError(
            "A request with this Idempotency-Key is still being processed; retry after it completes"
        ) from exc
    headers = dict(result["headers"])
    if result.get("replayed"):
        headers[REPLAYED_MARKER] = "true"
    return Response(body=result["body"], status_code=int(result["status"]), headers=headers)
