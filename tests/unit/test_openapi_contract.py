"""The OpenAPI document as an exact contract: what the schema states the server enforces, and
what it allows the server accepts. Pure: no moto, no server."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from chalicelib.edge.http import parse_body
from chalicelib.kernel import errors
from chalicelib.match_requests.models import StatusChange
from chalicelib.openapi.document import CURSOR_PAGE_RULE, CURSOR_RULE, RULES_HEADING, TAGS, document
from chalicelib.openapi.webhooks import SIGNING_RULE
from chalicelib.users.models import AdminUserCreate, AdminUserPatch, ProfilePatch
from chalicelib.webhooks.catalogue import EVENT_TYPES, SUPPORTED_EVENTS, envelope_model
from chalicelib.webhooks.delivery.envelope import Event, envelope_body
from chalicelib.webhooks.models import WebhookCreate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    import app  # noqa: F401  (registers every route)

    return document()


def _operations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [op for methods in doc["paths"].values() for op in methods.values()]


def _validator(doc: dict[str, Any], ref: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resource("urn:openapi", DRAFT202012.create_resource(doc))
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "urn:openapi" + ref}
    return Draft202012Validator(schema, registry=registry.crawl(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def _accepts(model: type[BaseModel], body: dict[str, Any]) -> bool:
    try:
        model.model_validate_json(json.dumps(body), strict=True)
    except ValueError:
        return False
    return True


# --- every operation is documented -----------------------------------------------------------


def test_every_operation_has_a_summary_description_and_a_known_tag(doc: dict[str, Any]) -> None:
    for op in _operations(doc):
        assert op["summary"], op["operationId"]
        assert op["description"], op["operationId"]
        assert op["tags"], op["operationId"]
        assert set(op["tags"]) <= set(TAGS), op["operationId"]
    assert [t["name"] for t in doc["tags"]] == list(TAGS)
    assert doc["info"]["license"]["identifier"]


def test_timestamps_are_date_time(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    for name, prop in [("Listing", "createdAt"), ("MatchRequest", "respondedAt"), ("Message", "createdAt"),
                       ("Webhook", "updatedAt"), ("DeliveryAttempt", "attemptedAt"), ("Approval", "enqueuedAt")]:
        text = json.dumps(schemas[name]["properties"][prop])
        assert '"format": "date-time"' in text, (name, prop)
    _validator(doc, "#/components/schemas/MessageNew").validate(
        {"conversationId": "c", "messageId": "m", "senderId": "u", "senderName": "A", "content": "x", "isApiSent": True,
         "createdAt": "2026-11-21T23:55:55.123Z"}
    )


def test_request_bodies_forbid_unknown_properties(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    for op in _operations(doc):
        body = op.get("requestBody")
        if body is None:
            continue
        name = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
        schema = schemas[name]
        members = [schemas[o["$ref"].rsplit("/", 1)[-1]] for o in schema.get("oneOf", [])] or [schema]
        assert all(m["additionalProperties"] is False for m in members), name


def test_request_body_examples_are_valid_against_their_schemas(doc: dict[str, Any]) -> None:
    with_examples = [name for name, schema in doc["components"]["schemas"].items() if schema.get("examples")]
    assert {"ListingCreate", "WebhookCreate", "MatchRequestCreate", "AdminUserCreate"} <= set(with_examples)
    for name in with_examples:
        validator = _validator(doc, f"#/components/schemas/{name}")
        for example in doc["components"]["schemas"][name]["examples"]:
            validator.validate(example)


# --- schema-valid requests the server refused) -----------------------


def test_country_is_an_enum_of_iso_codes(doc: dict[str, Any]) -> None:
    country = doc["components"]["schemas"]["AdminUserCreate"]["properties"]["country"]
    enum = next(o for o in country["anyOf"] if "enum" in o)["enum"]
    assert "de" in enum
    assert "" not in enum
    assert len(enum) > 240
    assert not _accepts(AdminUserCreate, {"displayName": "A", "country": ""})


@pytest.mark.parametrize(("raw", "accepted"), [
    (b'{"verifiedLevel": 1.0}', True), (b'{"verifiedLevel": 1e0}', True), (b'{"verifiedLevel": 1}', True),
    (b'{"verifiedLevel": 1.5}', False), (b'{"verifiedLevel": true}', False), (b'{"verifiedLevel": "1"}', False),
])
def test_integer_fields_accept_integral_numbers_as_json_schema_does(raw: bytes, accepted: bool) -> None:
    request = SimpleNamespace(raw_body=raw)
    if accepted:
        assert parse_body(AdminUserPatch, request).verifiedLevel == 1  # type: ignore[arg-type]
    else:
        with pytest.raises(errors.RuleViolation):
            parse_body(AdminUserPatch, request)  # type: ignore[arg-type]


def test_webhook_events_and_url_are_constrained(doc: dict[str, Any]) -> None:
    props = doc["components"]["schemas"]["WebhookCreate"]["properties"]
    events = next(o for o in props["events"]["anyOf"] if o.get("type") == "array")
    assert events["items"]["enum"] == list(SUPPORTED_EVENTS)
    assert props["url"]["pattern"].startswith("^[Hh][Tt][Tt][Pp][Ss]")
    assert not _accepts(WebhookCreate, {"url": "https://a.example", "events": [""]})


def test_not_nullable_patch_fields_do_not_offer_null(doc: dict[str, Any]) -> None:
    props = doc["components"]["schemas"]["ProfilePatch"]["properties"]
    for name in ("displayName", "recruiting", "requestPolicy"):
        assert "null" not in json.dumps(props[name]), name
        assert "default" not in props[name]
        assert not _accepts(ProfilePatch, {name: None})
    assert {"type": "null"} in props["country"]["anyOf"]


def test_blank_text_is_excluded_by_pattern(doc: dict[str, Any]) -> None:
    validator = _validator(doc, "#/components/schemas/AdminUserCreate")
    assert not validator.is_valid({"displayName": "   "})
    assert not _accepts(AdminUserCreate, {"displayName": "   "})


def test_listing_channels_are_channel_keys(doc: dict[str, Any]) -> None:
    items = doc["components"]["schemas"]["ListingCreate"]["properties"]["channels"]["items"]
    assert items == {"$ref": "#/components/schemas/ChannelKey"}  # the one enum of channel keys, as match requests use
    assert sorted(doc["components"]["schemas"]["ChannelKey"]["enum"]) == ["discord", "email", "signal", "telegram", "whatsapp"]


def test_channel_path_parameter_is_an_enum(doc: dict[str, Any]) -> None:
    for method in ("put", "delete"):
        key = doc["paths"]["/v1/me/channels/{key}"][method]["parameters"][0]
        assert key["schema"]["enum"] == ["telegram", "discord", "whatsapp", "signal", "email"]


def test_reason_goes_only_with_rejected(doc: dict[str, Any]) -> None:
    schema = doc["components"]["schemas"]["StatusChange"]
    assert schema["discriminator"]["propertyName"] == "status"
    validator = _validator(doc, "#/components/schemas/StatusChange")
    assert validator.is_valid({"status": "REJECTED", "reason": "Filled"})
    assert not validator.is_valid({"status": "ACCEPTED", "reason": "Great"})
    with pytest.raises(ValueError, match="Extra inputs") as caught:
        StatusChange.model_validate_json('{"status": "ACCEPTED", "reason": "Great"}', strict=True)
    issue = errors.from_pydantic(caught.value, tagged_union=True)
    assert [d.field for d in issue.details or []] == ["reason"]


# --- rules the schema cannot express ----------------------------------------------------------


def test_rules_beyond_the_schema_are_described_and_excluded_by_name_only(doc: dict[str, Any]) -> None:
    with_rules = sorted(
        op["operationId"] for op in _operations(doc) if [r for r in op.get("x-validation-rules", []) if not r.startswith(CURSOR_RULE)]
    )
    assert with_rules, "no operation declares rules"
    with_cursor = [op for op in _operations(doc) if any(p["name"] == "cursor" for p in op.get("parameters", []))]
    assert with_cursor, "no operation takes a cursor"
    for op in with_cursor:  # the page rule only where `page` is a parameter
        takes_page = any(p["name"] == "page" for p in op["parameters"])
        assert CURSOR_RULE + (CURSOR_PAGE_RULE if takes_page else "") + "." in op["x-validation-rules"], op["operationId"]
    for op in _operations(doc):
        for rule in op.get("x-validation-rules", []):
            assert RULES_HEADING in op["description"]
            assert rule in op["description"]
    config = tomllib.loads((ROOT / "tests/e2e/schemathesis.toml").read_text())
    assert config["checks"] == {"enabled": True}
    [exception, leave, not_called] = config["operations"]
    assert sorted(exception["include-operation-id"]) == with_rules
    assert exception["checks"] == {"positive_data_acceptance": {"enabled": False}}
    # Leaving a conversation (its DELETE) keeps it readable: only use-after-free is off, on its two reads.
    assert sorted(leave["include-operation-id"]) == ["conversations_get_conversation", "conversations_list_messages"]
    assert leave["checks"] == {"use_after_free": {"enabled": False}}
    # Erasing the account would end the run's key: the one operation never called, by its id only.
    assert not_called == {"include-operation-id": ["privacy_erase_account"], "enabled": False}


# --- webhooks ---------------------------------------------------------------------------------


def test_webhooks_section_has_every_catalogued_event(doc: dict[str, Any]) -> None:
    assert list(doc["webhooks"]) == list(EVENT_TYPES)
    for name, item in doc["webhooks"].items():
        op = item["post"]
        headers = {p["name"] for p in op["parameters"] if p["in"] == "header"}
        assert {"X-Webhook-Event", "X-Webhook-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"} <= headers
        ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        envelope = doc["components"]["schemas"][ref.rsplit("/", 1)[-1]]
        assert envelope["properties"]["event"]["const"] == name
        assert set(envelope["required"]) == {"event", "timestamp", "test", "data"}
        assert "prefix included" in op["description"]
    assert "secret string exactly as returned, prefix included" in SIGNING_RULE


def test_delivered_bodies_match_their_documented_envelope(doc: dict[str, Any]) -> None:
    profile = {"displayName": "Ada", "verifiedLevel": 1, "country": "de", "socialLinks": dict.fromkeys(
        ("x", "linkedin", "github", "instagram", "tiktok", "youtube", "website"))}
    samples: dict[str, dict[str, Any]] = {
        "match_request.received": {"requestId": "r", "status": "PENDING", "listingId": "l", "listingTitle": "T",
                                   "requesterId": "u", "profile": profile, "channels": ["telegram"], "message": "Hi",
                                   "createdAt": "2026-11-21T23:55:55.123Z"},
        "match_request.rejected": {"requestId": "r", "status": "REJECTED", "listingId": "l", "listingTitle": "T",
                                   "requesterId": "u", "reason": None, "respondedAt": "2026-11-21T23:55:55.123Z"},
        "message.new": {"conversationId": "c", "messageId": "m", "senderId": "u", "senderName": "A", "content": "x",
                        "isApiSent": True, "createdAt": "2026-11-21T23:55:55.123Z"},
    }
    for name, data in samples.items():
        event = Event(event_id="evt_1", type=name, created_at="2026-11-21T23:55:55.123Z", data=data, routing={})
        body = json.loads(envelope_body(event))
        _validator(doc, f"#/components/schemas/{envelope_model(name).__name__}").validate(body)
