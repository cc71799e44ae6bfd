"""Bounded waiting: explicit client timeouts, readiness in GET /v1/health, and a stalled
dependency answered 503 SERVICE_UNAVAILABLE with Retry-After, never a hang.

The stalled endpoint is a real TCP server on 127.0.0.1 that accepts connections and never
answers; the clients are pointed at it with short timeouts (the production numbers are in
chalicelib.persistence.storage.boto_config)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.stub import Stubber

from chalicelib.edge import http
from chalicelib.kernel import errors
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.system import health
from tests.integration.conftest import Api, User, reset_process_caches
from tests.integration.helpers import assert_error
from tests.integration.webhook_helpers import use_settings


@dataclass
class Stalled:
    """The stalled endpoint: ``url`` and the connections it accepted (one per attempt: a timed-out
    connection is never reused)."""

    url: str
    server: socket.socket
    held: list[socket.socket]
    stop: threading.Event
    thread: threading.Thread

    def connections(self) -> int:
        """Connections made so far. Stops accepting, then takes what the kernel already queued:
        every connect that returned before the caller's answer was queued by then."""
        self.stop.set()
        self.thread.join(2)
        self.server.setblocking(False)
        while True:
            try:
                self.held.append(self.server.accept()[0])
            except BlockingIOError:
                return len(self.held)


@pytest.fixture
def stalled(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stalled]:
    """A server on ``http://127.0.0.1:<port>`` that accepts every connection, reads, never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield Stalled(f"http://127.0.0.1:{server.getsockname()[1]}", server, held, stop, thread)
    stop.set()
    thread.join(2)
    for connection in held:
        connection.close()
    server.close()


def point_at(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    """Send every AWS call to ``endpoint`` with 0.3 s timeouts and 2 attempts."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    reset_process_caches()
    use_settings(monkeypatch, AWS_CONNECT_TIMEOUT_SECONDS="0.3", AWS_READ_TIMEOUT_SECONDS="0.3", AWS_MAX_ATTEMPTS="2")


def test_clients_have_explicit_timeouts_and_standard_retries(aws: dict[str, str]) -> None:
    config = storage.client("dynamodb").meta.config
    assert (config.connect_timeout, config.read_timeout) == (2.0, 3.0)
    assert config.retries == {"mode": "standard", "total_max_attempts": 3}
    probe = storage.probe_client("sqs").meta.config
    assert (probe.connect_timeout, probe.read_timeout, probe.retries["total_max_attempts"]) == (2.0, 3.0, 1)


def test_health_is_200_when_every_table_and_queue_answers(api: Api) -> None:
    response = api.call("GET", "/v1/health")
    assert response.status_code == 200, response.json
    assert response.json == {"status": "ok"}
    names = set(health.dependencies(settings()))
    assert {"LISTINGS_TABLE", "EVENTS_TABLE", "DELIVERY_QUEUE_URL", "DELIVERY_RETRY_QUEUE_URL", "APPROVAL_QUEUE_URL"} <= names


def test_health_is_503_naming_a_missing_queue_to_an_administrator_only(api: Api, admin: User, alice: User) -> None:
    storage.client("sqs").delete_queue(QueueUrl=settings().DELIVERY_QUEUE_URL)
    body = assert_error(api.call("GET", "/v1/health", admin.key), 503, "SERVICE_UNAVAILABLE", "DELIVERY_QUEUE_URL")
    assert [d["field"] for d in body["details"]] == ["DELIVERY_QUEUE_URL"]
    for key in (None, alice.key, "not-a-key"):  # anonymous, a user's key, a bad key: ok/unavailable only
        response = api.call("GET", "/v1/health", key)
        body = assert_error(response, 503, "SERVICE_UNAVAILABLE")
        assert (body["error"], "details" in body) == ("unavailable", False), body
        assert response.headers["Retry-After"].isdigit()


def test_health_is_503_within_one_timeout_when_aws_stalls(
    api: Api, stalled: Stalled, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, stalled.url)
    response = api.call("GET", "/v1/health")
    body = assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert (body["error"], "details" in body) == ("unavailable", False), body  # no internals without an admin key
    assert response.headers["Retry-After"].isdigit()
    # one attempt per probe, no retries: the answer comes after one 0.3 s timeout, not 13 x retries
    assert stalled.connections() == len(health.dependencies(settings()))


def test_a_request_whose_dependency_stalls_is_503_with_retry_after(
    api: Api, alice: User, stalled: Stalled, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, stalled.url)
    response = api.call("GET", "/v1/webhooks", alice.key)
    assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert int(response.headers["Retry-After"]) > 0
    assert stalled.connections() == 2  # AWS_MAX_ATTEMPTS=2 attempts of 0.3 s, not botocore's 60 s default


def test_an_unreachable_endpoint_is_503_too(api: Api, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    point_at(monkeypatch, f"http://127.0.0.1:{port}")
    assert_error(api.call("GET", "/v1/webhooks", alice.key), 503, "SERVICE_UNAVAILABLE")


def test_a_client_error_is_not_mistaken_for_unavailability(api: Api, alice: User) -> None:
    # botocore's Stubber: DynamoDB answering an error is a fault of ours (500), not a 503.
    assert api.call("GET", "/v1/webhooks", alice.key).status_code == 200  # the key is cached now
    client: Any = storage.client("dynamodb")
    with Stubber(client) as stub:
        stub.add_client_error("query", service_error_code="ValidationException", http_status_code=400)
        response = api.call("GET", "/v1/webhooks", alice.key)
        stub.assert_no_pending_responses()
    assert_error(response, 500, "INTERNAL_ERROR")


def test_storage_raises_the_apis_503_itself(aws: dict[str, str], stalled: Stalled, monkeypatch: pytest.MonkeyPatch) -> None:
    # The mapping lives in storage (http.py imports no storage): a stalled call is already a domain error.
    point_at(monkeypatch, stalled.url)
    with pytest.raises(errors.DependencyUnavailable) as caught:
        storage.get(settings().USERS_TABLE, {"userId": "usr_stalled"})
    assert http.error_status(caught.value)[0] == 503
    assert http.error_headers(caught.value)["Retry-After"].isdigit()
    assert caught.value.cause.startswith("ReadTimeoutError")
