"""Small helpers shared by the integration tests: listing bodies, approval shortcuts, error assertions,
AWS call counting and direct reads of tables and queues (test-only; the product never scans)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import hypothesis
import pytest
from chalice.test import Client

from bench.proxy import items_read
from chalicelib.approvals.service import decode_approval_id
from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from tests.integration.aws_session import Resources
from tests.integration.conftest import Api, User, fresh_aws, make_user
from tests.listing_bodies import listing_body


def moto_examples(count: int) -> int:
    """The examples a property test on moto draws: ``count`` in ``make test`` (the ``deterministic``
    profile, 100 examples for a pure property), the same share of the profile's number under another
    profile (ten times ``count`` under ``HYPOTHESIS_PROFILE=explore``, 1,000; tests/conftest.py), so
    the deep run explores the storage side as much further as it explores the pure properties.

    Parameters
    ----------
    count:
        Examples under the deterministic profile (at least 1).

    Returns
    -------
    int
        ``count`` scaled by the loaded profile's ``max_examples`` over 100 (at least 1).
    """
    return max(1, count * hypothesis.settings.default.max_examples // 100)


def create_listing(api: Api, user: User, category: str = "jobs", role: str | None = None,
                   meta: dict[str, str | None] | None = None, **fields: Any) -> dict[str, Any]:
    """Create a listing through the API and return its JSON (asserts 201)."""
    return api.call_json("POST", "/v1/listings", user.key, listing_body(category, role, meta, **fields), status=201)


def get_listing(api: Api, user: User, listing_id: str) -> Any:
    """``GET /v1/listings/{id}`` as ``user`` (the raw response)."""
    return api.call("GET", f"/v1/listings/{listing_id}", user.key)


def search_listings(api: Api, user: User, query: str) -> dict[str, Any]:
    """``GET /v1/listings/search?<query>`` as ``user``: the page's JSON (asserts 200)."""
    return api.call_json("GET", f"/v1/listings/search?{query}", user.key)


def claim(api: Api, admin: User, max_tasks: int = 10) -> list[dict[str, Any]]:
    """Claim up to ``max_tasks`` approval tasks (asserts 200)."""
    response = api.call("POST", "/v1/admin/approvals/claims", admin.key, {"max": max_tasks})
    assert response.status_code == 200, response.json
    approvals: list[dict[str, Any]] = response.json["approvals"]
    return approvals


def release(approval_id: str) -> None:
    """Give a claimed task back to the queue at once (what an expired claim does after its timeout)."""
    task = decode_approval_id(approval_id)
    storage.client("sqs").change_message_visibility(
        QueueUrl=settings().APPROVAL_QUEUE_URL, ReceiptHandle=task.receipt, VisibilityTimeout=0
    )


def decide(api: Api, admin: User, approval_id: str, decision: str = "approve", reason: str | None = None) -> Any:
    """``POST /v1/admin/approvals/{approvalId}`` (the raw response)."""
    body: dict[str, Any] = {"decision": decision}
    if reason is not None:
        body["reason"] = reason
    return api.call("POST", f"/v1/admin/approvals/{approval_id}", admin.key, body)


def activate(api: Api, admin: User, runner: Any, *listing_ids: str) -> list[dict[str, Any]]:
    """Approve the given listings (draining the outbox before and after); other claimed tasks are released unchanged.

    Returns the approved listings in the order of ``listing_ids``.
    """
    runner.drain()
    wanted = set(listing_ids)
    approved: dict[str, dict[str, Any]] = {}
    others: list[str] = []
    while wanted - set(approved):
        batch = claim(api, admin)
        if not batch:
            break
        for approval in batch:
            if approval["listingId"] in wanted:
                response = decide(api, admin, approval["approvalId"])
                assert response.status_code == 200, response.json
                approved[approval["listingId"]] = response.json["listing"]
            else:
                others.append(approval["approvalId"])
    for approval_id in others:  # released only now, so the loop above never claims them twice
        release(approval_id)
    assert set(approved) == wanted, f"no approval task for {wanted - set(approved)}"
    runner.drain()  # the approvals' listing.activated events (saved-search percolator)
    return [approved[i] for i in listing_ids]


def assert_error(response: Any, status: int, code: str, field: str | None = None) -> dict[str, Any]:
    """Assert the spec's error body ``{code, error, details?, requestId}``; with ``field``, that ``details`` names it.

    ``requestId`` is the response's ``X-Request-Id``.
    """
    assert response.status_code == status, (response.status_code, response.json)
    body: dict[str, Any] = response.json
    assert set(body) <= {"code", "error", "details", "requestId"}, body
    assert body["requestId"] == response.headers["X-Request-Id"], body
    assert body["code"] == code, body
    assert isinstance(body["error"], str), body
    assert body["error"], body
    assert response.headers.get("Content-Type") == "application/json"
    for detail in body.get("details") or []:
        assert set(detail) == {"field", "issue"}, body
        assert detail["issue"], body
    if field is not None:
        assert field in error_fields(response), body
    return body


