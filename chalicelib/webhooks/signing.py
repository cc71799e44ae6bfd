"""Webhook secrets and delivery signatures.

Two signatures travel with every delivery (DESIGN §2 "Webhooks"):

* ``X-Webhook-Signature`` (spec §6): lower-case hex HMAC-SHA256 (RFC 2104, FIPS 180-4) of the
  exact body bytes, keyed with the secret string exactly as the API returned it (its UTF-8
  bytes, ``whsec_`` prefix included);
* the Standard Webhooks headers ``webhook-id``, ``webhook-timestamp`` and
  ``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 over ``id.timestamp.body``, keyed with
  the base64-decoded part of the secret after ``whsec_``), verifiable with the
  ``standardwebhooks`` library (https://github.com/standard-webhooks/standard-webhooks,
  spec.md "Signature scheme").

Secret rotation (Dashboard "Rotate secret"): for :data:`PREVIOUS_SECRET_HOURS` after a rotation
the webhook keeps its ``previousSecret``; ``webhook-signature`` then carries one ``v1,``
signature per valid secret, space separated (Standard Webhooks spec, "Signature scheme":
"multiple signatures ... delimited by spaces", so a receiver still holding the old secret keeps
verifying), while ``X-Webhook-Signature`` carries only the current secret's hex HMAC.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import datetime

from chalicelib.kernel import clock

SECRET_PREFIX = "whsec_"
#: Random bytes in a secret (Standard Webhooks recommends 24..64).
SECRET_BYTES = 32
USER_AGENT = "MatchingService-Webhooks/1.0"
#: Hours an old secret keeps verifying after a rotation (GitHub/Stripe-style overlap window).
PREVIOUS_SECRET_HOURS = 24


def new_secret() -> str:
    """A new signing secret: ``whsec_`` + standard base64 of 32 random bytes (44 characters)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def hex_signature(secret: str, body: bytes) -> str:
    """``X-Webhook-Signature``: hex HMAC-SHA256 of ``body`` keyed with ``secret``'s UTF-8 bytes.

    Parameters
    ----------
    secret:
        The secret exactly as the API returned it (``whsec_...``).
    body:
        The exact request body bytes.

    Returns
    -------
    str
        64 lower-case hex characters.
    """
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def secret_key(secret: str) -> bytes:
    """The Standard Webhooks HMAC key: the base64-decoded part of ``secret`` after ``whsec_``.

    Raises
    ------
    ValueError
        When the part after the prefix is not valid base64 or is empty.
    """
    encoded = secret.removeprefix(SECRET_PREFIX)
    key = base64.b64decode(encoded, validate=True)
    if not key:
        raise ValueError("empty webhook secret")
    return key


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """``webhook-signature``: ``"v1," + base64(HMAC-SHA256(key, f"{id}.{timestamp}." + body))``.

    Parameters
    ----------
    secret:
        ``whsec_...``; the key is :func:`secret_key` of it.
    message_id:
        The ``webhook-id`` header value.
    timestamp:
        The ``webhook-timestamp`` header value, Unix time in seconds.
    body:
        The exact request body bytes.
    """
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def message_id(event_id: str, webhook_id: str) -> str:
    """``webhook-id``: stable per event and webhook, the same on every retry (receivers dedupe on it)."""
    return f"{event_id}_{webhook_id}"


def previous_if_valid(previous_secret: str | None, expires_at: str | None, now: datetime) -> str | None:
    """The rotated-out secret while it still verifies, else ``None``.

    Parameters
    ----------
    previous_secret:
        The webhook's ``previousSecret`` (``None`` when never rotated).
    expires_at:
        Its ``previousSecretExpiresAt``, ISO 8601 UTC.
    now:
        The attempt's time (aware UTC).
    """
    if not previous_secret or not expires_at:
        return None
    # Fixed-width ISO 8601 UTC strings: string order is time order (chalicelib.kernel.clock.iso).
    return previous_secret if expires_at > clock.iso(now) else None


def delivery_headers(
    secret: str, event_id: str, event_type: str, webhook_id: str, body: bytes, timestamp: int, previous_secret: str | None = None
) -> dict[str, str]:
    """Every header of one delivery attempt.

    Parameters
    ----------
    secret:
        The webhook's current secret.
    event_id, event_type:
        The delivered event's id (with ``webhook_id``, the ``webhook-id`` :func:`message_id`) and
        name (``X-Webhook-Event``). Plain values, not the delivery pipeline's ``Event``, so that
        signing depends on nothing of the pipeline that imports it (no package cycle).
    webhook_id:
        The receiving webhook's id.
    body:
        The exact body bytes (:func:`chalicelib.webhooks.delivery.envelope.envelope_body`).
    timestamp:
        Unix seconds of this attempt (``webhook-timestamp``).
    previous_secret:
        A rotated-out secret still inside its overlap window (:func:`previous_if_valid`); it
        adds a second ``v1,`` signature to ``webhook-signature`` only.

    Returns
    -------
    dict
        ``Content-Type``, ``User-Agent``, ``X-Webhook-Event``, ``X-Webhook-Signature``,
        ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``.
    """
    msg_id = message_id(event_id, webhook_id)
    signatures = [standard_signature(s, msg_id, timestamp, body) for s in (secret, previous_secret) if s]
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Webhook-Event": event_type,
        "X-Webhook-Signature": hex_signature(secret, body),
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signatures),
    }
