"""DynamoDB calls per route of the seeker, sourcing and management flows ("Performance").

Runs the app on in-process moto (``moto.mock_aws``) behind Chalice's test client, walks the
flows once (listing detail, profile detail, create request, accept, send message, list
conversations, list messages, the owner's listings, the administrators' review queue, user
creation, verification levels, audit log and user list, and the other request/conversation routes) and
counts every DynamoDB call each route makes with a botocore ``before-call.dynamodb`` hook on the
product's shared client. Authentication is warmed up first and its key lookups are left out, and
so is the rate limiter's bucket write (the edge's, not the route's: one UpdateItem per request
whatever the route, shown in the ``bucket`` column; the limiter is on with limits raised out
of the way, ``tests/limits.py``). A daily quota counter is an item of the route's own transaction, so it adds
no call.

Budgets (``--check`` exits 1 when one is missed):

* a read route makes at most 2 DynamoDB calls and writes nothing (the review queue 3: one Query per
  write shard of its index and the owners);
* a state change makes exactly one TransactWriteItems, no other write, and at most one read
  (marking a conversation read up to a message that is not its newest: 3, ``MARKER_READ_BUDGET``);
* ``GET /v1/me/unread`` makes exactly one read (a counter item);
* ``DELETE /v1/me`` (the account erasure's start) is a state change: one Query of the caller's
  keys and one transaction (the erasure record, the user item's step, the audit entry, the first
  round's event and every key's deletion); the rounds that follow run on the outbox stream, not
  in the request;
* every request, besides, makes exactly one rate-limit bucket write (``bucket``) and no bucket read;
* the events routes also hold an *items* budget (the ``items`` column: items DynamoDB examined, a
  Query's ``ScannedCount``, one per GetItem found): a page of ``GET /v1/events`` reads at most
  ``pageSize + 1`` items per index partition it merges (one without ``type``, one per event name
  of ``type``, three with ``listingId``) whatever the owner's history, one event is one item, and
  a page of an event's deliveries reads the event and ``pageSize + 1`` attempts.

Rows marked ``info`` have no budget: profile search (one Query per index partition it reads),
deleting a listing that has requests (it also Queries them, and rejects more than 31
pending ones in further transactions), the account export (one page read per 100 items of the
user's own data in each domain), blocking (the user, the block's transaction, the blocked
user's pending requests, and one decision per request to the blocker) and unblocking (two
consistent reads and one transaction).

Calls are what carries over to DynamoDB; moto's latencies do not, so none are reported. The data
is deliberately not tiny (many requests, conversations and messages per user) so that a route
whose calls grow with the data would show it.

Usage, from the repository root: ``python bench/requests.py [--check]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path, and this module's name would then
# shadow the ``requests`` package that moto imports: put the repository root there instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))
# EMF metric lines (chalicelib.telemetry.metrics) would drown the table: the stacks and workers started here inherit this.
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")  # and so would one access-log line per request

from bench.proxy import items_read  # noqa: E402  (after the path set-up above)

READ_OPERATIONS = {"GetItem", "BatchGetItem", "Query", "Scan"}
TRANSACTION = "TransactWriteItems"
READ_BUDGET = 2
CHANGE_READ_BUDGET = 1
#: The review queue's read budget: one Query per ``pendingReview`` write shard (2, docs/capacity.md)
#: and the owners' BatchGetItem; still independent of the queue's length.
REVIEW_QUEUE_READ_BUDGET = 3
#: Marking a conversation read up to a message that is not its newest: the conversation and the
#: caller's member item (one BatchGetItem), the message's number (one Query of a keys-only index)
#: and the other party's messages after it (one Query, its items the unread count's answer).
MARKER_READ_BUDGET = 3


@dataclass
class Counter:
    """Every DynamoDB operation the product's client sends, in order (key lookups and bucket writes excluded)."""

    keys_table: str
    rate_limits_table: str
    calls: list[tuple[str, str]] = field(default_factory=list)
    #: Items the route's reads examined (``ScannedCount`` of a Query, one per GetItem found, the
    #: items of a BatchGetItem).
    items: int = 0
    #: The rate limiter's bucket writes (one UpdateItem per admitted request), shown apart from the route's calls.
    bucket_writes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hook(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        body = json.loads(params.get("body") or b"{}")
        tables = body.get("TableName") or ",".join(body.get("RequestItems", {})) or "*"
        # botocore hands the same request context to this call's after-call hook (:meth:`after`).
        # A key lookup is a GetItem of the key (and its lastUsedAt an UpdateItem); a route's own use of
        # the keys table (the erasure's Query of the caller's keys) counts as the route's.
        lookup = tables == self.keys_table and model.name in ("GetItem", "UpdateItem")
        params.setdefault("context", {})["bench_route_read"] = not lookup and tables != self.rate_limits_table
        if lookup:
            return
        if tables == self.rate_limits_table:
            with self.lock:  # any other operation on the table (a read) is a route call and fails the budget
                if model.name == "UpdateItem":
                    self.bucket_writes += 1
                    return
                self.calls.append((model.name, tables))
            return
        with self.lock:
            self.calls.append((model.name, tables))

    def after(self, model: Any, parsed: dict[str, Any], context: dict[str, Any] | None = None, **_: Any) -> None:
        """``after-call`` hook: add the items a read of the route examined (key lookups and buckets excluded)."""
        if model.name not in READ_OPERATIONS or not (context or {}).get("bench_route_read"):
            return
        read = items_read(model.name, parsed)
        with self.lock:
            self.items += read


@dataclass
class Row:
    """One measured route."""

    label: str
    kind: str  # "read", "change" or "info" (no budget)
    status: int
    calls: list[tuple[str, str]]
    bucket_writes: int = 0
    read_budget: int = READ_BUDGET
    items: int = 0
    #: Most items the route's reads may examine; ``None``: not budgeted.
    items_budget: int | None = None
    change_read_budget: int = CHANGE_READ_BUDGET

    @property
    def reads(self) -> int:
        return sum(1 for op, _ in self.calls if op in READ_OPERATIONS)

    @property
    def transactions(self) -> int:
        return sum(1 for op, _ in self.calls if op == TRANSACTION)

    @property
    def other_writes(self) -> int:
        return len(self.calls) - self.reads - self.transactions

    @property
    def scans(self) -> int:
        return sum(1 for op, _ in self.calls if op == "Scan")

    def budget(self) -> str:
        calls = {"read": f"<= {self.read_budget} calls", "change": f"1 txn + <= {self.change_read_budget} read", "info": "-"}[self.kind]
        return calls + (f", <= {self.items_budget} items" if self.items_budget is not None else "")

    def ok(self) -> bool:
        if self.status >= 400 or self.scans or self.bucket_writes != 1:
            return False
        if self.items_budget is not None and self.items > self.items_budget:
            return False
        if self.kind == "read":
            return self.transactions == 0 and self.other_writes == 0 and len(self.calls) <= self.read_budget
        if self.kind == "change":
            return self.transactions == 1 and self.other_writes == 0 and self.reads <= self.change_read_budget
        return True


class Session:
    """The app behind Chalice's test client, the DynamoDB call counter, and the rows measured so far."""

    def __init__(self, client: Any, counter: Counter) -> None:
        self.client = client
        self.counter = counter
        self.rows: list[Row] = []

    def call(self, method: str, path: str, key: str, body: Any = None) -> tuple[int, Any]:
        """One request with ``key`` as the bearer; ``(status, JSON body or None)``."""
        headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
        payload = json.dumps(body).encode() if body is not None else b""
        response = getattr(self.client.http, method.lower())(path, headers=headers, body=payload)
        return response.status_code, (json.loads(response.body) if response.body else None)

    def measure(self, label: str, kind: str, method: str, path: str, key: str, body: Any = None,
                read_budget: int = READ_BUDGET, items_budget: int | None = None,
                change_read_budget: int = CHANGE_READ_BUDGET) -> Any:
        """One request counted as a row of the table; returns its JSON body."""
        counter = self.counter
        counter.calls.clear()
        counter.bucket_writes = 0
        counter.items = 0
        status, result = self.call(method, path, key, body)
        self.rows.append(Row(label, kind, status, list(counter.calls), counter.bucket_writes, read_budget, counter.items,
                             items_budget, change_read_budget))
        return result

    def setup(self, method: str, path: str, key: str, body: Any = None) -> Any:
        """One request that builds data (not counted); exits when it fails."""
        status, result = self.call(method, path, key, body)
        if status >= 400:
            raise SystemExit(f"setup call {method} {path} failed: {status} {result}")
        return result


@dataclass
class People:
    """The users of the flows, as ``(userId, apiKey)`` pairs or API keys."""

    owner_id: str
    owner: str
    seeker: str
    others: list[tuple[str, str]]
    admin: str


def _user(name: str, level: int = 0, admin: bool = False) -> tuple[str, str]:
    from chalicelib.users.models import AdminUserCreate
    from chalicelib.users.service import create_user

    channels = {"telegram": f"@{name.lower()}", "email": f"{name.lower()}@example.org"}
    created = create_user(AdminUserCreate(displayName=name, country="de", verifiedLevel=level, channels=channels, admin=admin))
    return created.userId, created.apiKey


def _people(s: Session) -> People:
    owner_id, owner = _user("Olivia")
    people = People(owner_id, owner, _user("Sam", level=2)[1], [_user(f"Peer{i}") for i in range(30)], _user("Ada", admin=True)[1])
    for key in (owner, people.seeker, people.admin, *(k for _, k in people.others)):
        s.setup("GET", "/v1/me", key)  # warm the key cache: the budgets count calls after authentication
    return people


#: The listing the flows create (an owner's job posting in Berlin).
LISTING = {
    "categoryKey": "jobs", "roleKey": "hiring", "channels": ["telegram"],
    "meta": {"title": "Backend engineer", "description": "<p>APIs</p>", "location": "Berlin",
             "location_lat": "52.52", "location_lng": "13.405", "employmentType": "full_time"},
}


def _approved_listing(s: Session, owner: str) -> str:
    from chalicelib.kernel import clock
    from chalicelib.listings import repository as listings
    from chalicelib.listings.status import Transition

    listing = s.setup("POST", "/v1/listings", owner, LISTING)
    listings.transition(listings.get(listing["id"]) or {}, Transition.APPROVE, clock.iso())
    return str(listing["id"])


def request_flows(s: Session, p: People) -> tuple[str, str, str]:
    """The seeker's and the owner's flows around one listing; ``(listingId, requestId, conversationId)``."""
    lid = _approved_listing(s, p.owner)
    # Volume: 30 other requests to the listing, 30 accepted into conversations with the owner.
    for _, key in p.others:
        request = s.setup("POST", "/v1/match-requests", key, {"listingId": lid, "message": "hi", "channels": ["email"]})
        s.setup("PATCH", f"/v1/match-requests/{request['requestId']}/status", p.owner, {"status": "ACCEPTED"})
    s.measure("GET listing detail (no request yet)", "read", "GET", f"/v1/listings/{lid}", p.seeker)
    s.measure("GET profile detail", "read", "GET", f"/v1/profiles/{p.owner_id}", p.seeker)
    request = s.measure("POST create match request", "change", "POST", "/v1/match-requests", p.seeker,
                        {"listingId": lid, "message": "I would like to apply", "channels": ["telegram", "email"]})
    s.measure("GET listing detail (with myRequest)", "read", "GET", f"/v1/listings/{lid}", p.seeker)
    accepted = s.measure("PATCH accept request", "change", "PATCH", f"/v1/match-requests/{request['requestId']}/status",
                         p.owner, {"status": "ACCEPTED"})
    conversation = accepted["conversationId"]
    for i in range(60):
        s.setup("POST", f"/v1/conversations/{conversation}/messages", p.owner if i % 2 else p.seeker, {"content": f"message {i}"})
    s.measure("POST send message", "change", "POST", f"/v1/conversations/{conversation}/messages", p.seeker,
              {"content": "See you on Monday"})
    s.measure("GET list conversations (unread counts)", "read", "GET", "/v1/conversations", p.owner)
    s.measure("GET my unread total", "read", "GET", "/v1/me/unread", p.owner, read_budget=1)
    messages = s.setup("GET", f"/v1/conversations/{conversation}/messages?page=3&pageSize=20", p.owner)["messages"]
    s.measure("POST mark read (up to a message)", "change", "POST", f"/v1/conversations/{conversation}/read", p.owner,
              {"messageId": messages[0]["messageId"]}, change_read_budget=MARKER_READ_BUDGET)
    s.measure("POST mark read (up to the newest)", "change", "POST", f"/v1/conversations/{conversation}/read", p.owner, {})
    s.measure("GET list messages (page 2)", "read", "GET", f"/v1/conversations/{conversation}/messages?page=2&pageSize=20", p.owner)
    profile_request = s.measure("POST create profile request", "change", "POST", "/v1/profile-requests", p.seeker,
                                {"userId": p.others[0][0], "message": "Hello", "channel": "email"})
    s.measure("PATCH reject request", "change", "PATCH", f"/v1/match-requests/{profile_request['requestId']}/status",
              p.others[0][1], {"status": "REJECTED", "reason": "not now"})
    s.measure("GET my requests", "read", "GET", "/v1/match-requests/mine", p.seeker)
    s.measure("GET incoming requests", "read", "GET", "/v1/match-requests/incoming", p.owner)
    s.measure("GET requests of a listing", "read", "GET", f"/v1/match-requests/listing/{lid}", p.owner)
    return lid, request["requestId"], conversation


def admin_flows(s: Session, p: People) -> None:
    """The owner's listing pages, the review queue, the audit log and the administrators' user list."""
    for i in range(25):  # volume for the owner's list: a page must not read every listing
        s.setup("POST", "/v1/listings", p.owner, {**LISTING, "meta": {**LISTING["meta"], "title": f"Listing {i}"}})
    first_page = s.measure("GET my listings", "read", "GET", "/v1/listings/mine?pageSize=10", p.owner)
    s.measure("GET my listings (page 2, cursor)", "read", "GET",
              f"/v1/listings/mine?pageSize=10&cursor={first_page['nextCursor']}", p.owner)
    queue = s.measure("GET approvals queue", "read", "GET", "/v1/admin/approvals?pageSize=10", p.admin,
                      read_budget=REVIEW_QUEUE_READ_BUDGET)
    s.measure("GET approvals queue (page 2, cursor)", "read", "GET",
              f"/v1/admin/approvals?pageSize=10&cursor={queue['nextCursor']}", p.admin, read_budget=REVIEW_QUEUE_READ_BUDGET)
    # The audit log: administrator actions (each one transaction with its entry) and its pages.
    s.measure("POST create user (admin)", "change", "POST", "/v1/admin/users", p.admin, {"displayName": "Created", "verifiedLevel": 1})
    for i, (peer_id, _) in enumerate(p.others):  # volume: a page must not read the whole log
        s.setup("PATCH", f"/v1/admin/users/{peer_id}", p.admin, {"verifiedLevel": i % 4})
    peer = p.others[0][0]
    s.measure("PATCH verification level", "change", "PATCH", f"/v1/admin/users/{peer}", p.admin, {"verifiedLevel": 3})
    log = s.measure("GET audit log", "read", "GET", "/v1/admin/audit-log?pageSize=10", p.admin)
    s.measure("GET audit log (page 2, cursor)", "read", "GET", f"/v1/admin/audit-log?pageSize=10&cursor={log['nextCursor']}", p.admin)
    s.measure("GET audit log (actor + action)", "read", "GET",
              f"/v1/admin/audit-log?pageSize=10&actor={peer}&action=user.verification_level", p.admin)
    s.measure("GET audit log (target)", "read", "GET", f"/v1/admin/audit-log?target={peer}", p.admin)
    users_page = s.measure("GET admin users", "read", "GET", "/v1/admin/users?pageSize=10", p.admin)
    s.measure("GET admin users (page 2, cursor)", "read", "GET",
              f"/v1/admin/users?pageSize=10&cursor={users_page['nextCursor']}", p.admin)
    s.measure("GET admin users (q + country + level)", "read", "GET", "/v1/admin/users?q=peer&country=de&verifiedLevel=1", p.admin)
    s.measure("GET admin users (id)", "read", "GET", f"/v1/admin/users?id={p.owner_id}", p.admin)


def safety_flows(s: Session, p: People, lid: str) -> None:
    """Blocks, reports and their queue, the account export and an account erasure."""
    from chalicelib.auth import own_keys
    from chalicelib.auth.service import Caller

    for peer_id, _ in p.others[20:]:  # volume for the block list: a page must not read every block
        s.setup("PUT", f"/v1/me/blocks/{peer_id}", p.seeker)
    blocked = p.others[19][0]
    s.measure("PUT block a user", "info", "PUT", f"/v1/me/blocks/{blocked}", p.seeker)
    blocks = s.measure("GET my blocks", "read", "GET", "/v1/me/blocks?pageSize=5", p.seeker)
    s.measure("GET my blocks (page 2, cursor)", "read", "GET", f"/v1/me/blocks?pageSize=5&cursor={blocks['nextCursor']}", p.seeker)
    s.measure("DELETE unblock a user", "info", "DELETE", f"/v1/me/blocks/{blocked}", p.seeker)
    for _, key in p.others[:12]:  # volume for the moderation queue
        s.setup("POST", "/v1/reports", key, {"subjectType": "profile", "subjectId": p.owner_id, "reason": "spam"})
    report = s.measure("POST report a listing", "change", "POST", "/v1/reports", p.seeker,
                       {"subjectType": "listing", "subjectId": lid, "reason": "scam"})
    queue_page = s.measure("GET reports queue", "read", "GET", "/v1/admin/reports?pageSize=5", p.admin)
    s.measure("GET reports queue (page 2, cursor)", "read", "GET",
              f"/v1/admin/reports?pageSize=5&cursor={queue_page['nextCursor']}", p.admin)
    s.measure("GET reports queue (open listings)", "read", "GET", "/v1/admin/reports?status=open&subjectType=listing", p.admin)
    s.measure("POST decide report (dismiss)", "change", "POST", f"/v1/admin/reports/{report['reportId']}/decision", p.admin,
              {"decision": "dismiss"})
    s.measure("GET account export", "info", "GET", "/v1/me/export", p.seeker)
    leaver_id, leaver = _user("Lea")
    s.setup("GET", "/v1/me", leaver)
    own_keys.create_key(Caller(leaver_id), "second")  # two keys: deleted in the erasure's one transaction
    s.measure("DELETE /v1/me (start the erasure)", "change", "DELETE", "/v1/me", leaver)
    s.measure("GET admin erasure", "read", "GET", f"/v1/admin/erasures/{leaver_id}", p.admin)
    s.measure("POST resume an erasure (admin)", "change", "POST", f"/v1/admin/erasures/{leaver_id}/resume", p.admin)


def closing_flows(s: Session, p: People, request_id: str, conversation: str) -> None:
    """One request and one conversation, leaving it, deleting listings, the events routes and profile search."""
    s.measure("GET one request", "read", "GET", f"/v1/match-requests/{request_id}", p.seeker)
    s.measure("GET conversation detail", "read", "GET", f"/v1/conversations/{conversation}", p.seeker)
    s.measure("DELETE leave conversation", "change", "DELETE", f"/v1/conversations/{conversation}", p.seeker)
    quiet = s.setup("POST", "/v1/listings", p.owner, LISTING)
    s.measure("DELETE listing (no requests)", "change", "DELETE", f"/v1/listings/{quiet['id']}", p.owner)
    busy = _approved_listing(s, p.owner)
    for _, key in p.others[:5]:
        s.setup("POST", "/v1/match-requests", key, {"listingId": busy, "message": "hi", "channels": ["email"]})
    s.measure("DELETE listing (5 pending requests)", "info", "DELETE", f"/v1/listings/{busy}", p.owner)
    measure_events(s.measure, p.owner, p.owner_id)
    s.measure("GET profile search (8 shards)", "info", "GET", "/v1/profiles/search?q=peer", p.seeker)
    s.measure("GET profile search (country)", "info", "GET", "/v1/profiles/search?country=de&q=peer", p.seeker)


def print_table(rows: list[Row], check: bool) -> int:
    """Print the rows and the summary line; 1 when ``check`` and a budgeted row is over its budget."""
    print(f"{'route':<44} {'kind':<6} {'status':>6} {'calls':>5} {'reads':>5} {'items':>5} {'txns':>4} {'bucket':>6}  "
          f"{'budget':<30} result  operations")
    for row in rows:
        operations = " ".join(op for op, _ in row.calls)
        print(f"{row.label:<44} {row.kind:<6} {row.status:>6} {len(row.calls):>5} {row.reads:>5} {row.items:>5} "
              f"{row.transactions:>4} {row.bucket_writes:>6}  "
              f"{row.budget():<30} {'OK' if row.ok() else 'OVER':<6}  {operations}")
    budgeted = [r for r in rows if r.kind != "info"]
    failed = [r for r in budgeted if not r.ok()]
    worst_read = max(len(r.calls) for r in budgeted if r.kind == "read" and r.read_budget == READ_BUDGET)
    worst_change = max(r.reads for r in budgeted if r.kind == "change" and r.change_read_budget == CHANGE_READ_BUDGET)
    print(
        f"summary: {len(budgeted) - len(failed)}/{len(budgeted)} budgeted routes within budget; reads max {worst_read} calls "
        f"(budget {READ_BUDGET}; the review queue {REVIEW_QUEUE_READ_BUDGET}), "
        f"changes 1 transaction + max {worst_change} read (budget {CHANGE_READ_BUDGET}), "
        f"scans {sum(r.scans for r in rows)} -> {'OK' if not failed else 'OVER: ' + ', '.join(r.label for r in failed)}"
    )
    return 1 if failed and check else 0


def run(check: bool) -> int:
    """Build the data, measure the routes, print the table and the summary line."""
    from chalice.test import Client

    from chalicelib.auth.service import clear_cache
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage
    from local_stack.resources import create_resources
    from tests.limits import HIGH_LIMITS

    os.environ.update(create_resources())
    os.environ.update(HIGH_LIMITS)
    settings.cache_clear()
    storage.client.cache_clear()
    clear_cache()
    from app import app

    counter = Counter(settings().API_KEYS_TABLE, settings().RATE_LIMITS_TABLE)
    storage.dynamodb().meta.events.register("before-call.dynamodb", counter.hook)
    storage.dynamodb().meta.events.register("after-call.dynamodb", counter.after)
    with Client(app) as client:
        s = Session(client, counter)
        people = _people(s)
        lid, request_id, conversation = request_flows(s, people)
        admin_flows(s, people)
        safety_flows(s, people, lid)
        closing_flows(s, people, request_id, conversation)
    return print_table(s.rows, check)


#: Page size of the events rows.
EVENTS_PAGE = 10


def measure_events(measure: Callable[..., Any], owner: str, owner_id: str) -> None:
    """The events routes on the owner's history (the events of every request, decision and message
    of the flows above), with 25 logged attempts of one event to five webhooks."""
    from chalicelib.kernel import clock
    from chalicelib.webhooks import signing
    from chalicelib.webhooks.delivery import attempt_log

    size = EVENTS_PAGE
    first = measure("GET events", "read", "GET", f"/v1/events?pageSize={size}", owner, items_budget=size + 1)
    measure("GET events (page 2, cursor)", "read", "GET", f"/v1/events?pageSize={size}&cursor={first['nextCursor']}", owner,
            items_budget=size + 1)
    two = "match_request.received,message.new"
    typed = measure("GET events (2 types)", "read", "GET", f"/v1/events?pageSize={size}&type={two}", owner,
                    items_budget=2 * (size + 1))
    measure("GET events (2 types, cursor)", "read", "GET", f"/v1/events?pageSize={size}&type={two}&cursor={typed['nextCursor']}",
            owner, items_budget=2 * (size + 1))
    listing_id = next(e["data"]["listingId"] for e in first["events"] if e["event"].startswith("match_request."))
    measure("GET events (listingId: 3 partitions)", "read", "GET", f"/v1/events?pageSize={size}&listingId={listing_id}", owner,
            read_budget=3, items_budget=3 * (size + 1))
    event = first["events"][0]
    measure("GET one event", "read", "GET", f"/v1/events/{event['id']}", owner, items_budget=1)
    for attempt in range(1, 6):
        for webhook in range(5):
            webhook_id = f"whk_bench{webhook}"
            attempt_log.log_attempt(webhook_id, {
                "deliveryId": clock.new_id("dlv"), "eventId": event["id"], "event": event["event"], "attempt": attempt,
                "attemptedAt": clock.iso(), "messageId": signing.message_id(event["id"], webhook_id), "success": False,
                "statusCode": 503, "durationMs": 5, "test": False,
            })
    deliveries = measure("GET event deliveries", "read", "GET", f"/v1/events/{event['id']}/deliveries?pageSize={size}", owner,
                         items_budget=1 + size + 1)
    measure("GET event deliveries (cursor)", "read", "GET",
            f"/v1/events/{event['id']}/deliveries?pageSize={size}&cursor={deliveries['nextCursor']}", owner,
            items_budget=1 + size + 1)


def main(argv: list[str] | None = None, run_: Callable[[bool], int] = run) -> int:
    """Parse the arguments and run the benchmark on a fresh in-process moto."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a route is over its budget")
    args = parser.parse_args(argv)
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_SESSION_TOKEN": "bench",
                       "AWS_DEFAULT_REGION": "us-east-1", "ALLOW_INSECURE_WEBHOOKS": "true"})
    os.environ.pop("AWS_ENDPOINT_URL", None)
    os.environ.pop("AWS_PROFILE", None)
    from moto import mock_aws

    with mock_aws():
        return run_(args.check)


if __name__ == "__main__":
    sys.exit(main())