def search_reads(reads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Queries of a search without the one that reads the viewer's block set (the Blocks
    table: docs/trust-and-safety.md, "Blocking"), for the tests about which indexes a search reads."""
    return [r for r in reads if r.get("TableName") != settings().BLOCKS_TABLE]


def error_fields(response: Any) -> list[str]:
    """The ``field`` of every ``details`` item of an error response."""
    return [d["field"] for d in (response.json.get("details") or [])]


@contextmanager
def aws_calls(operation: str, service: str = "dynamodb") -> Iterator[list[dict[str, Any]]]:
    """Record every ``operation`` call the product's shared client makes (botocore ``before-call``).

    Yields a list that fills with each call's JSON request parameters (TableName, IndexName, ...).
    """
    calls: list[dict[str, Any]] = []
    lock = threading.Lock()

    def record(params: dict[str, Any], **_: Any) -> None:
        body = params.get("body") or b"{}"
        with lock:
            calls.append(json.loads(body))

    events = storage.client(service).meta.events
    event_name = f"before-call.{service}.{operation}"
    events.register(event_name, record)
    try:
        yield calls
    finally:
        events.unregister(event_name, record)


#: The DynamoDB operations that read items.
READ_OPERATIONS = ("Query", "GetItem", "BatchGetItem", "Scan")


@dataclass
class Reads:
    """What the product's DynamoDB client read inside :func:`counting_reads`.

    Attributes
    ----------
    calls:
        The read operations in call order (``"Query"``, ``"GetItem"``, ...).
    items:
        Items read: a Query's or Scan's ``ScannedCount`` (items examined, not only returned),
        the items of a BatchGetItem, one per GetItem that found its item.
    by_operation:
        ``items`` per operation name.
    """

    calls: list[str]
    items: int
    by_operation: Counter[str]

    def hook(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        """botocore ``after-call`` handler: add one response's reads."""
        read = items_read(model.name, parsed)
        with _reads_lock:
            self.calls.append(model.name)
            self.items += read
            self.by_operation[model.name] += read


_reads_lock = threading.Lock()


@contextmanager
def counting_reads() -> Iterator[Reads]:
    """Count the reads of the product's shared DynamoDB client (botocore ``after-call`` events)."""
    reads = Reads(calls=[], items=0, by_operation=Counter())
    events = storage.dynamodb().meta.events
    names = [f"after-call.dynamodb.{op}" for op in READ_OPERATIONS]
    for name in names:
        events.register(name, reads.hook)
    try:
        yield reads
    finally:
        for name in names:
            events.unregister(name, reads.hook)


def table_items(table: str) -> list[dict[str, Any]]:
    """Every item of ``table`` (a test-only Scan)."""
    pages = storage.dynamodb().get_paginator("scan").paginate(TableName=table)
    return [storage.from_item(item) or {} for page in pages for item in page["Items"]]


def approval_queue_depth() -> tuple[int, int]:
    """``(visible, claimed)`` message counts of the approval queue."""
    attributes = storage.client("sqs").get_queue_attributes(
        QueueUrl=settings().APPROVAL_QUEUE_URL,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])


def put_webhook(owner: User, webhook_id: str) -> str:
    """Store a webhook of ``owner`` directly in the Webhooks table and return its id."""
    now = clock.iso()
    storage.put(
        settings().WEBHOOKS_TABLE,
        {"webhookId": webhook_id, "ownerId": owner.user_id, "name": "API Webhook", "url": "https://example.org/hook",
         "secret": "whsec_test", "events": [], "active": True, "failCount": 0, "createdAt": now, "updatedAt": now},
    )
    return webhook_id


def my_listings(api: Api, user: User) -> dict[str, Any]:
    """``GET /v1/listings/mine?pageSize=100`` (asserts 200)."""
    return api.call_json("GET", "/v1/listings/mine?pageSize=100", user.key)


@dataclass
class Stack:
    """A whole in-process stack: the test client, the event runner and three users."""

    api: Api
    runner: Any
    alice: User
    bob: User
    admin: User


@contextmanager
def shared_stack(resources: Resources) -> Iterator[Stack]:
    """What conftest's ``aws``/``api``/``runner``/user fixtures build per test, built once.

    For class-scoped fixtures of read-only tests (validation and auth failures, reads), which
    would otherwise spend their time building the same users again. It empties the session's
    moto first, like the ``aws`` fixture; tests that change data keep the per-test fixtures,
    so no test depends on another's writes.
    """
    from app import app
    from local_stack.runner import EventRunner

    with pytest.MonkeyPatch.context() as patch, fresh_aws(resources, patch), Client(app) as client:
        alice = make_user("Alice", country="de")
        bob = make_user("Bob", country="fr")
        admin = make_user("Admin", admin=True)
        runner = EventRunner(app)
        runner.drain()  # the users' own stream records (profile postings): the tests start from a quiet stream
        yield Stack(Api(client), runner, alice, bob, admin)


@pytest.fixture(scope="class", name="stack")
def class_stack(aws_resources: Resources) -> Iterator[Stack]:
    """The ``stack`` fixture: one :func:`shared_stack` for a whole class of tests. A module uses it
    by importing ``class_stack``."""
    with shared_stack(aws_resources) as built:
        yield built


