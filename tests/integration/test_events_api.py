"""The events API on in-process moto: every event kind recorded once with the body of its delivery,
filters, cursors and their reads, ownership (404), the 30-day TTL, an event's delivery attempts,
and the operational events of the failure policy and of re-enabling."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import outbox, storage
from chalicelib.saved_searches.events import matched_event_op
from chalicelib.webhooks import repository, service
from chalicelib.webhooks.catalogue import SUPPORTED_EVENTS, ListingMatched
from chalicelib.webhooks.delivery import attempt as delivery
from chalicelib.webhooks.delivery import sender
from chalicelib.webhooks.delivery.attempt import FAILURE_LIMIT
from chalicelib.webhooks.delivery.envelope import Delivery, Event
from chalicelib.webhooks.models import WebhookCreate
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, counting_reads
from tests.integration.request_helpers import active_listing, decide, match_request, profile_request
from tests.integration.webhook_helpers import create_webhook, emit, use_settings
from tests.integration.webhook_receivers import Receiver


def list_events(api: Api, user: User, **params: Any) -> dict[str, Any]:
    """``GET /v1/events`` with ``params`` (asserts 200)."""
    return api.call_json("GET", "/v1/events?" + urlencode(params), user.key)


def walk(api: Api, user: User, **params: Any) -> list[dict[str, Any]]:
    """Every event of a listing, page after page through ``nextCursor``."""
    page = list_events(api, user, **params)
    found = list(page["events"])
    while page["nextCursor"]:
        page = list_events(api, user, **params, cursor=page["nextCursor"])
        found += page["events"]
    return found


def _body_of(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in ("event", "timestamp", "test", "data")}


def _every_event_kind(api: Api, alice: User, bob: User, carol: User, listing_id: str) -> str:
    """Requests decided both ways on alice's listing and profile, a message to her and a saved-search
    match for her; returns the conversation's id."""
    received = match_request(api, bob, listing_id)
    assert received.status_code == 201, received.json
    accepted = decide(api, alice, received.json["requestId"], "ACCEPTED")
    assert accepted.status_code == 200, accepted.json
    other = match_request(api, carol, listing_id)
    assert decide(api, alice, other.json["requestId"], "REJECTED", reason="Filled").status_code == 200
    first = profile_request(api, bob, alice.user_id)
    assert first.status_code == 201, first.json
    assert decide(api, alice, first.json["requestId"], "ACCEPTED").status_code == 200
    second = profile_request(api, carol, alice.user_id)
    assert decide(api, alice, second.json["requestId"], "REJECTED").status_code == 200
    sent = api.call("POST", f"/v1/conversations/{accepted.json['conversationId']}/messages", bob.key, {"content": "Hi Alice"})
    assert sent.status_code == 201, sent.json
    matched = ListingMatched(savedSearchId="ss_1", savedSearchName="Jobs", listingId=listing_id, listingTitle="T",
                             categoryKey="jobs", roleKey="offering", matchedAt=clock.iso())
    storage.transact([matched_event_op(matched, alice.user_id)])
    return str(accepted.json["conversationId"])


def _delivered_by_event(receiver: Receiver, webhook_id: str) -> dict[str, Any]:
    """The bodies ``receiver`` got, by the event id their ``webhook-id`` starts with (the documented
    rule: ``<eventId>_<webhookId>``)."""
    delivered: dict[str, Any] = {}
    for request in receiver.requests:
        header = {k.lower(): v for k, v in request.headers.items()}["webhook-id"]
        event_id, _, suffix = header.partition("_whk_")
        assert f"whk_{suffix}" == webhook_id
        delivered[event_id] = json.loads(request.body)
    return delivered


def _assert_attempts(api: Api, owner: User, event_id: str, healthy_id: str, failing_id: str) -> None:
    """The event's delivery attempts: one to the healthy webhook, five failed ones to the failing one."""
    attempts = api.call("GET", f"/v1/events/{event_id}/deliveries?pageSize=100", owner.key).json
    to_failing = [d for d in attempts["deliveries"] if d["webhookId"] == failing_id]
    assert [d["attempt"] for d in to_failing] == [5, 4, 3, 2, 1]
    assert {(d["success"], d["statusCode"]) for d in to_failing} == {(False, 500)}
    assert [d["webhookId"] for d in attempts["deliveries"]].count(healthy_id) == 1
    past = api.call("GET", f"/v1/events/{event_id}/deliveries?pageSize=2&page=40", owner.key).json
    assert (past["deliveries"], past["total"], past["totalRelation"]) == ([], len(attempts["deliveries"]), "eq")


