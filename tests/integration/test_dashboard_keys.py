"""Dashboard "API keys" over in-process moto: create (secret shown once, through
the session's one-time flash after a 303), revoke after a confirmation page (401 on the next
call), roll with the old key's expiry (works until then: the clock is patched, no sleeping)."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest

from chalicelib.auth import keys, own_keys
from chalicelib.auth.service import Caller
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from tests.clocks import frozen_clock
from tests.integration.conftest import Api, User
from tests.integration.helpers import counting_reads, table_items
from tests.integration.test_dashboard import Browser, signed_in

SECRET = re.compile(r'aria-label="New API key" data-copy data-copy-label="API key">(msk_[A-Za-z0-9_-]{43})<')


def _create(b: Browser, name: str) -> str:
    response = b.post("/dashboard/api-keys", {"csrf_token": b.csrf("/dashboard/api-keys"), "name": name})
    assert response.status_code == 303, response.text
    assert response.headers["Location"] == "/dashboard/api-keys"
    shown = b.get("/dashboard/api-keys")
    match = SECRET.search(shown.text)
    assert match, shown.text
    return match.group(1)


def _key_id(secret: str) -> str:
    """The stored public id of the key ``secret`` (random: nothing computes it from the key)."""
    (stored,) = [i for i in table_items(settings().API_KEYS_TABLE) if i.get("keyHash") == keys.hash_key(secret)]
    return str(stored["keyId"])


def _works(api: Api, key: str) -> int:
    return int(api.call("GET", "/v1/listings/mine", key).status_code)


def test_create_shows_the_secret_once_and_stores_only_its_hash(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    secret = _create(b, "CI deploy")
    again = b.get("/dashboard/api-keys")  # a reload shows the list, never the secret again
    assert secret not in again.text
    assert "CI deploy" in again.text
    assert secret[:8] in again.text
    assert _works(api, secret) == 200
    stored = [i for i in table_items(settings().API_KEYS_TABLE) if i.get("name") == "CI deploy"]
    assert [i["keyHash"] for i in stored] == [keys.hash_key(secret)]
    assert secret not in str(table_items(settings().API_KEYS_TABLE) + table_items(settings().DASHBOARD_SESSIONS_TABLE))
    listed = b.get("/dashboard/api-keys").text
    assert "Never" not in listed.split("CI deploy")[1].split("</tr>")[0].split("</td>")[3]  # last used is set


def test_blank_name_is_refused_and_changes_nothing(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    before = len(table_items(settings().API_KEYS_TABLE))
    response = b.post("/dashboard/api-keys", {"csrf_token": b.csrf("/dashboard/api-keys"), "name": "   "})
    assert response.status_code == 400
    assert "name" in response.text
    assert len(table_items(settings().API_KEYS_TABLE)) == before


@pytest.mark.parametrize("name", ["a\u202eb", "a\x01b", "\u3164"], ids=["bidi-override", "control", "nothing-visible"])
def test_a_name_the_text_policy_refuses_is_refused_and_changes_nothing(api: Api, alice: User, name: str) -> None:
    b = signed_in(api, alice)
    before = len(table_items(settings().API_KEYS_TABLE))
    response = b.post("/dashboard/api-keys", {"csrf_token": b.csrf("/dashboard/api-keys"), "name": name})
    assert response.status_code == 400
    assert "The name " in response.text
    assert len(table_items(settings().API_KEYS_TABLE)) == before
    # the keys page again, the name kept in its field with the error tied to it
    field = r'<input id="key_name" name="name"[^>]* aria-invalid="true" aria-describedby="key_name-error" autofocus>'
    assert re.search(field, response.text)
    assert 'id="key_name-error" class="field-error">name: ' in response.text
    assert f'value="{html.escape(name)}"' in response.text
    assert "Create API key</button>" in response.text


def test_revoke_needs_the_confirmation_and_the_key_gets_401_on_its_next_call(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    secret = _create(b, "Leaked")
    assert _works(api, secret) == 200  # now in the process's key cache
    confirm = b.get(f"/dashboard/api-keys/{_key_id(secret)}/revoke")
    assert confirm.status_code == 200
    assert re.search(r'<button type="submit" class="danger">Revoke</button>', confirm.text)
    assert _works(api, secret) == 200  # showing the confirmation changed nothing
    done = b.post(f"/dashboard/api-keys/{_key_id(secret)}/revoke", {"csrf_token": b.csrf("/dashboard/api-keys")})
    assert done.status_code == 303
    assert _works(api, secret) == 401
    assert _works(api, alice.key) == 200  # the other keys keep working
    assert "Leaked" not in b.get("/dashboard/api-keys").text


def test_a_key_of_another_user_is_not_found(api: Api, alice: User, bob: User) -> None:
    secret = _create(signed_in(api, alice), "Alice's")
    b = signed_in(api, bob)
    response = b.post(f"/dashboard/api-keys/{_key_id(secret)}/revoke", {"csrf_token": b.csrf("/dashboard/api-keys")})
    assert response.status_code == 404
    assert _works(api, secret) == 200


def test_a_rolled_key_works_until_its_expiry(api: Api, alice: User) -> None:
    with frozen_clock(datetime.now(UTC)) as fake:
        b = signed_in(api, alice)
        old = _create(b, "Server")
        assert _works(api, old) == 200
        roll_page = b.get(f"/dashboard/api-keys/{_key_id(old)}/roll")
        assert "Roll key" in roll_page.text
        response = b.post(f"/dashboard/api-keys/{_key_id(old)}/roll",
                          {"csrf_token": b.csrf("/dashboard/api-keys"), "expires": "1h"})
        assert response.status_code == 303
        shown = b.get("/dashboard/api-keys").text
        new = SECRET.search(shown)
        assert new
        assert new.group(1) != old
        assert "stops working in 1 hour" in shown
        assert (_works(api, old), _works(api, new.group(1))) == (200, 200)
        fake.advance(3599)
        assert _works(api, old) == 200
        fake.advance(2)
        assert (_works(api, old), _works(api, new.group(1))) == (401, 200)  # the cached entry knows the expiry too


def test_roll_now_ends_the_old_key_at_once_and_a_bad_expiry_is_refused(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    old = _create(b, "Laptop")
    bad = b.post(f"/dashboard/api-keys/{_key_id(old)}/roll", {"csrf_token": b.csrf("/dashboard/api-keys"), "expires": "1y"})
    assert bad.status_code == 400
    assert _works(api, old) == 200
    b.post(f"/dashboard/api-keys/{_key_id(old)}/roll", {"csrf_token": b.csrf("/dashboard/api-keys"), "expires": "now"})
    assert _works(api, old) == 401


def test_admin_users_page_keeps_creating_users(api: Api, admin: User) -> None:
    b = signed_in(api, admin)
    response = b.post("/dashboard/admin/users", {"csrf_token": b.csrf("/dashboard/admin/users"), "display_name": "Dora",
                                                 "verified_level": "0", "country": " DE"})
    assert response.status_code in (201, 303)
    dora = api.call("GET", "/v1/admin/users?q=dora", admin.key).json["users"]
    assert [u["country"] for u in dora] == ["de"]  # the form takes any case; the API, the code as it writes it
    assert ">Dora</th>" in b.get("/dashboard/admin/users?country=DE").text


def test_revoking_the_key_a_session_was_opened_with_ends_that_session(api: Api, alice: User) -> None:
    mine = signed_in(api, alice)
    leaked = _create(mine, "Leaked")
    attacker = signed_in(api, User(alice.user_id, leaked))
    assert attacker.get("/dashboard/api-keys").status_code == 200
    mine.post(f"/dashboard/api-keys/{_key_id(leaked)}/revoke", {"csrf_token": mine.csrf("/dashboard/api-keys")})
    assert attacker.get("/dashboard/api-keys").status_code == 303  # to the sign-in page: can mint no key
    assert attacker.post("/dashboard/api-keys", {"csrf_token": "x" * 64, "name": "Backdoor"}).status_code == 401
    assert mine.get("/dashboard/api-keys").status_code == 200  # a session of another key goes on


def test_rolling_the_sessions_own_key_now_keeps_the_session_on_the_new_key(api: Api) -> None:
    from tests.integration.conftest import make_user

    carol = make_user("Carol")
    b = signed_in(api, carol)
    listed = b.get("/dashboard/api-keys").text
    assert "this session" in listed
    own = _key_id(carol.key)
    assert "signs you out here" in b.get(f"/dashboard/api-keys/{own}/revoke").text
    b.post(f"/dashboard/api-keys/{own}/roll", {"csrf_token": b.csrf("/dashboard/api-keys"), "expires": "now"})
    shown = b.get("/dashboard/api-keys")  # still signed in: the new secret is shown
    new = SECRET.search(shown.text)
    assert new
    assert (_works(api, carol.key), _works(api, new.group(1))) == (401, 200)
    assert b.get("/dashboard/webhooks").status_code == 200
    # A user's first key has no name, and the key that replaces it has none either.
    (stored,) = [i for i in table_items(settings().API_KEYS_TABLE) if i.get("keyHash") == keys.hash_key(new.group(1))]
    assert "name" not in stored
    assert "(unnamed)" in shown.text


def test_a_users_first_key_shows_its_prefix_like_every_other(api: Api, admin: User) -> None:
    """The key ``POST /v1/admin/users`` makes is listed with ``msk_`` and four characters, as the keys
    a user makes later are (it was listed as ``msk_…``)."""
    created = api.call("POST", "/v1/admin/users", admin.key, {"displayName": "Prefixed"}).json
    listed = signed_in(api, User(created["userId"], created["apiKey"])).get("/dashboard/api-keys").text
    assert f'<td class="mono">{created["apiKey"][:8]}</td>' in listed


def test_key_ids_are_random_distinct_and_no_prefix_of_the_hash(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    first, second = _create(b, "One"), _create(b, "Two")
    ids = {_key_id(first), _key_id(second), _key_id(alice.key)}
    assert len(ids) == 3
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    for secret in (first, second, alice.key):
        assert not keys.hash_key(secret).startswith(_key_id(secret))  # unrelated to the hash
    listed = b.get("/dashboard/api-keys").text
    assert all(f"/dashboard/api-keys/{i}/roll" in listed for i in ids)
    assert keys.hash_key(first)[:16] not in listed


def _strip_key_id(secret: str) -> None:
    """Make the key ``secret`` look like one made before keys had ids."""
    storage.update(settings().API_KEYS_TABLE, {"keyHash": keys.hash_key(secret)}, "REMOVE keyId")


def test_a_key_made_before_key_ids_gets_one_once_when_listed_and_can_be_revoked(api: Api, alice: User) -> None:
    b = signed_in(api, alice)
    old = _create(b, "Old")
    _strip_key_id(old)
    _strip_key_id(alice.key)
    assert _works(api, old) == 200  # a record without an id still authenticates
    listed = b.get("/dashboard/api-keys").text
    assigned = _key_id(old)
    assert re.fullmatch(r"[0-9a-f]{16}", assigned)
    assert not keys.hash_key(old).startswith(assigned)
    assert f"/dashboard/api-keys/{assigned}/revoke" in listed
    assert "this session" in listed  # the session's own key got its id too
    b.get("/dashboard/api-keys")
    assert _key_id(old) == assigned  # assigned once: a second listing keeps it
    b.post(f"/dashboard/api-keys/{assigned}/revoke", {"csrf_token": b.csrf("/dashboard/api-keys")})
    assert _works(api, old) == 401


def test_concurrent_assignments_of_an_old_keys_id_agree_on_one(api: Api, alice: User) -> None:
    from chalicelib.auth import repository

    _strip_key_id(alice.key)
    hashed = keys.hash_key(alice.key)
    first = repository.assign_key_id(hashed, alice.user_id, "1" * 16)
    late = repository.assign_key_id(hashed, alice.user_id, "2" * 16)  # lost the race: reads the winner's id
    assert first is not None
    assert late is not None
    assert first["keyId"] == late["keyId"] == _key_id(alice.key) == "1" * 16
    assert repository.assign_key_id(hashed, "usr_other", "3" * 16) is None  # another user's key: nothing
    assert repository.assign_key_id("0" * 64, alice.user_id, "4" * 16) is None  # a gone key stays gone
    assert [k.key_id for k in own_keys.list_keys(Caller(alice.user_id))] == ["1" * 16]


def test_the_keys_page_marks_the_sessions_key_from_the_listing_alone(api: Api, alice: User) -> None:
    """One Query of the user's keys lists them and finds the session's own key: no GetItem of the key."""
    b = signed_in(api, alice)
    _create(b, "Second")
    b.get("/dashboard/api-keys")  # the session and its key are cached
    with counting_reads() as reads:
        listed = b.get("/dashboard/api-keys").text
    assert listed.count("this session") == 1
    assert reads.calls == ["GetItem", "Query"], reads.calls  # the session, the keys
