"""Safe retries: the ``Idempotency-Key`` header of POST and PATCH requests (Stripe's semantics).

* The first request with a key runs and its response (status, body byte for byte, and the
  headers in :data:`REPLAYED_HEADERS`) is stored for :data:`EXPIRES_AFTER_SECONDS` (24 h).
* A retry with the same key and the same request (method, route, path parameters and JSON body,
  compared after parsing, so whitespace and key order do not matter) gets the stored response
  again, marked ``Idempotent-Replayed: true``, without doing the work again.
* The same key with another request is 422 ``IDEMPOTENCY_KEY_REUSED``; a retry while the first
  is still running is 409 ``IDEMPOTENCY_KEY_IN_USE`` (``Retry-After: 1``).
* Keys are scoped to the caller (the authenticated user), so two users never collide.
* No secret at rest: the stored response of an authenticated request (status, headers and body)
  is sealed (AES-256-GCM) with a key derived by HKDF-SHA256 (RFC 5869) from the API key the
  request presented and its ``Idempotency-Key``. The table holds neither that key nor its hash
  outside the ciphertext, so only a client holding the same API key can read the answer again
  (``apiKey`` of a created user, a webhook's signing secret). The same ``Idempotency-Key`` sent
  with another key of the same user cannot open it: 422 ``IDEMPOTENCY_KEY_REUSED``.
* A crashed attempt (its process killed mid-flight) blocks its key for at most
  ``IDEMPOTENCY_IN_PROGRESS_SECONDS`` (30 s; the in-progress record's expiry is the smaller of
  that and the Lambda invocation's remaining time).
* What is stored: every response of a request that reached the operation, except 5xx, 409 and
  429 — those mean "nothing happened, try again" (a fault, a concurrent change, throttling), so
  a retry runs again, as Stripe does for errors that may be transient. Requests refused before
  the operation (bad key, invalid body: 400, 401, 403, 413, 415) store nothing either.

Built on powertools' idempotency utility (``idempotent_function``,
https://docs.powertools.aws.dev/lambda/python/latest/utilities/idempotency/) over the store of
:mod:`chalicelib.idempotency.repository`. The service knows a response only as a :class:`Reply`
(status, headers, body text); the HTTP edge reads the key (:func:`chalicelib.edge.http.key_from`) and
turns its responses into replies and back (:mod:`chalicelib.composition`), so nothing here is HTTP
machinery and :mod:`chalicelib.edge.http` reaches no storage.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from chalicelib.idempotency import repository
from chalicelib.kernel import errors
from chalicelib.kernel.config import settings

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


#: HKDF ``info`` of the sealing key: binds it to this use (RFC 5869 §3.2).
_SEAL_CONTEXT = b"matching-service idempotency reply v1"
#: AES-GCM nonce length in bytes (NIST SP 800-38D §8.2: 96 bits).
_NONCE_BYTES = 12


class _Unsealable(Exception):
    """The stored reply cannot be opened with the presented credential (another API key)."""


def _aead(credential: str, scope: str, key: str) -> Any:
    """AES-256-GCM keyed by HKDF-SHA256 over ``credential``, salted with the scope and the
    ``Idempotency-Key`` (so each stored reply has a key of its own)."""
    from cryptography.hazmat.primitives import hashes  # with the first keyed request, not at cold start
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    salt = hashlib.sha256(f"{scope}\n{key}".encode()).digest()
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=_SEAL_CONTEXT).derive(credential.encode())
    return AESGCM(derived)


def _seal(plain: dict[str, Any], credential: str, scope: str, key: str) -> dict[str, Any]:
    """``plain`` as ``{"sealed": <base64 nonce + ciphertext>}``, or as it is without a credential."""
    if not credential:
        return plain
    nonce = os.urandom(_NONCE_BYTES)
    sealed = _aead(credential, scope, key).encrypt(nonce, json.dumps(plain).encode(), scope.encode())
    return {"sealed": base64.b64encode(nonce + sealed).decode("ascii")}


def _opened(stored: dict[str, Any], credential: str, scope: str, key: str) -> dict[str, Any]:
    """The reply sealed by :func:`_seal` (a plain one as it is).

    Raises
    ------
    _Unsealable
        ``credential`` is not the one the reply was sealed with.
    """
    if "sealed" not in stored:
        return stored
    from cryptography.exceptions import InvalidTag

    blob = base64.b64decode(stored["sealed"])
    try:
        plain = _aead(credential, scope, key).decrypt(blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], scope.encode())
    except InvalidTag as exc:
        raise _Unsealable from exc
    opened: dict[str, Any] = json.loads(plain)
    return opened


def _stored(reply: Reply) -> dict[str, Any]:
    kept = {k: v for k, v in reply.headers.items() if k in REPLAYED_HEADERS}
    return {"status": reply.status, "headers": kept, "body": reply.body}


class _BoundedContext:
    """A Lambda context whose remaining time is at most ``IDEMPOTENCY_IN_PROGRESS_SECONDS``: powertools
    sets the in-progress record's expiry from it, so a killed attempt frees its key that soon."""

    def __init__(self, lambda_context: Any) -> None:
        self._context = lambda_context

    def get_remaining_time_in_millis(self) -> int:
        bound = settings().IDEMPOTENCY_IN_PROGRESS_SECONDS * 1000
        if self._context is None:
            return bound
        return int(min(bound, self._context.get_remaining_time_in_millis()))


