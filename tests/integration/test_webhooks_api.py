"""POST/GET/DELETE /v1/webhooks and GET /v1/webhooks/{id}/deliveries through the test client."""

from __future__ import annotations

import base64

import pytest

from chalicelib.webhooks.catalogue import DEFAULT_EVENTS
from tests.integration.conftest import Api, User
from tests.integration.helpers import (
    Stack,
    assert_error,
    class_stack,  # noqa: F401  (the class-scoped ``stack`` fixture)
    listing_body,
)
from tests.integration.webhook_helpers import create_webhook

URL = "http://127.0.0.1:9/hook"


def test_create_returns_201_with_the_spec_fields_and_defaults(api: Api, alice: User) -> None:
    response = api.call("POST", "/v1/webhooks", alice.key, {"url": URL})
    assert response.status_code == 201, response.json
    created = response.json
    assert set(created) == {"id", "name", "url", "secret", "events", "active", "createdAt", "updatedAt"}
    assert created["id"].startswith("whk_")
    assert created["name"] == "API Webhook"
    assert created["url"] == URL
    assert created["events"] == list(DEFAULT_EVENTS)  # the domain events; operational ones only when named
    assert created["active"] is True
    assert created["createdAt"] == created["updatedAt"]
    assert created["createdAt"].endswith("Z")
    assert created["secret"].startswith("whsec_")
    assert len(base64.b64decode(created["secret"].removeprefix("whsec_"))) == 32


@pytest.mark.parametrize("events", [None, []])
def test_null_or_empty_events_mean_every_domain_event(api: Api, alice: User, events: list[str] | None) -> None:
    response = api.call("POST", "/v1/webhooks", alice.key, {"url": URL, "events": events, "name": None})
    assert response.status_code == 201, response.json
    assert response.json["events"] == list(DEFAULT_EVENTS)
    assert response.json["name"] == "API Webhook"


def test_chosen_events_and_name_are_kept(api: Api, alice: User) -> None:
    created = create_webhook(api, alice, URL, events=["message.new", "match_request.received", "message.new"], name="CRM")
    assert created["events"] == ["message.new", "match_request.received"]
    assert created["name"] == "CRM"


class TestInvalidBodies:
    """Bodies refused at the edge (nothing written), on one shared stack."""

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"url": URL, "events": ["match_request.received", "listing.submitted"]}, "events"),
            ({"url": URL, "events": ["nope"]}, "events"),
            ({"url": URL, "events": "message.new"}, "events"),
            ({}, "url"),
            ({"url": ""}, "url"),
            ({"url": "not a url"}, "url"),
            ({"url": "ftp://127.0.0.1/x"}, "url"),
            ({"url": URL, "name": "   "}, "name"),
            ({"url": URL, "active": False}, "active"),
        ],
    )
    def test_invalid_bodies_name_the_field(self, stack: Stack, body: dict[str, object], field: str) -> None:
        assert_error(stack.api.call("POST", "/v1/webhooks", stack.alice.key, body), 400, "VALIDATION_ERROR", field)


def test_unknown_event_error_lists_the_supported_events(api: Api, alice: User) -> None:
    body = assert_error(api.call("POST", "/v1/webhooks", alice.key, {"url": URL, "events": ["x.y"]}), 400, "VALIDATION_ERROR", "events")
    assert "x.y" in body["details"][0]["issue"]
    assert "message.new" in body["details"][0]["issue"]


def test_list_shows_own_webhooks_with_fail_count_and_secret(api: Api, alice: User, bob: User) -> None:
    first = create_webhook(api, alice, URL, name="first")
    second = create_webhook(api, alice, URL, name="second")
    create_webhook(api, bob, URL, name="bob's")
    listed = api.call("GET", "/v1/webhooks", alice.key)
    assert listed.status_code == 200
    assert set(listed.json) == {"webhooks"}
    assert [w["id"] for w in listed.json["webhooks"]] == [second["id"], first["id"]]
    for webhook in listed.json["webhooks"]:
        assert webhook["failCount"] == 0
        assert webhook["secret"].startswith("whsec_")
        assert webhook["active"] is True
    assert {**first, "failCount": 0} == listed.json["webhooks"][1]


def test_no_limit_on_webhooks_per_account(api: Api, alice: User) -> None:
    for _ in range(30):
        create_webhook(api, alice, URL)
    assert len(api.call("GET", "/v1/webhooks", alice.key).json["webhooks"]) == 30


def test_delete_own_webhook_and_not_others(api: Api, alice: User, bob: User) -> None:
    webhook = create_webhook(api, alice, URL)
    assert_error(api.call("DELETE", f"/v1/webhooks/{webhook['id']}", bob.key), 404, "NOT_FOUND")
    deleted = api.call("DELETE", f"/v1/webhooks/{webhook['id']}", alice.key)
    assert deleted.status_code == 200
    assert deleted.json == {"id": webhook["id"], "deleted": True}
    assert api.call("GET", "/v1/webhooks", alice.key).json == {"webhooks": []}
    assert_error(api.call("DELETE", f"/v1/webhooks/{webhook['id']}", alice.key), 404, "NOT_FOUND")
    assert_error(api.call("DELETE", "/v1/webhooks/whk_unknown", alice.key), 404, "NOT_FOUND")


def test_deliveries_of_own_webhook_only(api: Api, alice: User, bob: User) -> None:
    webhook = create_webhook(api, alice, URL)
    empty = api.call("GET", f"/v1/webhooks/{webhook['id']}/deliveries", alice.key)
    assert empty.status_code == 200
    assert empty.json == {"deliveries": [], "total": 0, "page": 1, "pageSize": 20, "nextCursor": None}
    assert_error(api.call("GET", f"/v1/webhooks/{webhook['id']}/deliveries", bob.key), 404, "NOT_FOUND")
    assert_error(api.call("GET", "/v1/webhooks/whk_nope/deliveries", alice.key), 404, "NOT_FOUND")
    assert_error(api.call("GET", f"/v1/webhooks/{webhook['id']}/deliveries?pageSize=0", alice.key), 400, "VALIDATION_ERROR")


def test_webhook_routes_need_a_key(api: Api) -> None:
    assert_error(api.call("GET", "/v1/webhooks"), 401, "UNAUTHORIZED")
    assert_error(api.call("POST", "/v1/webhooks", None, {"url": URL}), 401, "UNAUTHORIZED")


def test_listing_may_bind_only_own_webhooks(api: Api, alice: User, bob: User) -> None:
    mine = create_webhook(api, alice, URL)
    theirs = create_webhook(api, bob, URL)
    assert_error(api.call("POST", "/v1/listings", alice.key, listing_body(webhookIds=[mine["id"], theirs["id"]])),
                 400, "VALIDATION_ERROR", "webhookIds")
    created = api.call("POST", "/v1/listings", alice.key, listing_body(webhookIds=[mine["id"]]))
    assert created.status_code == 201, created.json
    assert created.json["webhookIds"] == [mine["id"]]
