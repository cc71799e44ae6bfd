"""``local_stack.moto_dispatch`` answers DynamoDB's data-plane calls and stream reads exactly as moto's
own dispatch.

Each example draws a script of data-plane calls (writes, reads, queries, batches, transactions,
and calls that fail: missing placeholders, failed conditions, a missing table) and runs it twice
on a fresh table, once through the direct route and once through moto's dispatch, in process
(``BotocoreStubber.process_request``) and through the embedded AWS's WSGI app. Status, headers
(the random request id's and the clock's date's values aside, not their presence) and body must be equal byte for byte, call by
call; the account of each run is new (``x-moto-account-id``), so both runs start empty. Stream
reads are asked both ways of the same table (their shard iterators' random ids aside).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from botocore.awsrequest import AWSPreparedRequest
from botocore.compat import HTTPHeaders
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from moto.core.botocore_stubber import BotocoreStubber
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.test import Client

from local_stack import moto_dispatch
from local_stack.moto_server import route_unsigned_requests, speed_up
from tests.unit.dynamodb_strategies import data_plane_requests

# Tests of the local stack's embedded AWS (pyproject.toml, marker embedded_aws).
pytestmark = pytest.mark.embedded_aws

_accounts = itertools.count(100_000_000_000)
_CREATE = {"TableName": "T", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
           "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}
_SEEDED = [("PutItem", {"TableName": "T", "Item": {"pk": {"S": "a"}, "n": {"N": "1"}, "tags": {"SS": ["x"]}}}),
           ("PutItem", {"TableName": "T", "Item": {"pk": {"S": "b"}, "m": {"M": {"k": {"L": [{"S": "v"}]}}}}})]
_VOLATILE = {"x-amzn-requestid", "date"}

Call = tuple[str, dict[str, Any]]
Answer = tuple[int, list[tuple[str, str]], bytes]


@pytest.fixture(scope="module", autouse=True)
def _patched() -> None:
    speed_up()
    route_unsigned_requests("us-east-1")  # as the local stack's embedded AWS routes unsigned calls


def _headers(action: str, account: str, signed: bool, service: str = "dynamodb") -> dict[str, str]:
    target = "DynamoDBStreams_20120810" if service == "streams" else "DynamoDB_20120810"
    headers = {"X-Amz-Target": f"{target}.{action}", "Content-Type": "application/x-amz-json-1.0",
               "x-moto-account-id": account}
    if signed:
        headers["Authorization"] = ("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261128/us-east-1/dynamodb/aws4_request, "
                                    "SignedHeaders=host, Signature=0")
    return headers


def _comparable(status: int, headers: Any, body: Any) -> Answer:
    body = body.encode() if isinstance(body, str) else bytes(body)
    named = sorted((k.lower(), "*" if k.lower() in _VOLATILE else str(v)) for k, v in dict(headers).items())
    return status, named, body


def _in_process(direct: bool) -> Callable[[str, str, bytes], Answer]:
    process = BotocoreStubber.process_request
    if not direct:
        process = process.original  # type: ignore[attr-defined]
    account = f"{next(_accounts):012d}"

    def call(action: str, _: str, body: bytes) -> Answer:
        headers = HTTPHeaders()
        for key, value in _headers(action, account, signed=True).items():
            headers[key] = value
        request = AWSPreparedRequest("POST", "https://dynamodb.us-east-1.amazonaws.com/", headers, body, False)
        answer = process(BotocoreStubber(), request)
        assert answer is not None
        return _comparable(*answer)

    return call


def _server(direct: bool) -> Callable[[str, str, bytes], Answer]:
    app: Any = DomainDispatcherApplication(create_backend_app)
    client = Client(moto_dispatch.direct_server_calls(app) if direct else app)
    account = f"{next(_accounts):012d}"

    def call(action: str, signed: str, body: bytes) -> Answer:
        response = client.post("/", data=body, headers=_headers(action, account, signed == "signed"))
        return _comparable(response.status_code, response.headers, response.get_data())

    return call


def _run(route: Callable[[str, str, bytes], Answer], calls: list[Call], signed: str) -> list[Answer]:
    route("CreateTable", signed, json.dumps(_CREATE).encode())
    return [route(action, signed, json.dumps(params).encode()) for action, params in [*_SEEDED, *calls]]


_scripts = st.lists(data_plane_requests(), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_scripts)
@example(calls=[("GetItem", {"TableName": "T", "Key": {"pk": {"S": "a"}}})])
@example(calls=[("Query", {"TableName": "T", "KeyConditionExpression": "pk = :p",
                           "ExpressionAttributeValues": {":p": {"S": "b"}}})])
@example(calls=[("TransactWriteItems", {"TransactItems": [
    {"ConditionCheck": {"TableName": "T", "Key": {"pk": {"S": "zz"}}, "ConditionExpression": "attribute_exists(pk)"}}]})])
def test_in_process_calls_answer_as_moto_answers(calls: list[Call]) -> None:
    assert _run(_in_process(direct=True), calls, "signed") == _run(_in_process(direct=False), calls, "signed")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_scripts, signed=st.sampled_from(["signed", "unsigned"]))
@example(calls=[("BatchGetItem", {"RequestItems": {"T": {"Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}]}}})],
         signed="unsigned")
def test_server_calls_answer_as_moto_answers(calls: list[Call], signed: str) -> None:
    assert _run(_server(direct=True), calls, signed) == _run(_server(direct=False), calls, signed)


_STREAM_CALLS = ["ListStreams", "DescribeStream", "GetShardIterator", "GetRecords"]
_ITERATOR_ID = re.compile(r"\|1\|[A-Za-z0-9+/=]+")  # moto's shard iterator ids are random (os.urandom)


def _stream_reads(call: Callable[[str, str, bytes, str], Answer]) -> None:
    """Ask each stream read of a table that has records both ways, on the same account, and compare."""
    def both(action: str, params: dict[str, Any]) -> Any:
        body = json.dumps(params).encode()
        direct, moto = call(action, "direct", body, "streams"), call(action, "moto", body, "streams")
        normalized = [(status, headers, _ITERATOR_ID.sub("|1|*", body_.decode()).encode()) for status, headers, body_ in (direct, moto)]
        assert normalized[0] == normalized[1], action
        return json.loads(direct[2])

    arn = both("ListStreams", {"TableName": "T"})["Streams"][0]["StreamArn"]
    shard = both("DescribeStream", {"StreamArn": arn})["StreamDescription"]["Shards"][0]["ShardId"]
    def read(position: dict[str, str]) -> list[dict[str, Any]]:
        both("GetShardIterator", {"StreamArn": arn, "ShardId": shard, **position})
        iterator = call("GetShardIterator", "moto", json.dumps({"StreamArn": arn, "ShardId": shard, **position}).encode(),
                        "streams")
        return both("GetRecords", {"ShardIterator": json.loads(iterator[2])["ShardIterator"], "Limit": 100})["Records"]  # type: ignore[no-any-return]

    records = read({"ShardIteratorType": "TRIM_HORIZON"})
    assert records, "the script wrote records"
    read({"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": records[0]["dynamodb"]["SequenceNumber"]})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_scripts, server=st.booleans())
def test_stream_reads_answer_as_moto_answers(calls: list[Call], server: bool) -> None:
    account = f"{next(_accounts):012d}"
    if server:
        app: Any = DomainDispatcherApplication(create_backend_app)
        clients = {"direct": Client(moto_dispatch.direct_server_calls(app)), "moto": Client(app)}

        def call(action: str, route: str, body: bytes, service: str = "dynamodb") -> Answer:
            response = clients[route].post("/", data=body, headers=_headers(action, account, signed=False, service=service))
            return _comparable(response.status_code, response.headers, response.get_data())
    else:
        def call(action: str, route: str, body: bytes, service: str = "dynamodb") -> Answer:
            process = BotocoreStubber.process_request
            if route == "moto":
                process = process.original  # type: ignore[attr-defined]
            headers = HTTPHeaders()
            for key, value in _headers(action, account, signed=True, service=service).items():
                headers[key] = value
            host = "streams.dynamodb" if service == "streams" else "dynamodb"
            request = AWSPreparedRequest("POST", f"https://{host}.us-east-1.amazonaws.com/", headers, body, False)
            answer = process(BotocoreStubber(), request)
            assert answer is not None
            return _comparable(*answer)

    call("CreateTable", "moto", json.dumps({**_CREATE, "StreamSpecification": {
        "StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}}).encode())
    for action, params in [*_SEEDED, *calls]:
        call(action, "moto", json.dumps(params).encode())
    _stream_reads(call)


def test_only_the_routed_calls_take_the_direct_route() -> None:
    from moto.dynamodb.responses import DynamoHandler
    from moto.dynamodbstreams.responses import DynamoDBStreamsHandler

    dynamodb, streams = "DynamoDB_20120810.", "DynamoDBStreams_20120810."
    assert moto_dispatch.direct_action(f"{dynamodb}GetItem", b"{}", None) == (DynamoHandler, "GetItem")
    assert moto_dispatch.direct_action(f"{streams}GetRecords", b"{}", None) == (DynamoDBStreamsHandler, "GetRecords")
    assert moto_dispatch.direct_action(f"{streams}GetRecords", b'{"a": null}', None) is not None  # read by the handler
    assert moto_dispatch.direct_action(f"{dynamodb}CreateTable", b"{}", None) is None
    assert moto_dispatch.direct_action("AmazonSQS.ReceiveMessage", b"{}", None) is None
    assert moto_dispatch.direct_action(f"{dynamodb}GetItem", b'{"a": null}', None) is None
    assert moto_dispatch.direct_action(f"{dynamodb}PutItem", b'{"b": {"B": "AA=="}}', None) is None
    assert moto_dispatch.direct_action(f"{dynamodb}GetItem", b"{}", "gzip") is None
    assert moto_dispatch.direct_action(None, b"{}", None) is None
