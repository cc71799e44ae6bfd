"""``GET /v1/me/channels``, ``PUT`` and ``DELETE /v1/me/channels/{key}`` (DESIGN §2 "Channels")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.kernel.channels import CHANNEL_KEYS
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User
from tests.integration.helpers import Stack, assert_error, error_fields, shared_stack


@pytest.fixture(scope="class")
def stack(aws_resources: Resources) -> Iterator[Stack]:
    with shared_stack(aws_resources) as built:
        yield built


def _channels(api: Api, user: User) -> list[dict[str, Any]]:
    response = api.call("GET", "/v1/me/channels", user.key)
    assert response.status_code == 200, response.json
    assert set(response.json) == {"channels"}
    channels: list[dict[str, Any]] = response.json["channels"]
    return channels


def _pairs(api: Api, user: User) -> list[tuple[str, str]]:
    return [(c["key"], c["handle"]) for c in _channels(api, user)]


class TestReadsAndRefusals:
    """Listing channels and requests that must change nothing; one shared stack (Alice: email + telegram)."""

    def test_list_shows_connected_channels_sorted_by_key(self, stack: Stack) -> None:
        channels = _channels(stack.api, stack.alice)
        assert [(c["key"], c["handle"]) for c in channels] == [("email", "alice@example.org"), ("telegram", "@alice")]
        assert all(set(c) == {"key", "handle", "connectedAt"} for c in channels)
        assert all(c["connectedAt"].endswith("Z") for c in channels)

    def test_list_is_per_user(self, stack: Stack) -> None:
        assert ("telegram", "@bob") in _pairs(stack.api, stack.bob)
        assert ("telegram", "@bob") not in _pairs(stack.api, stack.alice)

    @pytest.mark.parametrize("key", ["fax", "Telegram", "sms"])
    def test_put_unknown_channel_key_is_a_validation_error_naming_key(self, stack: Stack, key: str) -> None:
        before = _channels(stack.api, stack.alice)
        response = stack.api.call("PUT", f"/v1/me/channels/{key}", stack.alice.key, {"handle": "x"})
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["key"]
        assert _channels(stack.api, stack.alice) == before

    @pytest.mark.parametrize(
        ("body", "field"),
        [({}, "handle"), ({"handle": "   "}, "handle"), ({"handle": "x" * 201}, "handle"), ({"handle": 7}, "handle"),
         ({"handle": "h", "verified": True}, "verified")],
    )
    def test_put_invalid_handle_changes_nothing(self, stack: Stack, body: dict[str, Any], field: str) -> None:
        before = _channels(stack.api, stack.alice)
        response = stack.api.call("PUT", "/v1/me/channels/discord", stack.alice.key, body)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]
        assert _channels(stack.api, stack.alice) == before

    def test_delete_of_an_unconnected_channel_is_404(self, stack: Stack) -> None:
        before = _channels(stack.api, stack.alice)
        assert_error(stack.api.call("DELETE", "/v1/me/channels/signal", stack.alice.key), 404, "NOT_FOUND")
        assert _channels(stack.api, stack.alice) == before

    def test_delete_unknown_channel_key_is_a_validation_error_naming_key(self, stack: Stack) -> None:
        before = _channels(stack.api, stack.alice)
        response = stack.api.call("DELETE", "/v1/me/channels/fax", stack.alice.key)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["key"]
        assert _channels(stack.api, stack.alice) == before

    def test_channels_need_a_key(self, stack: Stack) -> None:
        assert_error(stack.api.call("GET", "/v1/me/channels"), 401, "UNAUTHORIZED")
        assert_error(stack.api.call("PUT", "/v1/me/channels/telegram", body={"handle": "x"}), 401, "UNAUTHORIZED")
        assert_error(stack.api.call("DELETE", "/v1/me/channels/telegram"), 401, "UNAUTHORIZED")
        assert _pairs(stack.api, stack.alice) == [("email", "alice@example.org"), ("telegram", "@alice")]


def test_put_connects_a_new_channel(api: Api, alice: User) -> None:
    response = api.call("PUT", "/v1/me/channels/discord", alice.key, {"handle": "  alice#1234 "})
    assert response.status_code == 200, response.json
    assert response.json["key"] == "discord"
    assert response.json["handle"] == "alice#1234"
    assert response.json["connectedAt"].endswith("Z")
    assert _pairs(api, alice) == [("discord", "alice#1234"), ("email", "alice@example.org"), ("telegram", "@alice")]
    assert api.call("GET", "/v1/me", alice.key).json["activeChannels"] == ["discord", "email", "telegram"]


def test_put_on_a_connected_channel_replaces_its_handle(api: Api, alice: User) -> None:
    api.call("PUT", "/v1/me/channels/telegram", alice.key, {"handle": "@alice_new"})
    assert _pairs(api, alice) == [("email", "alice@example.org"), ("telegram", "@alice_new")]


@pytest.mark.parametrize("key", sorted(CHANNEL_KEYS))
def test_every_documented_channel_key_can_be_connected(api: Api, bob: User, key: str) -> None:
    assert api.call("PUT", f"/v1/me/channels/{key}", bob.key, {"handle": "h"}).status_code == 200
    assert (key, "h") in _pairs(api, bob)


def test_delete_disconnects_and_returns_id_and_deleted(api: Api, alice: User) -> None:
    response = api.call("DELETE", "/v1/me/channels/telegram", alice.key)
    assert response.status_code == 200, response.json
    assert response.json == {"id": "telegram", "deleted": True}
    assert _pairs(api, alice) == [("email", "alice@example.org")]
    assert api.call("GET", "/v1/me", alice.key).json["activeChannels"] == ["email"]


def test_delete_twice_is_404_the_second_time(api: Api, alice: User) -> None:
    assert api.call("DELETE", "/v1/me/channels/email", alice.key).status_code == 200
    assert_error(api.call("DELETE", "/v1/me/channels/email", alice.key), 404, "NOT_FOUND")


def test_delete_only_affects_the_caller(api: Api, alice: User, bob: User) -> None:
    api.call("DELETE", "/v1/me/channels/telegram", alice.key)
    assert ("telegram", "@bob") in _pairs(api, bob)
