"""No input makes the API answer 5xx: hypothesis over the route table.

Every API route (``chalicelib.edge.http.ROUTES``) gets JSON edge payloads (integer literals beyond
Python's 4,300-digit int-string limit, deep nesting, non-finite numbers, lone surrogates, invalid
UTF-8, random documents) and cursors: garbage, and cursors *validly signed* with the service's
own key (:func:`chalicelib.kernel.cursors.seal`) whose content is anything at all. To reach the code
that reads a cursor's content, the scope digest is patched to one constant, so a signed cursor
passes the "same query" check of every list as a real one would. Every answer must be below 500
and, when an error, the spec's error body.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import app
from chalicelib.edge import http
from chalicelib.kernel import cursors
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error, moto_examples
from tests.integration.request_helpers import accepted_conversation
from tests.integration.webhook_helpers import create_webhook

assert app.app  # every route registered
ROUTES = [spec for spec in http.ROUTES if spec.path.startswith("/v1/")]

#: Requests per run: bounded so the tests stay a few seconds long (in-process moto). The edge
#: parser's cases are unit-tested one by one (tests/unit/test_input_edges.py) and the contract run
#: fuzzes every operation on the local stack (tests/e2e/test_contract.py).
EXAMPLES = moto_examples(150)
#: Cursors per list route.
CURSOR_EXAMPLES = moto_examples(15)

_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20)
)
_json = st.recursive(
    _json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

#: Raw bodies at the edges of JSON and of Python's parser.
EDGE_BODIES: list[bytes] = [
    b"1" * 4301, b"-" + b"9" * 5000, b'{"title": ' + b"7" * 4400 + b"}", b'{"url": "x", "max": ' + b"1" * 10_000 + b"}",
    b"[" * 5000 + b"]" * 5000, b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e400}', b'{"a": -1e400}',
    b'{"a": "\\ud800"}', b'{"\\udfff": 1}', b"\xff\xfe{}", b"\xef\xbb\xbf{}", b'{"a": 1, "a": 2}', b"{", b"null",
    b"[]", b'"text"', b"0", b"", b" ", b'{"meta": {"title": "\\u202e\\u200b"}}', b'{"status": null}', b'{"max": 1.5}',
    b'{"url": "http://127.0.0.1:9/' + b"a" * 3000 + b'"}', b"\x00", b'{"query": {"q": []}}',
]
bodies = st.one_of(
    st.sampled_from(EDGE_BODIES),
    _json.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=40),
)

#: The content of a signed cursor: what the API writes there, and what it never does.
_cursor_value = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30), st.floats(), st.text(max_size=40),
    st.sampled_from(["", "#", "a#b#c", "x" * 900, "2026-01-01T00:00:00Z#", "#lst_1", "\x00", "a|b"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
_odd_keys = st.sampled_from(
    ["", "#", "abc", "a#b#c", "x" * 900, "2026-01-01T00:00:00Z#", "#lst_1", "\x00", "a|b", "1e400#x", "nan", "-1#", " "]
)
#: Signed cursors of the current format with a valid page and any key (what the lists read).
_signed_key = st.fixed_dictionaries(
    {"v": st.just(cursors.VERSION), "s": st.just("fuzz"), "p": st.integers(min_value=2, max_value=10**6),
     "n": st.integers(min_value=1, max_value=100), "k": st.one_of(_odd_keys, st.text(max_size=30), _cursor_value)},
).map(cursors.seal)
#: Signed cursors whose every field is anything.
_signed_any = st.fixed_dictionaries(
    {"v": st.one_of(st.just(cursors.VERSION), _cursor_value), "s": st.just("fuzz"), "p": _cursor_value,
     "n": _cursor_value, "k": _cursor_value},
).map(cursors.seal)
#: Page numbers that are no integers (found by the fuzzing: Infinity raised OverflowError).
_odd_pages = st.sampled_from([float("inf"), float("-inf"), float("nan"), 2.5, True, "2", None]).map(
    lambda page: cursors.seal({"v": cursors.VERSION, "s": "fuzz", "p": page, "n": 20, "k": None})
)
cursor_texts = st.one_of(_signed_key, _signed_key, _signed_any, _odd_pages, st.text(max_size=60), _json.map(cursors.seal))


@pytest.fixture
def world(api: Api, alice: User, bob: User, admin: User) -> dict[str, Any]:
    """Ids of real resources (alice's and bob's) for the routes' path parameters."""
    request, conversation_id = accepted_conversation(api, alice, bob)
    webhook = create_webhook(api, alice, "http://127.0.0.1:9/hook")
    saved = api.call("POST", "/v1/saved-searches", bob.key, {"query": {"q": "engineer"}})
    assert saved.status_code == 201, saved.json
    return {
        "users": {"alice": alice, "bob": bob, "admin": admin},
        "ids": {
            "listingId": [request["listingId"]], "requestId": [request["requestId"]], "conversationId": [conversation_id],
            "webhookId": [webhook["id"]], "savedSearchId": [saved.json["savedSearchId"]],
            "userId": [alice.user_id, bob.user_id], "key": ["jobs", "telegram"], "approvalId": ["apr_x"],
        },
    }


