"""The one text policy over HTTP: every refused class of code point, in every single-line field
(``displayName``, webhook ``name``, channel ``handle``, saved-search ``name``) and multi-line field
(message ``content``, listing ``description``), is a VALIDATION_ERROR naming the field, and nothing
is stored; line breaks stay allowed in multi-line fields, emoji sequences everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error, my_listings
from tests.integration.request_helpers import accepted_conversation
from tests.listing_bodies import listing_body

#: One code point of each refused class, between visible letters.
REFUSED_CLASSES = {
    "format-zwsp": "\u200b",
    "format-bom": "\ufeff",
    "format-tag": "\U000e0041",
    "bidi-override": "\u202e",
    "bidi-isolate": "\u2066",
    "control-c1-nel": "\x85",
    "control-del": "\x7f",
    "line-separator": "\u2028",
    "paragraph-separator": "\u2029",
    "noncharacter": "\uffff",
    "private-use": "\ue000",
    "unassigned": "\u0378",
}
#: A receiver address the tests may use (loopback is allowed outside a deployed stage).
URL = "http://127.0.0.1:9/hook"
EMOJI = "Dev \U0001f469\u200d\U0001f4bb \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"


def _display_name(api: Api, admin: User, alice: User, bob: User, value: str) -> tuple[Any, Callable[[], Any]]:
    response = api.call("PATCH", "/v1/me/profile", alice.key, {"displayName": value})
    return response, lambda: api.call("GET", "/v1/me", alice.key).json["displayName"]


def _webhook_name(api: Api, admin: User, alice: User, bob: User, value: str) -> tuple[Any, Callable[[], Any]]:
    response = api.call("POST", "/v1/webhooks", alice.key, {"url": URL, "name": value})
    return response, lambda: len(api.call("GET", "/v1/webhooks", alice.key).json["webhooks"])


def _channel_handle(api: Api, admin: User, alice: User, bob: User, value: str) -> tuple[Any, Callable[[], Any]]:
    response = api.call("PUT", "/v1/me/channels/telegram", alice.key, {"handle": value})
    return response, lambda: [c for c in api.call("GET", "/v1/me/channels", alice.key).json["channels"] if c["key"] == "telegram"]


def _saved_search_name(api: Api, admin: User, alice: User, bob: User, value: str) -> tuple[Any, Callable[[], Any]]:
    response = api.call("POST", "/v1/saved-searches", alice.key, {"query": {"q": "engineer"}, "name": value})
    return response, lambda: api.call("GET", "/v1/saved-searches", alice.key).json["total"]


#: The conversation of each (owner, requester) pair that messages are sent to: made once per test
#: (every test has users of its own), not once per message.
_CONVERSATIONS: dict[tuple[str, str], str] = {}


def _message(api: Api, admin: User, alice: User, bob: User, value: str) -> tuple[Any, Callable[[], Any]]:
    pair = (alice.user_id, bob.user_id)
    if pair not in _CONVERSATIONS:
        _CONVERSATIONS[pair] = accepted_conversation(api, alice, bob)[1]
    conversation_id = _CONVERSATIONS[pair]
    path = f"/v1/conversations/{conversation_id}/messages"
    response = api.call("POST", path, alice.key, {"content": value})
    return response, lambda: [m["content"] for m in api.call("GET", path, alice.key).json["messages"]]


def _description(api: Api, admin: User, alice: User, bob: User, value: str) -> tuple[Any, Callable[[], Any]]:
    response = api.call("POST", "/v1/listings", alice.key, listing_body(meta={"description": value}))
    return response, lambda: my_listings(api, alice)["total"]


SINGLE_LINE_FIELDS = {
    "displayName": _display_name, "name": _webhook_name, "handle": _channel_handle, "saved-search name": _saved_search_name,
}
MULTI_LINE_FIELDS = {"content": _message, "meta.description": _description}
FIELD_NAMES = {"saved-search name": "name"}


def test_a_description_refuses_each_class_written_as_a_character_reference(api: Api, admin: User, alice: User, bob: User) -> None:
    """The sanitizer writes a reference out as the character it names (``&#x202E;`` stored as
    U+202E), in text and in a link alike: the policy sees the decoded text. A reference HTML would
    decode to another character (U+0000 and a surrogate to U+FFFD, a C1 control to the Windows-1252
    character of its byte: ``&#x85;`` to "…") or drop counts as the code point it names too."""
    named = {"control-c0-esc": "\x1b", "soft-hyphen": "\xad", "null": "\x00", "surrogate": "\ud800", "c1-pad": "\x80"}
    for name, char in {**REFUSED_CLASSES, **named}.items():
        for value in (f"<p>Ada&#x{ord(char):X};Lovelace</p>", f'<p><a href="https://example.com/&#{ord(char)};">Ada</a></p>'):
            response, stored = _description(api, admin, alice, bob, value)
            assert f"U+{ord(char):04X}" in assert_error(response, 400, "VALIDATION_ERROR", "meta.description")["details"][0]["issue"], name
            assert stored() == 0, name
    beyond = _description(api, admin, alice, bob, "<p>&#x110000;</p>")[0]
    assert "no character" in assert_error(beyond, 400, "VALIDATION_ERROR", "meta.description")["details"][0]["issue"]
    assert _description(api, admin, alice, bob, "<p>Ada &amp; Lovelace&nbsp;&#x41;</p>")[0].status_code == 201


def test_a_tab_in_a_single_line_is_stored_as_a_space(api: Api, alice: User) -> None:
    """The one control a single line allows is normalized (docs/decisions.md, "Input edges"); a
    multi-line text keeps it."""
    assert api.call("PATCH", "/v1/me/profile", alice.key, {"displayName": "Ada\tLovelace",
                                                           "recruiting": {"headline": "Eng\tlead"}}).status_code == 200
    me = api.call("GET", "/v1/me", alice.key).json
    assert (me["displayName"], me["recruiting"]["headline"]) == ("Ada Lovelace", "Eng lead")
    assert api.call("PUT", "/v1/me/channels/discord", alice.key, {"handle": "ada\t42"}).json["handle"] == "ada 42"
    listing = api.call("POST", "/v1/listings", alice.key, listing_body(meta={"location": "Berlin\tMitte",
                                                                           "description": "<p>a\tb</p>"})).json
    assert (listing["meta"]["location"], listing["meta"]["description"]) == ("Berlin Mitte", "<p>a\tb</p>")


@pytest.mark.parametrize("field", [*SINGLE_LINE_FIELDS, *MULTI_LINE_FIELDS])
def test_each_refused_class_is_a_validation_error_naming_the_field_and_stores_nothing(
    api: Api, admin: User, alice: User, bob: User, field: str
) -> None:
    """Every class of :data:`REFUSED_CLASSES` in turn, in one field (the classes themselves:
    ``tests/unit/test_single_line_text.py``)."""
    write = {**SINGLE_LINE_FIELDS, **MULTI_LINE_FIELDS}[field]
    _, stored = write(api, admin, alice, bob, "Ada Lovelace")  # what is there before (a conversation, a profile)
    before = stored()
    for name, char in REFUSED_CLASSES.items():
        response, stored = write(api, admin, alice, bob, f"Ada{char}Lovelace")
        body = assert_error(response, 400, "VALIDATION_ERROR", FIELD_NAMES.get(field, field))
        assert f"U+{ord(char):04X}" in body["details"][0]["issue"], name
        assert stored() == before, name


@pytest.mark.parametrize("field", SINGLE_LINE_FIELDS)
def test_a_line_break_is_refused_in_single_line_fields(api: Api, admin: User, alice: User, bob: User, field: str) -> None:
    response, _ = SINGLE_LINE_FIELDS[field](api, admin, alice, bob, "Ada\nLovelace")
    assert_error(response, 400, "VALIDATION_ERROR", FIELD_NAMES.get(field, field))


@pytest.mark.parametrize("field", [*SINGLE_LINE_FIELDS, *MULTI_LINE_FIELDS])
def test_emoji_sequences_pass_everywhere(api: Api, admin: User, alice: User, bob: User, field: str) -> None:
    response, _ = {**SINGLE_LINE_FIELDS, **MULTI_LINE_FIELDS}[field](api, admin, alice, bob, EMOJI)
    assert response.status_code in (200, 201), response.json


@pytest.mark.parametrize("field", MULTI_LINE_FIELDS)
def test_line_breaks_pass_in_multi_line_fields(api: Api, admin: User, alice: User, bob: User, field: str) -> None:
    response, _ = MULTI_LINE_FIELDS[field](api, admin, alice, bob, "first line\r\nsecond line\n\nthird")
    assert response.status_code == 201, response.json


@pytest.mark.parametrize("field", [*SINGLE_LINE_FIELDS, *MULTI_LINE_FIELDS])
def test_text_that_shows_nothing_is_refused_everywhere(api: Api, admin: User, alice: User, bob: User, field: str) -> None:
    """Hangul fillers and a blank Braille pattern are letters and symbols that display as nothing:
    a message of them would arrive looking empty."""
    write = {**SINGLE_LINE_FIELDS, **MULTI_LINE_FIELDS}[field]
    _, stored = write(api, admin, alice, bob, "Ada Lovelace")
    before = stored()
    for blank in ("\u3164", "\u3164 \u2800", "\uffa0\u115f"):
        response, stored = write(api, admin, alice, bob, blank)
        body = assert_error(response, 400, "VALIDATION_ERROR", FIELD_NAMES.get(field, field))
        assert body["details"][0]["issue"] == "has no visible character", ascii(blank)
        assert stored() == before, ascii(blank)
