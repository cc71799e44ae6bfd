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

Built on powertools' idempotency utility (``idempotent_function``,
https://docs.powertools.aws.dev/lambda/python/latest/utilities/idempotency/) over the store of
:mod:`chalicelib.idempotency.repository`. The service knows a response only as a :class:`Reply`
(status, headers, body text); the HTTP edge reads the key (:func:`chalicelib.http.key_from`) and
turns its responses into replies and back (:mod:`chalicelib.gate`), so nothing here is HTTP
machinery and :mod:`chalicelib.http` reaches no storage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from chalicelib import errors
from chalicelib.idempotency import repository

#: Stored responses are replayed for 24 hours (Stripe's window).
EXPIRES_AFTER_SECONDS = 24 * 60 * 60

#: Response headers stored and replayed with the body (the request id is each request's own).
REPLAYED_HEADERS = ("Content-Type", "ETag", "Location", "Retry-After")

#: Header marking a replayed response.
REPLAYED_MARKER = "Idempotent-Replayed"


@dataclass(frozen=True)
class Reply:
    """A response as the service keeps it: ``status``, the ``headers`` to replay, the ``body`` text."""

    status: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)


class _NotStored(Exception):
    """Carries a reply that must not be stored (powertools deletes the in-progress record)."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.status)
        self.reply = reply


def _stored(reply: Reply) -> dict[str, Any]:
    kept = {k: v for k, v in reply.headers.items() if k in REPLAYED_HEADERS}
    return {"status": reply.status, "headers": kept, "body": reply.body}


def _replayed(response: Any, idempotent_data: DataRecord) -> Any:
    """powertools' response hook: called only when a stored response is returned instead of running."""
    return {**response, "replayed": True}


def _must_not_store(reply: Reply) -> bool:
    return reply.status >= 500 or reply.status in (409, 429)


def run_once(scope: str, key: str, request: dict[str, Any], work: Callable[[], Reply], lambda_context: Any) -> Reply:
    """Run ``work`` at most once per ``(scope, key)`` within 24 hours; replay its stored response otherwise.

    Parameters
    ----------
    scope:
        Whose key it is (the caller's user id).
    key:
        The ``Idempotency-Key`` value (:func:`chalicelib.http.key_from`).
    request:
        What identifies the request (JSON-ready: method, route, path parameters, parsed body);
        a stored key is only replayed for an equal ``request``.
    work:
        Runs the operation and renders its response (never raises for API errors).
    lambda_context:
        The Lambda context (its remaining time bounds how long a crashed attempt blocks the key).

    Raises
    ------
    IdempotencyKeyReused
        ``key`` was used for another request within 24 hours.
    IdempotencyKeyInUse
        A request with ``key`` is still running.
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
    persistence = repository.store()

    def work_and_keep(data: dict[str, Any]) -> dict[str, Any]:
        reply = work()
        if _must_not_store(reply):
            raise _NotStored(reply)
        return _stored(reply)

    once: Callable[..., dict[str, Any]] = idempotent_function(
        work_and_keep, data_keyword_argument="data", persistence_store=persistence, config=config, key_prefix="http"
    )
    try:
        result = once(data={"scope": scope, "key": key, "request": request})
    except _NotStored as exc:
        return exc.reply
    except IdempotencyValidationError as exc:
        raise errors.IdempotencyKeyReused(
            "This Idempotency-Key was already used with another request in the last 24 hours; use a new key"
        ) from exc
    except IdempotencyAlreadyInProgressError as exc:
        raise errors.IdempotencyKeyInUse(
            "A request with this Idempotency-Key is still being processed; retry after it completes"
        ) from exc
    headers = dict(result["headers"])
    if result.get("replayed"):
        headers[REPLAYED_MARKER] = "true"
    return Reply(status=int(result["status"]), body=str(result["body"]), headers=headers)
