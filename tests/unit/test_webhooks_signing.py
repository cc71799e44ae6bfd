"""Secrets, signatures and the envelope against fixed vectors (computed independently with
``openssl dgst -sha256 -hmac`` and with the ``standardwebhooks`` library)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import pytest
from standardwebhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError

from chalicelib.webhooks import signing
from chalicelib.webhooks.delivery.envelope import Event, envelope_body

# Standard Webhooks' own test vector (standard-webhooks repository, python tests and spec).
SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SW_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SW_TIMESTAMP = 1614265330
SW_BODY = b'{"test": 2432232314}'
SW_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

# Our vector: base64("test-secret-32-bytes-long-123456"), a body with non-ASCII UTF-8.
SECRET = "whsec_dGVzdC1zZWNyZXQtMzItYnl0ZXMtbG9uZy0xMjM0NTY="
BODY = '{"event":"message.new","timestamp":"2026-11-22T00:00:00.000Z","test":false,"data":{"content":"Grüße"}}'.encode()
# openssl dgst -sha256 -hmac "$SECRET" body.bin
HEX_SIGNATURE = "9896363b67fbadff5502a14233318ea3d46decbdf404335be35594e03f14032e"
# (printf 'evt_01_whk_01.1763769600.'; cat body.bin) | openssl dgst -sha256 -hmac test-secret-32-bytes-long-123456 -binary | base64
STANDARD_SIGNATURE = "v1,WHj/GIbYZaStInWOR7kcpiB6iNFkP0nJmFosBzqF5P0="


def test_new_secret_is_whsec_plus_base64_of_32_random_bytes() -> None:
    secret = signing.new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
    assert secret != signing.new_secret()


def test_hex_signature_matches_openssl_vector() -> None:
    assert signing.hex_signature(SECRET, BODY) == HEX_SIGNATURE


def test_hex_signature_is_keyed_with_the_secret_string_prefix_included() -> None:
    expected = hmac.new(SECRET.encode("utf-8"), BODY, hashlib.sha256).hexdigest()
    assert signing.hex_signature(SECRET, BODY) == expected
    without_prefix = hmac.new(SECRET.removeprefix("whsec_").encode(), BODY, hashlib.sha256).hexdigest()
    assert signing.hex_signature(SECRET, BODY) != without_prefix


def test_standard_signature_matches_the_standard_webhooks_vector() -> None:
    assert signing.standard_signature(SW_SECRET, SW_ID, SW_TIMESTAMP, SW_BODY) == SW_SIGNATURE


def test_standard_signature_matches_openssl_vector() -> None:
    assert signing.standard_signature(SECRET, "evt_01_whk_01", 1763769600, BODY) == STANDARD_SIGNATURE


def test_delivery_headers_verify_with_the_standardwebhooks_library() -> None:
    event = Event("evt_01", "message.new", "2026-11-22T00:00:00.000Z", {"content": "Grüße"}, {})
    body = envelope_body(event)
    headers = signing.delivery_headers(SECRET, event.event_id, event.type, "whk_01", body, int(time.time()))
    assert StandardWebhook(SECRET).verify(body, headers) == {
        "event": "message.new", "timestamp": "2026-11-22T00:00:00.000Z", "test": False, "data": {"content": "Grüße"},
    }
    assert headers["X-Webhook-Signature"] == signing.hex_signature(SECRET, body)
    assert headers["X-Webhook-Event"] == "message.new"
    assert headers["Content-Type"] == "application/json"
    assert headers["User-Agent"] == "MatchingService-Webhooks/1.0"
    assert headers["webhook-id"] == "evt_01_whk_01"


def test_message_id_is_stable_per_event_and_webhook() -> None:
    assert signing.message_id("evt_1", "whk_1") == signing.message_id("evt_1", "whk_1")
    assert signing.message_id("evt_1", "whk_1") != signing.message_id("evt_1", "whk_2")


def test_envelope_is_compact_utf8_json_with_test_false() -> None:
    event = Event("evt_01", "message.new", "2026-11-22T00:00:00.000Z", {"content": "Grüße"}, {"recipientId": "usr_x"})
    assert envelope_body(event) == BODY
    assert b"recipientId" not in envelope_body(event)


# --- secret rotation: one v1 signature per valid secret ---------------------------------------

OLD_SECRET = "whsec_b2xkLXNlY3JldC0zMi1ieXRlcy1sb25nLTEyMzQ1Ng=="


def test_rotation_signs_with_both_secrets_and_each_verifies_with_standardwebhooks() -> None:
    event = Event("evt_01", "message.new", "2026-11-22T00:00:00.000Z", {"content": "Grüße"}, {})
    body = envelope_body(event)
    headers = signing.delivery_headers(SECRET, event.event_id, event.type, "whk_01", body, int(time.time()), previous_secret=OLD_SECRET)
    parts = headers["webhook-signature"].split(" ")
    assert len(parts) == 2
    assert all(p.startswith("v1,") for p in parts)
    # A receiver that already has the new secret and one still holding the old one both verify.
    assert StandardWebhook(SECRET).verify(body, headers)["test"] is False
    assert StandardWebhook(OLD_SECRET).verify(body, headers)["data"] == {"content": "Grüße"}
    # X-Webhook-Signature carries the new secret's hex HMAC only.
    assert headers["X-Webhook-Signature"] == signing.hex_signature(SECRET, body)
    assert headers["X-Webhook-Signature"] != signing.hex_signature(OLD_SECRET, body)


def test_without_previous_secret_there_is_exactly_one_signature() -> None:
    event = Event("evt_01", "message.new", "2026-11-22T00:00:00.000Z", {}, {})
    body = envelope_body(event)
    headers = signing.delivery_headers(SECRET, event.event_id, event.type, "whk_01", body, int(time.time()))
    assert " " not in headers["webhook-signature"]
    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        StandardWebhook(OLD_SECRET).verify(body, headers)


def test_previous_secret_counts_only_inside_its_window() -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    from chalicelib.kernel import clock

    later = clock.iso(now + timedelta(seconds=1))
    earlier = clock.iso(now - timedelta(seconds=1))
    assert signing.previous_if_valid(OLD_SECRET, later, now) == OLD_SECRET
    assert signing.previous_if_valid(OLD_SECRET, earlier, now) is None
    assert signing.previous_if_valid(None, later, now) is None
    assert signing.previous_if_valid(OLD_SECRET, None, now) is None
