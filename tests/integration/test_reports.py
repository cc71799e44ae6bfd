"""Reports and moderation: ``POST /v1/reports`` of what the reporter can see, once per subject;
the administrators' queue (open first, filterable, one Query a page) and decisions (``dismiss``,
``hide_listing``: out of search at once), each recorded in the audit log."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, create_listing, cursor_pages
from tests.integration.request_helpers import accepted_conversation, active_listing


def _report(api: Api, user: User, subject_type: str, subject_id: str, reason: str = "spam", **extra: Any) -> Any:
    return api.call("POST", "/v1/reports", user.key, {"subjectType": subject_type, "subjectId": subject_id,
                                                      "reason": reason, **extra})


def _queue(api: Api, admin: User, query: str = "") -> dict[str, Any]:
    return api.call_json("GET", f"/v1/admin/reports{'?' + query if query else ''}", admin.key)


def _decide(api: Api, admin: User, report_id: str, decision: str, reason: str | None = None) -> Any:
    body: dict[str, Any] = {"decision": decision}
    if reason:
        body["reason"] = reason
    return api.call("POST", f"/v1/admin/reports/{report_id}/decision", admin.key, body)


def test_a_user_reports_a_listing_a_profile_and_a_message_once_each(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    _, conversation = accepted_conversation(api, alice, bob)
    sent = api.call("POST", f"/v1/conversations/{conversation}/messages", alice.key, {"content": "rude words"}).json
    made = [
        _report(api, bob, "listing", listing["id"], "scam", note="Asks for a deposit"),
        _report(api, bob, "profile", alice.user_id, "impersonation"),
        _report(api, bob, "message", sent["messageId"], "harassment"),
    ]
    assert [r.status_code for r in made] == [201, 201, 201]
    assert made[0].json["status"] == "open"
    assert made[0].json["note"] == "Asks for a deposit"
    assert "reporterId" not in made[0].json
    again = _report(api, bob, "listing", listing["id"], "spam")
    assert_error(again, 409, "CONFLICT")
    queue = _queue(api, make_user("Mod", admin=True))["reports"]
    assert {(r["subjectType"], r["subjectOwnerId"], r["reporterId"]) for r in queue} == {
        ("listing", alice.user_id, bob.user_id), ("profile", alice.user_id, bob.user_id), ("message", alice.user_id, bob.user_id),
    }


def test_only_what_the_reporter_can_see_is_reported(api: Api, alice: User, bob: User) -> None:
    pending = create_listing(api, alice)  # PENDING: only its owner sees it
    _, conversation = accepted_conversation(api, alice, bob)
    sent = api.call("POST", f"/v1/conversations/{conversation}/messages", alice.key, {"content": "hi"}).json
    carol = make_user("Carol")
    assert_error(_report(api, bob, "listing", pending["id"]), 404, "NOT_FOUND")
    assert_error(_report(api, bob, "listing", "lst_ghost"), 404, "NOT_FOUND")
    assert_error(_report(api, bob, "profile", "usr_ghost"), 404, "NOT_FOUND")
    assert_error(_report(api, carol, "message", sent["messageId"]), 404, "NOT_FOUND")  # not in that conversation
    assert_error(_report(api, alice, "message", sent["messageId"]), 400, "VALIDATION_ERROR", "subjectId")  # own message
    assert_error(_report(api, alice, "profile", alice.user_id), 400, "VALIDATION_ERROR", "subjectId")



def test_a_block_does_not_prevent_a_report(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    assert api.call("PUT", f"/v1/me/blocks/{bob.user_id}", alice.key).status_code == 200
    assert _report(api, bob, "listing", listing["id"], "harassment").status_code == 201
    assert _report(api, alice, "profile", bob.user_id, "harassment").status_code == 201


@pytest.mark.parametrize(("body", "field"), [
    ({"subjectType": "comment", "subjectId": "x", "reason": "spam"}, "subjectType"),
    ({"subjectType": "listing", "subjectId": "x", "reason": "boring"}, "reason"),
    ({"subjectType": "listing", "subjectId": "", "reason": "spam"}, "subjectId"),
    ({"subjectType": "listing", "subjectId": "x", "reason": "spam", "note": "x" * 1001}, "note"),
])
def test_bad_reports_are_validation_errors_naming_the_field(api: Api, alice: User, body: dict[str, Any], field: str) -> None:
    assert_error(api.call("POST", "/v1/reports", alice.key, body), 400, "VALIDATION_ERROR", field)


def test_the_queue_lists_open_reports_first_and_filters(api: Api, admin: User, alice: User, bob: User) -> None:
    listings = [active_listing(api, alice) for _ in range(3)]
    ids = [_report(api, bob, "listing", listing["id"]).json["reportId"] for listing in listings]
    profile = _report(api, bob, "profile", alice.user_id).json["reportId"]
    assert _decide(api, admin, ids[0], "dismiss").status_code == 200
    assert [r["reportId"] for r in _queue(api, admin)["reports"]] == [ids[1], ids[2], profile, ids[0]]
    assert [r["reportId"] for r in _queue(api, admin, "status=open&subjectType=listing")["reports"]] == [ids[1], ids[2]]
    assert [r["reportId"] for r in _queue(api, admin, "status=decided")["reports"]] == [ids[0]]
    assert [r["reportId"] for r in _queue(api, admin, "subjectType=profile")["reports"]] == [profile]
    _queue(api, admin, "pageSize=1")  # warm the key cache
    seen = [r["reportId"] for page in cursor_pages(lambda query: _queue(api, admin, query), 1) for r in page["reports"]]
    assert seen == [ids[1], ids[2], profile, ids[0]]


def test_hiding_takes_the_listing_out_of_search_at_once_and_is_audited(
    api: Api, admin: User, alice: User, bob: User, runner: Any
) -> None:
    listing = active_listing(api, alice)
    runner.drain()
    assert listing["id"] in [i["id"] for i in api.call("GET", "/v1/listings/search?category=jobs", bob.key).json["listings"]]
    report_id = _report(api, bob, "listing", listing["id"], "scam").json["reportId"]
    decided = _decide(api, admin, report_id, "hide_listing", "Deposit scam")
    assert decided.status_code == 200
    assert decided.json["decision"] == "hide_listing"
    assert decided.json["decidedBy"] == admin.user_id
    assert_error(api.call("GET", f"/v1/listings/{listing['id']}", bob.key), 404, "NOT_FOUND")
    assert listing["id"] not in [i["id"] for i in api.call("GET", "/v1/listings/search?category=jobs", bob.key).json["listings"]]
    mine = api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json
    assert (mine["status"], mine["statusReason"]) == ("REJECTED", "Deposit scam")
    (entry,) = api.call("GET", "/v1/admin/audit-log?action=report.hide_listing", admin.key).json["entries"]
    assert (entry["actorId"], entry["targetId"], entry["details"]["listingId"]) == (admin.user_id, report_id, listing["id"])
    assert_error(_decide(api, admin, report_id, "dismiss"), 409, "CONFLICT")  # decided once


def test_dismissal_is_audited_and_hide_applies_to_listings_only(api: Api, admin: User, alice: User, bob: User) -> None:
    report_id = _report(api, bob, "profile", alice.user_id).json["reportId"]
    assert_error(_decide(api, admin, report_id, "hide_listing"), 400, "VALIDATION_ERROR", "decision")
    for decision in ("dismiss", "suspend_user"):  # a reason goes with hide_listing only: never dropped silently
        assert_error(_decide(api, admin, report_id, decision, "fine"), 400, "VALIDATION_ERROR", "reason")
    assert api.call("GET", "/v1/me", alice.key).status_code == 200  # not suspended
    assert _decide(api, admin, report_id, "dismiss").json["status"] == "decided"
    (entry,) = api.call("GET", f"/v1/admin/audit-log?target={report_id}", admin.key).json["entries"]
    assert entry["action"] == "report.dismiss"
    assert_error(_decide(api, admin, "rpt_ghost", "dismiss"), 404, "NOT_FOUND")


def test_only_administrators_see_and_decide_reports(api: Api, alice: User, bob: User) -> None:
    report_id = _report(api, bob, "profile", alice.user_id).json["reportId"]
    assert_error(api.call("GET", "/v1/admin/reports", alice.key), 403, "FORBIDDEN")
    assert_error(_decide(api, alice, report_id, "dismiss"), 403, "FORBIDDEN")


def test_the_dashboards_reports_page_decides_reports(api: Api, admin: User, alice: User, bob: User) -> None:
    from tests.integration.test_dashboard import signed_in

    listing = active_listing(api, alice)
    listing_report = _report(api, bob, "listing", listing["id"], "scam").json["reportId"]
    profile_report = _report(api, bob, "profile", alice.user_id).json["reportId"]
    b = signed_in(api, admin)
    page = b.get("/dashboard/admin/reports")
    assert page.status_code == 200
    assert page.text.index(f'id="rp-{listing_report}"') < page.text.index(f'id="rp-{profile_report}"')
    assert page.text.count(">Hide listing<") == 1  # only the listing report offers it
    token = b.csrf("/dashboard/admin/reports")
    hidden = b.post(f"/dashboard/admin/reports/{listing_report}/decision",
                    {"csrf_token": token, "decision": "hide_listing", "reason": "Scam"})
    assert hidden.status_code == 303
    assert b.get(hidden.headers["Location"]).text.count('role="status"') == 1  # the notice, announced once
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["statusReason"] == "Scam"
    assert b.post(f"/dashboard/admin/reports/{profile_report}/decision",
                  {"csrf_token": token, "decision": "hide_listing"}).status_code == 400
    with_reason = b.post(f"/dashboard/admin/reports/{profile_report}/decision",
                         {"csrf_token": token, "decision": "dismiss", "reason": "Typed"})
    assert with_reason.status_code == 400  # the API's rule: a reason goes with hide_listing only
    assert "reason" in with_reason.text
    assert f'id="rp-{profile_report}"' in b.get("/dashboard/admin/reports?status=open").text
    assert f'id="rp-{listing_report}"' not in b.get("/dashboard/admin/reports?status=open").text
    assert signed_in(api, bob).get("/dashboard/admin/reports").status_code == 403


def test_a_refused_hide_reason_shows_the_queue_again_with_the_reason_kept(api: Api, admin: User, alice: User, bob: User) -> None:
    from tests.integration.test_dashboard import signed_in

    listing = active_listing(api, alice)
    report_id = _report(api, bob, "listing", listing["id"], "scam").json["reportId"]
    b = signed_in(api, admin)
    token = b.csrf("/dashboard/admin/reports")
    for reason, issue in (("Fake \u200e offer", "U+200E"), ("x" * 501, "at most 500 characters")):
        refused = b.post(f"/dashboard/admin/reports/{report_id}/decision",
                         {"csrf_token": token, "decision": "hide_listing", "reason": reason})
        assert refused.status_code == 400
        assert f'id="rp-{report_id}"' in refused.text  # the queue, not an error page
        assert f'<p id="hide-{report_id}-error" class="field-error">reason: ' in refused.text
        assert issue in refused.text
        assert f'value="{reason}" aria-invalid="true" aria-describedby="hide-{report_id}-error" autofocus' in refused.text
    assert _queue(api, admin)["reports"][0]["status"] == "open"  # nothing decided
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["status"] == "ACTIVE"


def test_a_resume_in_flight_when_the_owner_is_suspended_is_refused(api: Api, admin: User, alice: User, bob: User) -> None:
    """The owner's request was authenticated before the suspension committed: its resume holds the
    check that the owner is not suspended, so the listing stays paused."""
    from chalicelib.auth.service import Caller
    from chalicelib.kernel import errors
    from chalicelib.listings import service as listings
    from chalicelib.listings.models import ListingStatusChange

    listing = active_listing(api, alice)
    api.call_json("PATCH", f"/v1/listings/{listing['id']}/status", alice.key, {"status": "PAUSED"}, status=200)
    report_id = _report(api, bob, "profile", alice.user_id, "scam").json["reportId"]
    assert _decide(api, admin, report_id, "suspend_user").status_code == 200
    with pytest.raises(errors.Forbidden):
        listings.change_status(Caller(alice.user_id), listing["id"], ListingStatusChange(status="ACTIVE"))
    assert api.call("GET", f"/v1/admin/users?id={alice.user_id}", admin.key).json["users"][0]["suspendedAt"]
    assert_error(api.call("GET", f"/v1/listings/{listing['id']}", bob.key), 404, "NOT_FOUND")  # still paused


def test_a_suspension_pauses_a_listing_its_owners_list_does_not_show_active_yet(
    api: Api, admin: User, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume committed just before the suspension may not be in the owner's list (a GSI) yet:
    the suspension reads each listing itself, so it pauses what is ACTIVE now."""
    from chalicelib.listings import service as listings

    listing = active_listing(api, alice)
    listed = listings.list_my_listings

    def lagging(*args: Any, **kwargs: Any) -> Any:  # the owner's list a moment behind: the listing still PAUSED
        page = listed(*args, **kwargs)
        return page.model_copy(update={"listings": [item.model_copy(update={"status": "PAUSED"}) for item in page.listings]})

    monkeypatch.setattr(listings, "list_my_listings", lagging)
    report_id = _report(api, bob, "profile", alice.user_id, "scam").json["reportId"]
    assert _decide(api, admin, report_id, "suspend_user").status_code == 200
    monkeypatch.undo()
    assert_error(api.call("GET", f"/v1/listings/{listing['id']}", bob.key), 404, "NOT_FOUND")
    reinstated = api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", admin.key)
    assert reinstated.status_code == 200
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["status"] == "ACTIVE"  # paused by the suspension


