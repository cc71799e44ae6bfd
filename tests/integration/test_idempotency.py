"""Idempotency-Key on POST and PATCH: replay byte for byte without
redoing the work, 422 on reuse with another request, 409 while the first is in flight, per-user scope."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error, table_items
from tests.listing_bodies import listing_body
from tests.waiting import wait_until


def _post_listing(api: Api, user: User, key: str | None, body: dict[str, Any] | None = None) -> Any:
    headers = {"idempotency-key": key} if key is not None else {}
    return api.call("POST", "/v1/listings", user.key, body or listing_body(), headers=headers)


def _listing_count() -> int:
    return len(table_items(settings().LISTINGS_TABLE))


def test_a_retry_returns_the_first_response_byte_for_byte_without_creating_again(api: Api, alice: User) -> None:
    first = _post_listing(api, alice, "key-1")
    second = _post_listing(api, alice, "key-1")
    assert first.status_code == second.status_code == 201
    assert second.body == first.body  # byte for byte
    assert second.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert second.headers["X-Request-Id"] != first.headers["X-Request-Id"]  # each request keeps its own id
    assert _listing_count() == 1


def test_same_body_with_other_whitespace_and_key_order_is_the_same_request(api: Api, alice: User) -> None:
    body = listing_body()
    first = _post_listing(api, alice, "key-ws", body)
    reordered = api.call("POST", "/v1/listings", alice.key, raw=(
        '{"channels": ["telegram"],  "meta": ' + json.dumps(body["meta"]) +
        ', "roleKey": "' + body["roleKey"] + '", "categoryKey": "' + body["categoryKey"] + '"}').encode(),
        headers={"idempotency-key": "key-ws"})
    assert reordered.status_code == 201
    assert reordered.body == first.body
    assert _listing_count() == 1


def test_an_integer_written_with_a_zero_fraction_is_the_same_request(api: Api, alice: User) -> None:
    first = api.call("PATCH", "/v1/me/profile", alice.key, {"requestPolicy": {"minVerifiedLevel": 0}},
                     headers={"idempotency-key": "key-int"})
    again = api.call("PATCH", "/v1/me/profile", alice.key, raw=b'{"requestPolicy": {"minVerifiedLevel": 0.0}}',
                     headers={"idempotency-key": "key-int"})
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.body == first.body


def test_same_key_with_another_body_is_422_and_changes_nothing(api: Api, alice: User) -> None:
    _post_listing(api, alice, "key-2")
    other = listing_body(meta={"title": "Another title"})
    assert_error(_post_listing(api, alice, "key-2", other), 422, "IDEMPOTENCY_KEY_REUSED")
    assert _listing_count() == 1


def test_same_key_on_another_route_is_422(api: Api, alice: User) -> None:
    _post_listing(api, alice, "key-3")
    response = api.call("POST", "/v1/webhooks", alice.key, {"url": "https://example.org/hook", "events": ["message.new"]},
                        headers={"idempotency-key": "key-3"})
    assert_error(response, 422, "IDEMPOTENCY_KEY_REUSED")


def test_keys_are_scoped_per_user(api: Api, alice: User, bob: User) -> None:
    assert _post_listing(api, alice, "shared-key").status_code == 201
    response = _post_listing(api, bob, "shared-key", listing_body(meta={"title": "Bob's"}))
    assert response.status_code == 201
    assert response.json["title"] == "Bob's"
    assert _listing_count() == 2


def test_without_a_key_every_request_runs(api: Api, alice: User) -> None:
    _post_listing(api, alice, None)
    _post_listing(api, alice, None)
    assert _listing_count() == 2


def test_a_concurrent_duplicate_in_flight_is_409_and_the_first_completes(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.listings import service

    entered, release = threading.Event(), threading.Event()
    original = service.create_listing

    def slow_create(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        assert release.wait(10)
        return original(*args, **kwargs)

    monkeypatch.setattr(service, "create_listing", slow_create)
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(_post_listing(api, alice, "key-busy")))
    worker.start()
    assert entered.wait(10)
    duplicate = _post_listing(api, alice, "key-busy")
    release.set()
    worker.join(10)
    assert_error(duplicate, 409, "IDEMPOTENCY_KEY_IN_USE")
    assert duplicate.headers["Retry-After"] == "1"
    assert results[0].status_code == 201
    assert _post_listing(api, alice, "key-busy").body == results[0].body  # now replayed
    assert _listing_count() == 1


def test_a_business_error_is_replayed_too(api: Api, alice: User) -> None:
    missing = {"meta": {"title": "x"}}
    first = api.call("PATCH", "/v1/listings/lst_missing", alice.key, missing, headers={"idempotency-key": "k404"})
    assert_error(first, 404, "NOT_FOUND")
    second = api.call("PATCH", "/v1/listings/lst_missing", alice.key, missing, headers={"idempotency-key": "k404"})
    assert second.body == first.body
    assert second.headers["Idempotent-Replayed"] == "true"


def test_a_conflict_is_not_stored_so_a_retry_runs_again(api: Api, alice: User) -> None:
    created = _post_listing(api, alice, None).json
    pause = {"status": "PAUSED"}
    path = f"/v1/listings/{created['id']}/status"
    first = api.call("PATCH", path, alice.key, pause, headers={"idempotency-key": "k409"})
    assert_error(first, 409, "CONFLICT")  # a PENDING listing cannot be paused
    again = api.call("PATCH", path, alice.key, pause, headers={"idempotency-key": "k409"})
    assert_error(again, 409, "CONFLICT")
    assert "Idempotent-Replayed" not in again.headers


def test_an_invalid_body_stores_nothing(api: Api, alice: User) -> None:
    bad = api.call("POST", "/v1/listings", alice.key, {"categoryKey": 5}, headers={"idempotency-key": "k400"})
    assert_error(bad, 400, "VALIDATION_ERROR")
    assert _post_listing(api, alice, "k400").status_code == 201  # the key is still free
    assert table_items(settings().IDEMPOTENCY_TABLE)[0]["status"] == "COMPLETED"


@pytest.mark.parametrize("key", ["", "a" * 256, "has space", "ümlaut"], ids=["empty", "too-long", "space", "non-ascii"])
def test_a_malformed_key_is_a_validation_error_naming_the_header(api: Api, alice: User, key: str) -> None:
    response = _post_listing(api, alice, key)
    assert_error(response, 400, "VALIDATION_ERROR", field="Idempotency-Key")
    assert _listing_count() == 0


def test_records_expire_after_24_hours(api: Api, alice: User) -> None:
    from chalicelib.kernel import clock

    _post_listing(api, alice, "key-ttl")
    [record] = table_items(settings().IDEMPOTENCY_TABLE)
    assert abs(int(record["expiration"]) - (clock.epoch_seconds() + 24 * 3600)) < 120
    assert record["id"].startswith("http#")


def _create_user(api: Api, admin: User, key: str, caller_key: str | None = None) -> Any:
    return api.call("POST", "/v1/admin/users", caller_key or admin.key, {"displayName": "Carol"}, headers={"idempotency-key": key})


def test_the_table_holds_no_key_text_after_a_keyed_user_creation_and_a_replay_gets_the_same_answer(
    api: Api, admin: User
) -> None:
    first = _create_user(api, admin, "create-carol")
    assert first.status_code == 201
    created_key = first.json["apiKey"]
    stored = json.dumps(table_items(settings().IDEMPOTENCY_TABLE))
    assert created_key not in stored
    assert "Carol" not in stored  # the whole answer is sealed, not only the secret
    assert admin.key not in stored  # nor is the credential it is sealed with
    replay = _create_user(api, admin, "create-carol")
    assert replay.status_code == 201
    assert replay.body == first.body
    assert replay.headers["Idempotent-Replayed"] == "true"


def test_another_key_of_the_same_user_cannot_open_a_stored_answer(api: Api, admin: User) -> None:
    from chalicelib.auth import own_keys
    from chalicelib.auth.service import authenticate

    second_key = own_keys.create_key(authenticate(f"Bearer {admin.key}"), "second").secret
    assert _create_user(api, admin, "create-once").status_code == 201
    other = _create_user(api, admin, "create-once", caller_key=second_key)
    assert_error(other, 422, "IDEMPOTENCY_KEY_REUSED")
    assert len([u for u in table_items(settings().USERS_TABLE) if u.get("displayName") == "Carol"]) == 1


class _Killed(BaseException):
    """The process dying mid-request: not an ``Exception``, so nothing cleans the record up."""


def test_an_interrupted_keyed_request_is_retried_successfully_once_its_bound_passes(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.listings import service

    monkeypatch.setenv("IDEMPOTENCY_IN_PROGRESS_SECONDS", "1")
    settings.cache_clear()
    original = service.create_listing

    def killed(*args: Any, **kwargs: Any) -> Any:
        raise _Killed

    monkeypatch.setattr(service, "create_listing", killed)
    with pytest.raises(_Killed):
        _post_listing(api, alice, "key-killed")
    [record] = table_items(settings().IDEMPOTENCY_TABLE)
    assert record["status"] == "INPROGRESS"
    assert_error(_post_listing(api, alice, "key-killed"), 409, "IDEMPOTENCY_KEY_IN_USE")
    monkeypatch.setattr(service, "create_listing", original)
    retried = wait_until(lambda: (r := _post_listing(api, alice, "key-killed")).status_code == 201 and r, timeout_seconds=10)
    assert "Idempotent-Replayed" not in retried.headers
    assert _listing_count() == 1


def test_an_interrupted_attempt_blocks_its_key_for_at_most_60_seconds_by_default(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.kernel import clock
    from chalicelib.listings import service

    assert settings().IDEMPOTENCY_IN_PROGRESS_SECONDS <= 60

    def killed(*args: Any, **kwargs: Any) -> Any:
        raise _Killed

    monkeypatch.setattr(service, "create_listing", killed)
    before_ms = clock.epoch_seconds() * 1000
    with pytest.raises(_Killed):
        _post_listing(api, alice, "key-killed-default")
    [record] = table_items(settings().IDEMPOTENCY_TABLE)
    assert before_ms < int(record["in_progress_expiration"]) <= before_ms + 61_000