def _replayed(response: Any, idempotent_data: DataRecord) -> Any:
    """powertools' response hook: called only when a stored response is returned instead of running."""
    return {**response, "replayed": True}


def _must_not_store(reply: Reply) -> bool:
    return reply.status >= 500 or reply.status in (409, 429)


def run_once(
    scope: str, key: str, request: dict[str, Any], work: Callable[[], Reply], lambda_context: Any, credential: str = ""
) -> Reply:
    """Run ``work`` at most once per ``(scope, key)`` within 24 hours; replay its stored response otherwise.

    Parameters
    ----------
    scope:
        Whose key it is (the caller's user id).
    key:
        The ``Idempotency-Key`` value (:func:`chalicelib.edge.http.key_from`).
    request:
        What identifies the request (JSON-ready: method, route, path parameters, parsed body);
        a stored key is only replayed for an equal ``request``.
    work:
        Runs the operation and renders its response (never raises for API errors).
    lambda_context:
        The Lambda context (its remaining time, at most ``IDEMPOTENCY_IN_PROGRESS_SECONDS``, bounds
        how long a crashed attempt blocks the key); ``None`` outside Lambda.
    credential:
        The API key the request presented (its text): the stored response is sealed with a key
        derived from it; empty for a public route (nothing sealed).

    Raises
    ------
    IdempotencyKeyReused
        ``key`` was used for another request within 24 hours, or its stored response was sealed
        with another API key.
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
    config.register_lambda_context(cast(LambdaContext, _BoundedContext(lambda_context)))  # the one method powertools calls
    persistence = repository.store()

    def work_and_keep(data: dict[str, Any]) -> dict[str, Any]:
        reply = work()
        if _must_not_store(reply):
            raise _NotStored(reply)
        return _seal(_stored(reply), credential, scope, key)

    once: Callable[..., dict[str, Any]] = idempotent_function(
        work_and_keep, data_keyword_argument="data", persistence_store=persistence, config=config, key_prefix="http"
    )
    try:
        kept = once(data={"scope": scope, "key": key, "request": request})
        result = {**_opened(kept, credential, scope, key), "replayed": kept.get("replayed", False)}
    except _NotStored as exc:
        return exc.reply
    except IdempotencyValidationError as exc:
        raise errors.IdempotencyKeyReused(
            "This Idempotency-Key was already used with another request in the last 24 hours; use a new key"
        ) from exc
    except _Unsealable as exc:
        raise errors.IdempotencyKeyReused(
            "This Idempotency-Key was used with another API key in the last 24 hours; use a new key"
        ) from exc
    except IdempotencyAlreadyInProgressError as exc:
        raise errors.IdempotencyKeyInUse(
            "A request with this Idempotency-Key is still being processed; retry after it completes"
        ) from exc
    headers = dict(result["headers"])
    if result.get("replayed"):
        headers[REPLAYED_MARKER] = "true"
    return Reply(status=int(result["status"]), body=str(result["body"]), headers=headers)