def test_suspension_refuses_keys_pauses_listings_disables_webhooks_and_reinstating_undoes_it(
    api: Api, admin: User, alice: User, bob: User
) -> None:
    from chalicelib.auth.service import Caller
    from chalicelib.webhooks import service as webhooks

    active = active_listing(api, alice)
    paused_by_owner = active_listing(api, alice)
    api.call("PATCH", f"/v1/listings/{paused_by_owner['id']}/status", alice.key, {"status": "PAUSED"})
    hook = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/hook", "events": ["message.new"]}).json
    off = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/off", "events": ["message.new"]}).json
    webhooks.set_active(Caller(alice.user_id), off["id"], False)  # the owner's own switch (the Dashboard's)
    report_id = _report(api, bob, "profile", alice.user_id, "scam").json["reportId"]
    decided = _decide(api, admin, report_id, "suspend_user")
    assert decided.status_code == 200
    assert_error(api.call("GET", "/v1/me", alice.key), 401, "UNAUTHORIZED")
    assert_error(api.call("GET", f"/v1/listings/{active['id']}", bob.key), 404, "NOT_FOUND")  # paused: out of search
    actions = [e["action"] for e in api.call("GET", f"/v1/admin/audit-log?actor={admin.user_id}", admin.key).json["entries"]]
    assert sorted(actions[:2]) == ["report.suspend_user", "user.suspend"]  # one transaction

    reinstated = api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", admin.key)
    assert reinstated.status_code == 200
    assert reinstated.json == {"userId": alice.user_id, "reinstated": True}
    assert api.call("GET", "/v1/me", alice.key).status_code == 200
    assert api.call("GET", f"/v1/listings/{active['id']}", bob.key).json["status"] == "ACTIVE"
    assert api.call("GET", f"/v1/listings/{paused_by_owner['id']}", alice.key).json["status"] == "PAUSED"  # the owner's pause stays
    states = {w["id"]: w["active"] for w in api.call("GET", "/v1/webhooks", alice.key).json["webhooks"]}
    assert states == {hook["id"]: True, off["id"]: False}
    assert_error(api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", admin.key), 409, "CONFLICT")
    assert api.call("GET", f"/v1/admin/audit-log?action=user.reinstate&target={alice.user_id}", admin.key).json["entries"]


def test_a_dashboard_session_ended_by_a_suspension_stays_ended_after_the_reinstatement(
    api: Api, admin: User, alice: User, bob: User
) -> None:
    from tests.integration.test_dashboard import signed_in

    before = signed_in(api, alice)
    assert before.get("/dashboard/api-keys").status_code == 200
    assert _decide(api, admin, _report(api, bob, "profile", alice.user_id, "scam").json["reportId"], "suspend_user").status_code == 200
    assert before.get("/dashboard/api-keys").status_code == 303  # to the sign-in page
    assert api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", admin.key).status_code == 200
    assert api.call("GET", "/v1/me", alice.key).status_code == 200  # the key works again for the API
    assert before.get("/dashboard/api-keys").status_code == 303  # not for the browser signed in before
    assert signed_in(api, alice).get("/dashboard/api-keys").status_code == 200  # a new sign-in does


def test_a_hidden_listing_stays_down_whether_paused_by_its_owner_or_by_a_suspension(
    api: Api, admin: User, alice: User, bob: User
) -> None:
    paused = active_listing(api, alice)
    report_id = _report(api, bob, "listing", paused["id"], "scam").json["reportId"]
    assert api.call("PATCH", f"/v1/listings/{paused['id']}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    hidden = _decide(api, admin, report_id, "hide_listing", "Scam")
    assert hidden.status_code == 200
    assert_error(api.call("PATCH", f"/v1/listings/{paused['id']}/status", alice.key, {"status": "ACTIVE"}), 409, "CONFLICT")
    mine = api.call("GET", f"/v1/listings/{paused['id']}", alice.key).json
    assert (mine["status"], mine["statusReason"]) == ("REJECTED", "Scam")

    suspended_listing = active_listing(api, alice)
    listing_report = _report(api, bob, "listing", suspended_listing["id"], "scam").json["reportId"]
    assert _decide(api, admin, _report(api, bob, "profile", alice.user_id).json["reportId"], "suspend_user").status_code == 200
    assert _decide(api, admin, listing_report, "hide_listing").status_code == 200  # PAUSED by the suspension
    assert api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", admin.key).status_code == 200
    after = api.call("GET", f"/v1/listings/{suspended_listing['id']}", alice.key).json
    assert (after["status"], after["statusReason"]) == ("REJECTED", "Hidden by a moderator")
    assert_error(api.call("GET", f"/v1/listings/{suspended_listing['id']}", bob.key), 404, "NOT_FOUND")


def test_a_suspension_refused_because_the_owner_is_gone_leaves_the_report_open_and_unaudited(
    api: Api, admin: User, alice: User, bob: User, runner: Any
) -> None:
    report_id = _report(api, bob, "profile", alice.user_id).json["reportId"]
    api.call_json("DELETE", "/v1/me", alice.key, status=202)
    runner.drain()  # the erasure completes: the user is gone
    assert_error(_decide(api, admin, report_id, "suspend_user"), 404, "NOT_FOUND")
    (report,) = [r for r in _queue(api, admin)["reports"] if r["reportId"] == report_id]
    assert (report["status"], report["decision"]) == ("open", None)
    assert api.call("GET", f"/v1/admin/audit-log?target={report_id}", admin.key).json["entries"] == []
    assert _decide(api, admin, report_id, "dismiss").status_code == 200  # still decidable


def test_webhooks_are_disabled_while_suspended(api: Api, admin: User, alice: User, bob: User) -> None:
    from chalicelib.auth.service import Caller
    from chalicelib.webhooks import service as webhooks

    hook = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/hook", "events": ["message.new"]}).json
    report_id = _report(api, bob, "profile", alice.user_id).json["reportId"]
    _decide(api, admin, report_id, "suspend_user")
    assert [w.active for w in webhooks.list_webhooks(Caller(alice.user_id)).webhooks if w.id == hook["id"]] == [False]
    assert_error(api.call("POST", f"/v1/admin/users/{bob.user_id}/reinstate", admin.key), 409, "CONFLICT")
    assert_error(api.call("POST", "/v1/admin/users/usr_ghost/reinstate", admin.key), 404, "NOT_FOUND")
    assert_error(api.call("POST", f"/v1/admin/users/{alice.user_id}/reinstate", bob.key), 403, "FORBIDDEN")


def test_the_dashboard_suspends_from_a_report_and_reinstates_from_the_users_list(
    api: Api, admin: User, alice: User, bob: User
) -> None:
    from tests.integration.test_dashboard import signed_in

    report_id = _report(api, bob, "profile", alice.user_id, "scam").json["reportId"]
    b = signed_in(api, admin)
    token = b.csrf("/dashboard/admin/reports")
    assert ">Suspend the owner<" in b.get("/dashboard/admin/reports").text
    assert b.post(f"/dashboard/admin/reports/{report_id}/decision",
                  {"csrf_token": token, "decision": "suspend_user"}).status_code == 303
    assert api.call("GET", "/v1/me", alice.key).status_code == 401
    row = b.get("/dashboard/admin/users?q=alice").text
    assert "Suspended since" in row
    reinstated = b.post(f"/dashboard/admin/users/{alice.user_id}/reinstate", {"csrf_token": token})
    assert reinstated.status_code == 303
    assert '<p class="notice" role="status">User reinstated: ' in b.get(reinstated.headers["Location"]).text
    assert api.call("GET", "/v1/me", alice.key).status_code == 200
    assert "Suspended since" not in b.get("/dashboard/admin/users?q=alice").text
    listed = api.call("GET", f"/v1/admin/users?id={alice.user_id}", admin.key).json["users"]
    assert listed[0]["suspendedAt"] is None