def _path(spec: http.RouteSpec, data: st.DataObject, ids: dict[str, list[str]], real_only: bool = False) -> str:
    path = spec.path
    while "{" in path:
        name = path[path.index("{") + 1 : path.index("}")]
        real = st.sampled_from(ids.get(name) or ["x"])
        value = data.draw(real if real_only else st.one_of(real, st.text(min_size=1, max_size=12)))
        path = path.replace("{" + name + "}", quote(value, safe=""), 1)
    return path


def _check(api: Api, method: str, path: str, key: str, raw: bytes = b"", headers: dict[str, str] | None = None) -> int:
    response = api.call(method, path, key, raw=raw, headers=headers)
    assert response.status_code < 500, (method, path, raw[:200], response.status_code, response.body[:300])
    if response.status_code >= 400:
        assert response.json["code"], response.json
        assert response.json["error"], response.json
    return int(response.status_code)


_FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
BODY_ROUTES = [spec for spec in ROUTES if spec.method in ("POST", "PATCH", "PUT")]
LIST_ROUTES = [spec for spec in ROUTES if spec.method == "GET" and spec.query_ref is not None]


def _key(spec: http.RouteSpec, data: st.DataObject, users: dict[str, User]) -> str:
    return users["admin" if spec.auth == "admin" else data.draw(st.sampled_from(["alice", "bob"]))].key


def test_no_route_answers_5xx_to_json_edge_bodies(api: Api, world: dict[str, Any]) -> None:
    statuses: set[int] = set()

    @_FUZZ
    @given(spec=st.sampled_from(BODY_ROUTES), raw=bodies, data=st.data())
    def check(spec: http.RouteSpec, raw: bytes, data: st.DataObject) -> None:
        headers = {}
        if data.draw(st.booleans()):
            headers["If-Match"] = data.draw(st.sampled_from(['"1"', "*", "W/x", '"' + "9" * 5000 + '"']))
        path = _path(spec, data, world["ids"])
        statuses.add(_check(api, spec.method, path, _key(spec, data, world["users"]), raw, headers))

    check()
    assert 400 in statuses  # the payloads did reach the validation


@pytest.mark.parametrize("spec", LIST_ROUTES, ids=lambda spec: spec.path)
def test_no_list_answers_5xx_to_any_cursor_content(
    api: Api, alice: User, bob: User, admin: User, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
    spec: http.RouteSpec,
) -> None:
    # every signed cursor names "the query it is used with": its content is what is under test
    monkeypatch.setattr(cursors, "scope_digest", lambda scope: "fuzz")
    # a list under an id reads its cursor only after the id named something of the caller's
    world = request.getfixturevalue("world") if "{" in spec.path else {
        "users": {"alice": alice, "bob": bob, "admin": admin}, "ids": {}}

    @settings(_FUZZ, max_examples=CURSOR_EXAMPLES)
    @given(cursor=cursor_texts, page_size=st.sampled_from(["", "1", "20"]), data=st.data())
    def check(cursor: str, page_size: str, data: st.DataObject) -> None:
        query = f"cursor={quote(cursor, safe='')}" + (f"&pageSize={page_size}" if page_size else "")
        extra = "&q=engineer" if spec.path.endswith("/search") and data.draw(st.booleans()) else ""
        path = _path(spec, data, world["ids"], real_only=True)
        callers = ["admin"] if spec.auth == "admin" else ["alice", "bob"]  # the ids' owner among them
        for name in callers:
            _check(api, "GET", f"{path}?{query}{extra}", world["users"][name].key)

    check()


@pytest.mark.parametrize("path", ["/v1/saved-searches", "/v1/listings", "/v1/webhooks"])
def test_an_integer_literal_over_the_int_string_limit_is_a_400_naming_its_field(api: Api, alice: User, path: str) -> None:
    raw = b'{"url": "http://127.0.0.1:9/hook", "count": ' + b"1" * 4301 + b"}"
    assert_error(api.call("POST", path, alice.key, raw=raw), 400, "VALIDATION_ERROR", "count")