def stream_records(table: str, after: str | None = None) -> list[dict[str, Any]]:
    """The records of ``table``'s stream so far (those after sequence number ``after``, if given),
    oldest first, shaped as Lambda hands them over."""
    import boto3
    from botocore.config import Config

    # botocore's account-based stream endpoints are unknown to moto (as in local_stack.runner).
    streams = boto3.client("dynamodbstreams", config=Config(account_id_endpoint_mode="disabled"))
    arn = storage.dynamodb().describe_table(TableName=table)["Table"]["LatestStreamArn"]
    records: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        position: dict[str, str] = (
            {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after} if after else {"ShardIteratorType": "TRIM_HORIZON"}
        )
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], **position)["ShardIterator"]
        while iterator:
            response = streams.get_records(ShardIterator=iterator, Limit=1000)
            if not response["Records"]:
                break
            records.extend(response["Records"])
            iterator = response.get("NextShardIterator")
    for record in records:
        record["dynamodb"].pop("ApproximateCreationDateTime", None)  # a datetime here; Lambda sends epoch seconds
        record["eventSourceARN"] = arn
    return records


def index_listings(records: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Feed Listings-stream records to the postings consumer, as Lambda would.

    Default: the records written since the last default call of this test, as an event source
    mapping checkpoints after each batch (from the first failed record on, they are fed again next
    time). Feeding the whole stream again (``index_listings(listing_stream_records())``) changes
    nothing, applying being idempotent, but re-reading it per call made property tests quadratic.
    Returns the consumer's ``{"batchItemFailures": [...]}``.
    """
    from chalicelib.listings.search import indexer
    from tests.integration.aws_session import STREAM_CHECKPOINTS

    table = settings().LISTINGS_TABLE
    batch = records if records is not None else stream_records(table, after=STREAM_CHECKPOINTS.get(table))
    if not batch:  # Lambda never invokes with an empty batch (and powertools refuses one)
        return {"batchItemFailures": []}
    result: dict[str, Any] = indexer.handle_stream_batch({"Records": batch})
    if records is None:  # checkpoint before the first failed record, or after the batch
        failed = {failure["itemIdentifier"] for failure in result["batchItemFailures"]}
        done = next((n for n, record in enumerate(batch) if record["dynamodb"]["SequenceNumber"] in failed), len(batch))
        if done:
            STREAM_CHECKPOINTS[table] = batch[done - 1]["dynamodb"]["SequenceNumber"]
    return result


def newest_first(listings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Listings in search's newest-first order: ``createdAt`` descending, ties by id ascending."""
    return sorted(sorted(listings, key=lambda i: i["listingId"]), key=lambda i: i["createdAt"], reverse=True)


def http_request(url: str, method: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """``method`` on ``url`` over real HTTP (10 s timeout): the status, headers and body, errors included."""
    request = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def cursor_pages(fetch: Callable[[str], dict[str, Any]], page_size: int) -> list[dict[str, Any]]:
    """Every page of a list route, first to last by ``nextCursor``; ``fetch(query)`` answers one page
    (``query``: ``pageSize=N[&cursor=...]``). Asserts that each page is one Query of at most
    ``page_size + 1`` items (the page and the look-ahead that says whether more follow)."""
    pages: list[dict[str, Any]] = []
    query = f"pageSize={page_size}"
    while True:
        with counting_reads() as reads:
            page = fetch(query)
        assert reads.calls == ["Query"]
        assert reads.items <= page_size + 1
        pages.append(page)
        if page["nextCursor"] is None:
            return pages
        query = f"pageSize={page_size}&cursor={page['nextCursor']}"


def edited_cursor(cursor: str) -> str:
    """``cursor`` with one character of its payload changed: well-formed, but its signature no longer matches."""
    head, _, tail = cursor.partition(".")
    return f"{head[:-2]}{'A' if head[-2] != 'A' else 'B'}{head[-1]}.{tail}"


#: The single-item call that applies each kind of TransactWriteItems element.
_SINGLE_WRITES = {"Put": "put_item", "Update": "update_item", "Delete": "delete_item"}


@contextmanager
def writes_one_at_a_time() -> Iterator[None]:
    """While active, ``storage.transact`` applies each element of a transaction as its own
    conditional ``PutItem``/``UpdateItem``/``DeleteItem``, in order, instead of one
    ``TransactWriteItems``.

    For seeding many items before a test measures something else (reads, round trips): the items
    and stream records written are the transaction's, but moto as it ships deep-copies every
    table a ``TransactWriteItems`` names (its rollback state) and keeps the copies, so seeding
    hundreds of listings through transactions grows with the square of the tables. Not atomic:
    only for a seed whose conditions hold. A ``ConditionCheck`` element has no single-item
    call and raises ``ValueError``.
    """
    def one_at_a_time(items: Any) -> None:
        client = storage.client("dynamodb")
        for element in items:
            ((kind, op),) = element.items()
            if kind not in _SINGLE_WRITES:
                raise ValueError(f"{kind} has no single-item write")
            getattr(client, _SINGLE_WRITES[kind])(**op)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "transact", one_at_a_time)
        yield