def test_every_event_kind_is_listed_once_with_the_body_of_its_delivery(
    api: Api, alice: User, bob: User, runner: Any, receivers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 5 attempts per delivery (1 + 4 retries, no delay): one event's failures reach the policy's limit
    use_settings(monkeypatch, WEBHOOK_TIMEOUT_SECONDS="1", WEBHOOK_RETRY_DELAYS_SECONDS="0,0,0,0")
    ok: Receiver = receivers("ok")
    failing: Receiver = receivers("ok", status=500)
    hook = create_webhook(api, alice, ok.url, events=list(SUPPORTED_EVENTS))
    doomed = create_webhook(api, alice, failing.url, events=["message.new"])
    listing = active_listing(api, alice, webhookIds=[hook["id"]])
    _every_event_kind(api, alice, bob, make_user("Carol", country="it"), listing["id"])
    runner.drain()
    assert api.call("GET", "/v1/webhooks", alice.key).json["webhooks"][0]["active"] is False  # the doomed one, newest
    service.set_active(Caller(alice.user_id), doomed["id"], True)  # webhook.enabled
    runner.drain()

    delivered = _delivered_by_event(ok, hook["id"])  # every event, to the healthy webhook
    assert {body["event"] for body in delivered.values()} == set(SUPPORTED_EVENTS)
    listed = walk(api, alice, pageSize=3)
    assert sorted(ids(listed)) == sorted(delivered)  # each event once, none missing
    assert [e["createdAt"] for e in listed] == sorted((e["createdAt"] for e in listed), reverse=True)
    for item in listed:
        assert _body_of(item) == delivered[item["id"]]  # exactly the delivered body
        assert item["createdAt"] == item["timestamp"]
        assert api.call("GET", f"/v1/events/{item['id']}", alice.key).json == item
    [message] = [e for e in listed if e["event"] == "message.new"]
    _assert_attempts(api, alice, message["id"], hook["id"], doomed["id"])
    disabled = next(e for e in listed if e["event"] == "webhook.disabled")["data"]
    assert disabled == {"webhookId": doomed["id"], "name": "API Webhook", "url": failing.url,
                        "disabledReason": "Disabled after 5 consecutive failures", "failCount": 5, "lastFailure": "HTTP 500",
                        "disabledAt": disabled["disabledAt"]}
    # bob's list holds the events whose recipient is bob (the decisions on his requests), none of alice's
    assert not set(ids(walk(api, bob))) & set(ids(listed))


@pytest.fixture
def history(api: Api, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Alice's events one minute apart, oldest first: 3 message.new, 2 match_request.received about
    lst_A, 1 about lst_B, 1 match_request.accepted about lst_A, 1 profile_request.received."""
    start = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    moments = iter(start + timedelta(minutes=i) for i in range(100))
    now = [start]

    def tick() -> datetime:
        return now[0]

    monkeypatch.setattr(clock, "now", tick)
    kinds = [("message.new", None), ("match_request.received", "lst_A"), ("message.new", None),
             ("match_request.received", "lst_B"), ("profile_request.received", None), ("match_request.received", "lst_A"),
             ("message.new", None), ("match_request.accepted", "lst_A")]
    written = []
    for kind, listing in kinds:
        now[0] = next(moments)
        routing: dict[str, Any] = {"recipientId": alice.user_id, "senderId": bob.user_id}
        if listing:
            routing.update(listingId=listing, webhookIds=[])
        written.append(emit(kind, {"n": len(written)}, routing))
    now[0] = start + timedelta(days=1)
    return written


def ids(events: list[dict[str, Any]]) -> list[str]:
    return [e["id"] for e in events]


def newest_first(items: list[dict[str, Any]]) -> list[str]:
    return [i["eventId"] for i in reversed(items)]


def test_cursor_pages_walk_the_list_newest_first(api: Api, alice: User, history: list[dict[str, Any]]) -> None:
    first = list_events(api, alice, pageSize=3)
    assert (first["total"], first["totalRelation"]) == (4, "gte")
    assert ids(walk(api, alice, pageSize=3)) == newest_first(history)
    assert ids(list_events(api, alice, pageSize=3, page=2)["events"]) == newest_first(history)[3:6]
    last = list_events(api, alice, pageSize=100)
    assert (last["total"], last["totalRelation"], last["nextCursor"]) == (8, "eq", None)
    past = list_events(api, alice, pageSize=3, page=5)  # past the end: the events passed over, exactly
    assert (past["events"], past["total"], past["totalRelation"]) == ([], 8, "eq")


def test_type_filters_one_or_several(api: Api, alice: User, history: list[dict[str, Any]]) -> None:
    messages = [i for i in history if i["type"] == "message.new"]
    assert ids(walk(api, alice, type="message.new", pageSize=2)) == newest_first(messages)
    both = [i for i in history if i["type"] in ("message.new", "profile_request.received")]
    assert ids(walk(api, alice, type="message.new,profile_request.received", pageSize=1)) == newest_first(both)
    assert ids(walk(api, alice, type="profile_request.received,message.new", pageSize=2)) == newest_first(both)
    assert list_events(api, alice, type="listing.matched")["events"] == []


def test_listing_filter_selects_its_match_request_events(api: Api, alice: User, history: list[dict[str, Any]]) -> None:
    about_a = [i for i in history if i["routing"].get("listingId") == "lst_A"]
    assert ids(walk(api, alice, listingId="lst_A", pageSize=1)) == newest_first(about_a)
    accepted = [i for i in about_a if i["type"] == "match_request.accepted"]
    assert ids(walk(api, alice, listingId="lst_A", type="match_request.accepted")) == newest_first(accepted)
    assert list_events(api, alice, listingId="lst_A", type="message.new")["events"] == []  # no message is about a listing
    mixed = list_events(api, alice, listingId="lst_A", type="message.new,match_request.accepted")
    assert ids(mixed["events"]) == newest_first(accepted)


def test_created_after_and_before_bound_the_time(api: Api, alice: User, history: list[dict[str, Any]]) -> None:
    after, before = history[2]["createdAt"], history[5]["createdAt"]
    window = [i for i in history if after <= i["createdAt"] < before]
    assert len(window) == 3
    assert ids(walk(api, alice, createdAfter=after, createdBefore=before, pageSize=2)) == newest_first(window)
    assert ids(walk(api, alice, createdAfter="2026-11-20T13:02:00+01:00")) == newest_first(history[2:])
    messages = [i for i in window if i["type"] == "message.new"]
    assert ids(walk(api, alice, createdAfter=after, createdBefore=before, type="message.new")) == newest_first(messages)
    assert list_events(api, alice, createdAfter=before, createdBefore=after)["events"] == []  # an empty interval
    assert list_events(api, alice, createdAfter=after, createdBefore=after)["events"] == []
    assert after.endswith(".000Z")
    assert before.endswith(".000Z")
    between = list_events(api, alice, createdAfter=after.replace(".000Z", ".000999Z"), createdBefore=before.replace(".000Z", ".0005Z"))
    assert ids(between["events"]) == newest_first(history[3:6])  # bounds between milliseconds: the next one
    assert_error(api.call("GET", "/v1/events?createdAfter=2026-11-20T12:00:00", alice.key), 400, "VALIDATION_ERROR",
                 "createdAfter")
    assert_error(api.call("GET", "/v1/events?type=listing.submitted", alice.key), 400, "VALIDATION_ERROR", "type")


def test_a_page_reads_about_its_size_whatever_the_history(api: Api, alice: User, history: list[dict[str, Any]]) -> None:
    for params, partitions in (({"pageSize": 2}, 1), ({"pageSize": 2, "type": "message.new,profile_request.received"}, 2),
                               ({"pageSize": 1, "listingId": "lst_A"}, 3)):
        page = list_events(api, alice, **params)
        with counting_reads() as reads:
            list_events(api, alice, **params, cursor=page["nextCursor"])
        # one Query of at most pageSize + 1 items per partition
        assert reads.calls.count("Query") == partitions, (params, reads.calls)
        assert reads.by_operation["Query"] <= partitions * (params["pageSize"] + 1), (params, reads.by_operation)


def test_a_cursor_of_another_query_or_user_is_refused(api: Api, alice: User, bob: User, history: list[dict[str, Any]]) -> None:
    cursor = list_events(api, alice, pageSize=2)["nextCursor"]
    assert_error(api.call("GET", f"/v1/events?pageSize=2&type=message.new&cursor={cursor}", alice.key), 400,
                 "VALIDATION_ERROR", "cursor")
    assert_error(api.call("GET", f"/v1/events?pageSize=2&cursor={cursor}", bob.key), 400, "VALIDATION_ERROR", "cursor")


def test_another_users_event_is_not_found_like_a_missing_one(api: Api, alice: User, bob: User,
                                                              history: list[dict[str, Any]]) -> None:
    event_id = history[0]["eventId"]
    assert api.call("GET", f"/v1/events/{event_id}", alice.key).status_code == 200
    for path in (f"/v1/events/{event_id}", f"/v1/events/{event_id}/deliveries"):
        mine, missing = api.call("GET", path, bob.key), api.call("GET", path.replace(event_id, "evt_01JD3Q7ZK8M2V9T4R6W1X5Y0BC"), bob.key)
        assert (mine.status_code, missing.status_code) == (404, 404)
        assert mine.json["code"] == missing.json["code"] == "NOT_FOUND"
    internal = emit(outbox.LISTING_SUBMITTED, {"listingId": "lst_A", "version": 1}, {})
    assert api.call("GET", f"/v1/events/{internal['eventId']}", alice.key).status_code == 404
    assert list_events(api, bob)["events"] == []


def test_recorded_events_live_30_days_internal_ones_7(aws: dict[str, str], alice: User) -> None:
    item = emit("message.new", {}, {"recipientId": alice.user_id})
    created = datetime.fromisoformat(item["createdAt"].replace("Z", "+00:00"))
    assert item["expiresAt"] == clock.epoch_seconds(created + timedelta(days=30))
    internal = emit(outbox.LISTING_SUBMITTED, {"listingId": "lst_A", "version": 1}, {})
    created = datetime.fromisoformat(internal["createdAt"].replace("Z", "+00:00"))
    assert internal["expiresAt"] == clock.epoch_seconds(created + timedelta(days=7))
    assert "recipientId" not in internal
    ttl = storage.dynamodb().describe_time_to_live(TableName=settings().EVENTS_TABLE)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expiresAt"


def test_events_older_than_30_days_are_neither_listed_nor_read(
    api: Api, alice: User, history: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    oldest = history[0]
    moment = datetime.fromisoformat(oldest["createdAt"].replace("Z", "+00:00")) + timedelta(days=30, seconds=30)
    monkeypatch.setattr(clock, "now", lambda: moment)
    assert oldest["eventId"] not in ids(walk(api, alice))
    assert len(walk(api, alice)) == len(history) - 1
    assert api.call("GET", f"/v1/events/{oldest['eventId']}", alice.key).status_code == 404


class FakeSender:
    """Replaces ``sender.post``: answers 500 to every attempt."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, url: str, body: bytes, headers: dict[str, str], **_: Any) -> sender.Outcome:
        self.calls += 1
        return sender.Outcome(503, None, 5, "")


def test_the_policy_disabling_a_webhook_writes_exactly_one_webhook_disabled(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeSender()
    monkeypatch.setattr(sender, "post", fake)
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="0,0,0")
    caller = Caller(alice.user_id)
    webhook_id = service.create_webhook(caller, WebhookCreate(url="http://127.0.0.1:9/hook")).id
    for _ in range(FAILURE_LIMIT + 2):  # the 5th failure disables; the later ones are drained
        event = Event(clock.new_id("evt"), "message.new", clock.iso(), {"content": "x"}, {})
        delivery.attempt(Delivery(event, webhook_id))
    assert fake.calls == FAILURE_LIMIT
    # a second disable of the same webhook (a replayed attempt) changes nothing and writes nothing
    assert repository.deactivate(webhook_id, FAILURE_LIMIT, clock.iso(), "HTTP 503") is False
    [disabled] = list_events(api, alice, type="webhook.disabled")["events"]
    assert disabled["data"]["webhookId"] == webhook_id
    assert (disabled["data"]["failCount"], disabled["data"]["lastFailure"]) == (5, "HTTP 503")
    assert disabled["test"] is False

    service.set_active(caller, webhook_id, True)
    service.set_active(caller, webhook_id, True)  # already active: no second event
    [enabled] = list_events(api, alice, type="webhook.enabled")["events"]
    assert enabled["data"]["webhookId"] == webhook_id
    assert (repository.get(webhook_id) or {})["active"] is True
    service.set_active(caller, webhook_id, False)  # the owner's own switch-off is not the policy's
    assert len(list_events(api, alice, type="webhook.disabled")["events"]) == 1


def test_operational_events_are_not_in_the_default_subscription(api: Api, alice: User, receivers: Any) -> None:
    url = receivers("ok").url
    created = create_webhook(api, alice, url)
    assert "webhook.disabled" not in created["events"]
    assert "message.new" in created["events"]
    assert create_webhook(api, alice, url, events=["webhook.disabled"])["events"] == ["webhook.disabled"]
