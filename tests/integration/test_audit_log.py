"""The administrators' audit log: every administrator action writes one entry in its own
transaction (actor, time, action, target, request id), ``GET /v1/admin/audit-log`` lists them
newest first with any combination of the actor, action and target filters, each page one Query
of ``pageSize + 1`` items, and no route changes an entry."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from chalicelib.approvals import service as approvals
from chalicelib.approvals.models import ApprovalDecision
from chalicelib.auth import keys, own_keys
from chalicelib.auth.service import ADMIN_SCOPE, Caller
from chalicelib.kernel.config import settings
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import (
    assert_error,
    claim,
    counting_reads,
    create_listing,
    decide,
    table_items,
)


def _log(api: Api, admin: User, query: str = "") -> dict[str, Any]:
    return api.call_json("GET", f"/v1/admin/audit-log{'?' + query if query else ''}", admin.key)


def _create_user(api: Api, actor: User, request_id: str | None = None, **body: Any) -> Any:
    headers = {"X-Request-Id": request_id} if request_id else None
    return api.call("POST", "/v1/admin/users", actor.key, {"displayName": "Carol", **body}, headers=headers)


def test_user_creation_records_actor_action_target_and_request_id(api: Api, admin: User) -> None:
    created = _create_user(api, admin, request_id="req-create-carol", verifiedLevel=1)
    assert created.status_code == 201
    entries = _log(api, admin)["entries"]
    assert len(entries) == 1
    entry = entries[0]
    assert entry["actorId"] == admin.user_id
    assert entry["action"] == "user.create"
    assert entry["targetType"] == "user"
    assert entry["targetId"] == created.json["userId"]
    assert entry["requestId"] == "req-create-carol"
    assert entry["details"] == {"admin": False, "verifiedLevel": 1}
    assert entry["createdAt"].endswith("Z")


def test_creating_an_administrator_also_records_the_admin_key(api: Api, admin: User) -> None:
    created = _create_user(api, admin, admin=True)
    actions = {e["action"]: e for e in _log(api, admin)["entries"]}
    assert set(actions) == {"user.create", "admin_key.create"}
    key_entry = actions["admin_key.create"]
    assert key_entry["targetId"] == created.json["userId"]
    assert key_entry["details"]["via"] == "user.create"
    key_id = key_entry["details"]["keyId"]
    assert len(key_id) == keys.KEY_ID_LENGTH
    assert created.json["apiKey"] not in str(key_entry)  # never key material
    assert not hashlib.sha256(created.json["apiKey"].encode()).hexdigest().startswith(key_id)  # nor its hash
    (stored,) = [i for i in table_items(settings().API_KEYS_TABLE) if i.get("userId") == created.json["userId"]]
    assert stored["keyId"] == key_id  # the key's own stored id


def test_verification_level_change_is_recorded_and_a_refused_change_is_not(api: Api, admin: User, alice: User) -> None:
    changed = api.call("PATCH", f"/v1/admin/users/{alice.user_id}", admin.key, {"verifiedLevel": 2})
    assert changed.status_code == 200
    assert changed.json["verifiedLevel"] == 2
    stale = api.call("PATCH", f"/v1/admin/users/{alice.user_id}", admin.key, {"verifiedLevel": 3},
                     headers={"If-Match": '"1"'})
    assert_error(stale, 412, "PRECONDITION_FAILED")
    assert_error(api.call("PATCH", "/v1/admin/users/usr_ghost", admin.key, {"verifiedLevel": 1}), 404, "NOT_FOUND")
    tag = api.call("GET", "/v1/me", alice.key).headers["ETag"]
    again = api.call("PATCH", f"/v1/admin/users/{alice.user_id}", admin.key, {"verifiedLevel": 2})  # the level she has
    assert (again.status_code, again.json["verifiedLevel"]) == (200, 2)
    assert api.call("GET", "/v1/me", alice.key).headers["ETag"] == tag  # nothing written: another client's If-Match holds
    entries = _log(api, admin)["entries"]
    assert [(e["action"], e["targetId"], e["details"]) for e in entries] == [
        ("user.verification_level", alice.user_id, {"verifiedLevel": 2})
    ]
    assert api.call("GET", "/v1/me", alice.key).json["verifiedLevel"] == 2


def test_approval_and_rejection_are_recorded_with_their_reason(api: Api, admin: User, alice: User, runner: Any) -> None:
    first = create_listing(api, alice)
    second = create_listing(api, alice)
    runner.drain()
    tasks = {t["listingId"]: t["approvalId"] for t in claim(api, admin)}
    assert decide(api, admin, tasks[first["id"]]).status_code == 200
    assert decide(api, admin, tasks[second["id"]], "reject", reason="No salary").status_code == 200
    entries = _log(api, admin)["entries"]
    assert [(e["action"], e["targetId"]) for e in entries] == [
        ("listing.reject", second["id"]), ("listing.approve", first["id"])
    ]  # newest first
    assert entries[0]["details"] == {"version": 1, "reason": "No salary"}
    assert {e["targetType"] for e in entries} == {"listing"}


def test_a_decision_that_fails_its_condition_records_nothing(api: Api, admin: User, alice: User, runner: Any) -> None:
    listing = create_listing(api, alice)
    runner.drain()
    (task,) = claim(api, admin)
    approvals.decide_listing(listing["id"], ApprovalDecision(decision="reject"), admin.user_id)  # decided meanwhile
    assert_error(decide(api, admin, task["approvalId"]), 409, "CONFLICT")
    assert [i["action"] for i in table_items(settings().AUDIT_LOG_TABLE)] == ["listing.reject"]


def test_an_administrators_own_new_and_rolled_keys_are_recorded_a_users_are_not(admin: User, alice: User, api: Api) -> None:
    admin_caller = Caller(admin.user_id, frozenset({ADMIN_SCOPE}))
    made = own_keys.create_key(admin_caller, "ops laptop")
    rolled = own_keys.roll_key(admin_caller, made.key.key_id, "now")
    own_keys.create_key(Caller(alice.user_id), "alice laptop")
    entries = _log(api, admin)["entries"]
    assert [(e["action"], e["actorId"], e["details"]["via"]) for e in entries] == [
        ("admin_key.create", admin.user_id, "key.roll"), ("admin_key.create", admin.user_id, "key.create")
    ]
    assert entries[1]["details"]["keyId"] == made.key.key_id
    assert not keys.hash_key(made.secret).startswith(made.key.key_id)
    assert entries[0]["details"]["keyId"] == rolled.key.key_id != made.key.key_id  # the new key's own id
    assert not keys.hash_key(rolled.secret).startswith(rolled.key.key_id)


def _seed(api: Api, admin: User, other_admin: User, alice: User, bob: User) -> None:
    for actor, target, level in ((admin, alice, 1), (other_admin, alice, 2), (admin, bob, 1), (other_admin, bob, 3)):
        assert api.call("PATCH", f"/v1/admin/users/{target.user_id}", actor.key, {"verifiedLevel": level}).status_code == 200
    assert _create_user(api, admin).status_code == 201


def test_every_filter_combination_selects_exactly_its_entries(api: Api, admin: User, alice: User, bob: User) -> None:
    other = make_user("Second admin", admin=True)
    _seed(api, admin, other, alice, bob)
    everything = _log(api, admin)["entries"]
    assert len(everything) == 5
    assert [e["createdAt"] for e in everything] == sorted((e["createdAt"] for e in everything), reverse=True)
    filters = {"actor": admin.user_id, "action": "user.verification_level", "target": alice.user_id}
    keys = {"actor": "actorId", "action": "action", "target": "targetId"}
    for mask in range(1, 8):
        chosen = {name: value for bit, (name, value) in enumerate(filters.items()) if mask >> bit & 1}
        query = "&".join(f"{k}={v}" for k, v in chosen.items())
        expected = [e["entryId"] for e in everything if all(e[keys[k]] == v for k, v in chosen.items())]
        assert [e["entryId"] for e in _log(api, admin, query)["entries"]] == expected, chosen


def test_pages_follow_the_cursor_and_read_one_query_of_page_size_plus_one(api: Api, admin: User, alice: User, bob: User) -> None:
    other = make_user("Second admin", admin=True)
    _seed(api, admin, other, alice, bob)
    everything = [e["entryId"] for e in _log(api, admin)["entries"]]
    seen: list[str] = []
    query = "pageSize=2"
    while True:
        with counting_reads() as reads:
            page = _log(api, admin, query)
        audit_reads = [c for c in reads.calls if c == "Query"]
        assert len(audit_reads) == 1
        assert reads.by_operation["Query"] <= 3
        seen += [e["entryId"] for e in page["entries"]]
        if page["nextCursor"] is None:
            break
        query = f"pageSize=2&cursor={page['nextCursor']}"
    assert seen == everything


def test_a_cursor_of_other_filters_is_refused(api: Api, admin: User, alice: User, bob: User) -> None:
    other = make_user("Second admin", admin=True)
    _seed(api, admin, other, alice, bob)
    cursor = _log(api, admin, "pageSize=1")["nextCursor"]
    response = api.call("GET", f"/v1/admin/audit-log?pageSize=1&actor={admin.user_id}&cursor={cursor}", admin.key)
    assert_error(response, 400, "VALIDATION_ERROR", "cursor")


@pytest.mark.parametrize(("query", "field"), [
    ("action=user.delete", "action"), ("pageSize=0", "pageSize"), ("actor=", "actor"), ("target=a%7Cb", "target"),
    ("sort=oldest", "sort"),
])
def test_bad_filters_are_validation_errors_naming_the_parameter(api: Api, admin: User, query: str, field: str) -> None:
    assert_error(api.call("GET", f"/v1/admin/audit-log?{query}", admin.key), 400, "VALIDATION_ERROR", field)


def test_only_administrators_read_the_log_and_no_route_changes_it(api: Api, admin: User, alice: User) -> None:
    assert_error(api.call("GET", "/v1/admin/audit-log", alice.key), 403, "FORBIDDEN")
    assert_error(api.call("GET", "/v1/admin/audit-log"), 401, "UNAUTHORIZED")
    _create_user(api, admin)
    (entry,) = _log(api, admin)["entries"]
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        assert api.call(method, "/v1/admin/audit-log", admin.key, {}).status_code in (404, 405)
        assert api.call(method, f"/v1/admin/audit-log/{entry['entryId']}", admin.key, {}).status_code in (403, 404, 405)
    assert _log(api, admin)["entries"] == [entry]


def test_the_dashboards_actions_are_recorded_and_its_audit_page_filters_them(api: Api, admin: User, alice: User) -> None:
    from tests.integration.test_dashboard import signed_in

    b = signed_in(api, admin)
    token = b.csrf("/dashboard/admin/users")
    assert b.post("/dashboard/admin/users", {"csrf_token": token, "display_name": "Carol"}).status_code == 303
    assert b.post("/dashboard/admin/users/verification",
                  {"csrf_token": token, "user_id": alice.user_id, "verified_level": "2"}).status_code == 303
    page = b.get("/dashboard/admin/audit-log")
    assert page.status_code == 200
    assert page.text.index("user.verification_level</td>") < page.text.index("user.create</td>")  # newest first
    assert admin.user_id in page.text
    filtered = b.get(f"/dashboard/admin/audit-log?target={alice.user_id}")
    assert "user.verification_level</td>" in filtered.text
    assert "user.create</td>" not in filtered.text
    refused = b.get(f"/dashboard/admin/audit-log?action=user.delete&target={alice.user_id}")
    assert refused.status_code == 400  # the filters shown again, the error under the action, no entries
    assert 'id="f-action-error"' in refused.text
    assert '<select id="f-action" name="action" aria-invalid="true" aria-describedby="f-action-error" autofocus>' in refused.text
    assert f'value="{alice.user_id}"' in refused.text
    assert "user.verification_level</td>" not in refused.text
    assert signed_in(api, alice).get("/dashboard/admin/audit-log").status_code == 403
