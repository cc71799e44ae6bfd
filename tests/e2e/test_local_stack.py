"""The local stack as a process: a port already in use stops a second stack with one line, it
stops on repeated signals, and its moto server answers
unsigned DynamoDB, DynamoDB Streams and SQS requests as signed ones
(``local_stack.moto_server.route_unsigned_requests``): the stack's own clients skip Signature
Version 4 (``local_stack.signing``), and the server must route them to the service and region a
signed request reaches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import boto3
import httpx
from botocore.config import Config

from local_stack.signing import skip_signing
from tests.e2e.conftest import Stack, free_port, start_stack

REGION = "us-east-1"  # the local stack's default AWS_DEFAULT_REGION


def _clients(stack: Stack, signed: bool) -> dict[str, Any]:
    session = boto3.session.Session(aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION)
    if not signed:
        skip_signing(session)
    config = Config(account_id_endpoint_mode="disabled")
    return {name: session.client(name, endpoint_url=stack.moto_url, config=config)  # type: ignore[call-overload]
            for name in ("dynamodb", "dynamodbstreams", "sqs")}


def _state(clients: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    tables = sorted(clients["dynamodb"].list_tables()["TableNames"])
    streams = sorted(s["TableName"] for s in clients["dynamodbstreams"].list_streams()["Streams"])
    queues = sorted(clients["sqs"].list_queues().get("QueueUrls", []))
    return tables, streams, queues


def test_unsigned_requests_reach_the_stacks_tables_streams_and_queues(stack: Stack) -> None:
    unsigned, signed = _state(_clients(stack, signed=False)), _state(_clients(stack, signed=True))
    tables, streams, queues = unsigned
    assert unsigned == signed
    assert "ListingsTable" in tables
    assert streams
    assert set(streams) <= set(tables)
    assert any(url.endswith(".fifo") for url in queues), queues  # the delivery lanes


def test_an_unsigned_write_is_read_back_by_a_signed_client(stack: Stack) -> None:
    unsigned, signed = _clients(stack, signed=False), _clients(stack, signed=True)
    url = unsigned["sqs"].create_queue(QueueName="unsigned-probe")["QueueUrl"]
    unsigned["sqs"].send_message(QueueUrl=url, MessageBody="hello")
    received = signed["sqs"].receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]
    assert [m["Body"] for m in received] == ["hello"]
    signed["sqs"].delete_queue(QueueUrl=url)


def _second_stack(port: int, moto_port: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    env.update({"PORT": str(port), "MOTO_PORT": str(moto_port)})
    return subprocess.run([sys.executable, "-m", "local_stack"], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_a_port_in_use_stops_a_second_stack_with_one_line_naming_it(stack: Stack) -> None:
    port, moto_port = int(stack.base_url.rsplit(":", 1)[1]), int(stack.moto_url.rsplit(":", 1)[1])
    taken_api = _second_stack(port, free_port())
    taken_aws = _second_stack(free_port(), moto_port)
    assert taken_api.returncode == 1
    assert taken_api.stderr.strip() == (f"PORT {port} is already in use on 127.0.0.1: stop what serves it, "
                                        "or choose another (make run PORT=8001)")
    assert taken_aws.returncode == 1
    assert len(taken_aws.stderr.strip().splitlines()) == 1
    assert taken_aws.stderr.startswith(f"MOTO_PORT {moto_port} is already in use")
    assert f"AWS_ENDPOINT_URL=http://127.0.0.1:{moto_port}" in taken_aws.stderr


def test_the_stack_exits_cleanly_when_signals_arrive_back_to_back() -> None:
    # A second SIGTERM could interrupt the first one's handler inside a threading.Event's lock:
    # the handler deadlocked and the stack never exited (seen once, 2026-11-28). The race is not
    # forced here (the old handler passed this test too): this checks the property, exit 0.
    running = start_stack()
    for _ in range(5):
        running.process.send_signal(signal.SIGTERM)
    try:
        assert running.process.wait(timeout=60) == 0
    except subprocess.TimeoutExpired:
        running.process.kill()
        raise


def test_ctrl_c_stops_the_runners_before_the_embedded_aws_and_logs_no_error() -> None:
    # Ctrl-C in a terminal sends SIGINT to the whole foreground process group. The moto server,
    # a child in that group, used to exit at once, and the event runners logged an ERROR
    # traceback for every pass against its closed port until the stack noticed the signal (seen
    # with `make run`, 2026-11-28). It now runs in a session of its own and is terminated by the
    # stack after the runners have stopped.
    running = start_stack(new_session=True)
    os.killpg(running.process.pid, signal.SIGINT)
    try:
        assert running.process.wait(timeout=60) == 0
    except subprocess.TimeoutExpired:
        running.process.kill()
        raise
    log = running.log_path.read_text()
    assert "Stopping..." in log
    assert " ERROR " not in log, log[-4000:]
    try:
        httpx.get(f"{running.moto_url}/moto-api/", timeout=2)
    except httpx.TransportError:
        pass  # the stack terminated its embedded AWS on the way out
    else:
        raise AssertionError("the embedded AWS outlived the stack")
