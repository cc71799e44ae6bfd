"""DynamoDB throttling after botocore's retries is 503 SERVICE_UNAVAILABLE with Retry-After
(chalicelib.persistence.storage's ``after-call`` handler), never a 500: a real HTTP endpoint that throttles
every call (botocore retries it for real), botocore's Stubber for one API request, and
transactions cancelled for throttling."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from botocore.stub import Stubber

from chalicelib.edge import http
from chalicelib.kernel import errors
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error
from tests.integration.test_dependency_timeouts import point_at

SECRET = "capacity of table Users-4f1c exceeded"


class _Throttling(BaseHTTPRequestHandler):
    """Answers every DynamoDB call with HTTP 400 ``ProvisionedThroughputExceededException``."""

    calls: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).calls.append(self.headers.get("X-Amz-Target", ""))
        body = json.dumps({
            "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "message": SECRET,
        }).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Silent (the test reads ``calls``)."""


@pytest.fixture
def throttling() -> Iterator[str]:
    """``http://127.0.0.1:<port>``: a DynamoDB endpoint that throttles every call."""
    _Throttling.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Throttling)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(2)


def test_a_call_still_throttled_after_botocores_retries_is_the_apis_503(
    aws: dict[str, str], throttling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, throttling)  # 2 attempts
    with pytest.raises(errors.DependencyUnavailable) as caught:
        storage.get(settings().USERS_TABLE, {"userId": "usr_throttled"})
    assert _Throttling.calls == ["DynamoDB_20120810.GetItem"] * 2  # botocore retried it, then storage mapped it
    assert http.error_status(caught.value) == (503, "SERVICE_UNAVAILABLE")
    assert http.error_headers(caught.value)["Retry-After"].isdigit()
    assert caught.value.cause.startswith("ProvisionedThroughputExceededException")


def test_a_throttled_request_is_503_with_retry_after_and_no_aws_details(
    api: Api, alice: User, throttling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, throttling)
    response = api.call("GET", "/v1/webhooks", alice.key)
    body = assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert int(response.headers["Retry-After"]) > 0
    assert SECRET not in response.body.decode()
    assert "ProvisionedThroughput" not in json.dumps(body)


@pytest.mark.parametrize("code", sorted(storage.THROTTLED_CODES))
def test_every_throttling_code_is_503_on_a_route(api: Api, alice: User, code: str) -> None:
    assert api.call("GET", "/v1/webhooks", alice.key).status_code == 200  # the key is cached now
    client: Any = storage.client("dynamodb")
    with Stubber(client) as stub:
        stub.add_client_error("query", service_error_code=code, service_message=SECRET, http_status_code=400)
        response = api.call("GET", "/v1/webhooks", alice.key)
        stub.assert_no_pending_responses()
    assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert response.headers["Retry-After"].isdigit()
    assert SECRET not in response.body.decode()


def _cancelled(stub: Stubber, *reasons: str) -> None:
    stub.add_client_error(
        "transact_write_items", service_error_code="TransactionCanceledException", http_status_code=400,
        service_message=f"Transaction cancelled [{', '.join(reasons)}]",
        response_meta={}, modeled_fields={"CancellationReasons": [{"Code": r} for r in reasons]},
    )


def _put() -> dict[str, Any]:
    return storage.put_op(settings().USERS_TABLE, {"userId": "usr_t"}, "attribute_not_exists(userId)")


def _transact_cancelled[ErrorT: Exception](expected: type[ErrorT], *reasons: str) -> ErrorT:
    """What ``storage.transact`` of two items raises when DynamoDB (stubbed) cancels it for ``reasons``."""
    client: Any = storage.client("dynamodb")
    with Stubber(client) as stub:
        _cancelled(stub, *reasons)
        with pytest.raises(expected) as caught:
            storage.transact([_put(), _put()])
        stub.assert_no_pending_responses()
    return caught.value


def test_a_transaction_cancelled_for_throttling_is_503(aws: dict[str, str]) -> None:
    assert "ThrottlingError" in _transact_cancelled(errors.DependencyUnavailable, "None", "ThrottlingError").cause


def test_a_failed_condition_beside_throttling_stays_a_transaction_conflict(aws: dict[str, str]) -> None:
    reasons = ["ConditionalCheckFailed", "ProvisionedThroughputExceeded"]
    assert _transact_cancelled(storage.TransactionConflict, *reasons).reasons == reasons


def test_keys_left_unprocessed_by_throttling_are_503(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage, "TRANSACT_BASE_DELAY_SECONDS", 0.0)
    table = settings().USERS_TABLE
    key = {"userId": {"S": "usr_t"}}
    client: Any = storage.client("dynamodb")
    with Stubber(client) as stub:
        for _ in range(storage.TRANSACT_ATTEMPTS):
            stub.add_response("batch_get_item", {"Responses": {table: []}, "UnprocessedKeys": {table: {"Keys": [key]}}})
        with pytest.raises(errors.DependencyUnavailable):
            storage.batch_get_tables({table: [{"userId": "usr_t"}]})
        stub.assert_no_pending_responses()


def test_requests_left_unprocessed_are_sent_again_then_503(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage, "TRANSACT_BASE_DELAY_SECONDS", 0.0)
    table = settings().USERS_TABLE
    put = {"PutRequest": {"Item": {"userId": {"S": "usr_t"}}}}
    client: Any = storage.client("dynamodb")
    with Stubber(client) as stub:
        stub.add_response("batch_write_item", {"UnprocessedItems": {table: [put]}}, {"RequestItems": {table: [put] * 25}})
        stub.add_response("batch_write_item", {"UnprocessedItems": {}}, {"RequestItems": {table: [put]}})
        stub.add_response("batch_write_item", {"UnprocessedItems": {}}, {"RequestItems": {table: [put] * 5}})
        storage.batch_write(table, [put] * 30)
        stub.assert_no_pending_responses()
        for _ in range(storage.TRANSACT_ATTEMPTS):
            stub.add_response("batch_write_item", {"UnprocessedItems": {table: [put]}})
        with pytest.raises(errors.DependencyUnavailable):
            storage.batch_write(table, [put])
        stub.assert_no_pending_responses()


def test_other_client_errors_are_untouched(aws: dict[str, str]) -> None:
    client: Any = storage.client("dynamodb")
    with Stubber(client) as stub:
        stub.add_client_error("get_item", service_error_code="ValidationException", http_status_code=400)
        with pytest.raises(client.exceptions.ClientError) as caught:
            storage.get(settings().USERS_TABLE, {"userId": "usr_t"})
    assert caught.value.response["Error"]["Code"] == "ValidationException"
