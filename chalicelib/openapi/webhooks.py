"""The OpenAPI 3.1 top-level ``webhooks`` section, generated from the event catalogue.

One webhook operation per event type of :data:`chalicelib.webhooks.catalogue.EVENT_TYPES`: the
request the service sends (``POST`` to the registered URL), with the envelope and ``data``
schemas of :func:`chalicelib.webhooks.catalogue.envelope_model`, the signature headers and the
exact signing rule (:mod:`chalicelib.webhooks.signing`), and what the receiver's answer means.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.webhooks.catalogue import EVENT_TYPES, envelope_model
from chalicelib.webhooks.signing import SECRET_PREFIX, USER_AGENT

WEBHOOKS_TAG = "webhook events"

#: The signing rule, stated once for the document, the docs page and receivers.
SIGNING_RULE = f"""Every delivery is a `POST` of the JSON envelope to the webhook's `url`, signed twice with the
webhook's `secret` (`{SECRET_PREFIX}` + base64 of 32 random bytes, as `POST /v1/webhooks` and
`GET /v1/webhooks` return it):

1. `X-Webhook-Signature`: lower-case hex HMAC-SHA256 of the exact body bytes. The HMAC key is the
   **secret string exactly as returned, prefix included** (its UTF-8 bytes, e.g. `{SECRET_PREFIX}MfKQ...`),
   not the decoded bytes. Python: `hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()`.
2. [Standard Webhooks](https://www.standardwebhooks.com/) headers `webhook-id`, `webhook-timestamp`,
   `webhook-signature`: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of
   `{{webhook-id}}.{{webhook-timestamp}}.{{body}}`, keyed with the base64-decoded part of the secret after
   `{SECRET_PREFIX}`; the `standardwebhooks` libraries (Python, Node, ...) verify it given the secret as returned.
   During 24 hours after a secret rotation the header carries one space-separated `v1,` signature per valid
   secret.

Compare signatures in constant time, reject timestamps more than 5 minutes from your clock, and de-duplicate
on `webhook-id`: it is the same for every attempt of one event to one webhook. Answer any 2xx within 10 seconds
to acknowledge; anything else (or no answer in time) is a failed attempt that is retried."""

_HEADERS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("X-Webhook-Event", "The event name (as the envelope's `event`).", {"type": "string"}, "match_request.received"),
    (
        "X-Webhook-Signature",
        "Hex HMAC-SHA256 of the exact body, keyed with the secret string as returned (prefix included).",
        {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "5c2a1f0e9d8b7a6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d",
    ),
    (
        "webhook-id",
        "Standard Webhooks message id: stable for every attempt of one event to one webhook (de-duplicate on it).",
        {"type": "string"},
        "evt_01JD3Q7ZK8M2V9T4R6W1X5Y0BC_whk_01JD3Q5B7N4H2F8K6M0P9R3S1T",
    ),
    (
        "webhook-timestamp",
        "Standard Webhooks timestamp: Unix seconds of this attempt.",
        {"type": "string", "pattern": "^[0-9]+$"},
        "1763942155",
    ),
    (
        "webhook-signature",
        "Standard Webhooks signature(s): space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`.",
        {"type": "string", "pattern": "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$"},
        "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
    ),
    ("User-Agent", "The sender.", {"type": "string", "const": USER_AGENT}, USER_AGENT),
)


def _header_parameters() -> list[dict[str, Any]]:
    return [
        {"name": name, "in": "header", "required": True, "description": description, "schema": schema, "example": example}
        for name, description, schema, example in _HEADERS
    ]


def _webhook_operation(event_type: str, schema_ref: str) -> dict[str, Any]:
    entry = EVENT_TYPES[event_type]
    return {
        "post": {
            "operationId": "webhook_" + event_type.replace(".", "_"),
            "summary": entry.summary,
            "description": f"Sent to {entry.recipients}.\n\n{SIGNING_RULE}",
            "tags": [WEBHOOKS_TAG],
            "security": [],
            "parameters": _header_parameters(),
            "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": schema_ref}}}},
            "responses": {
                "200": {"description": "Acknowledged: any 2xx answer within 10 seconds; the body is ignored."},
                "4XX": {"description": "A failed attempt (any non-2xx): retried with backoff (see the guide's webhooks page)."},
                "5XX": {"description": "A failed attempt, as 4XX; so are timeouts and connection errors."},
            },
        }
    }


def envelope_models() -> list[type[BaseModel]]:
    """The envelope model of every event type, in catalogue order (for ``components.schemas``)."""
    return [envelope_model(name) for name in EVENT_TYPES]


def webhooks_section(ref_of: dict[str, str]) -> dict[str, Any]:
    """The ``webhooks`` object: one ``POST`` per event type.

    Parameters
    ----------
    ref_of:
        Envelope model name -> its ``$ref`` in ``components.schemas``.
    """
    return {name: _webhook_operation(name, ref_of[envelope_model(name).__name__]) for name in EVENT_TYPES}
