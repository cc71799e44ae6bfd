"""The local stack (``python -m local_stack``): start-up waits with a configurable bound that end
as soon as the server's process exits, and which API requests wake the event runner."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from local_stack.__main__ import START_SECONDS, _wait_for, start_seconds


def test_the_bound_defaults_to_30_s_and_the_environment_overrides_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCAL_STACK_START_SECONDS", raising=False)
    assert start_seconds() == START_SECONDS == 30.0
    monkeypatch.setenv("LOCAL_STACK_START_SECONDS", "180")
    assert start_seconds() == 180.0


@pytest.mark.parametrize("raw", ["0", "-5", "soon", "nan"])
def test_a_bound_that_is_not_a_positive_number_is_refused(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("LOCAL_STACK_START_SECONDS", raw)
    with pytest.raises(SystemExit, match="LOCAL_STACK_START_SECONDS must be a positive number"):
        start_seconds()


class _Exited:
    """A ``Popen`` stand-in whose process has already exited with status 3."""

    returncode = 3

    def poll(self) -> int:
        return self.returncode


def _closed_port_url() -> str:
    with socket.socket() as sock:  # bound, never listening: connections are refused at once
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/"


def test_the_wait_ends_when_the_server_process_exits_not_at_the_bound() -> None:
    process: Any = _Exited()
    # the exit ended it: the 600 s bound would have said "did not start ... within 600 s"
    with pytest.raises(SystemExit, match="moto server exited with status 3"):
        _wait_for(_closed_port_url(), 600, "moto server", process)


def test_a_server_that_never_answers_is_an_error_naming_the_setting() -> None:
    with pytest.raises(SystemExit, match=r"API did not start .* within 0 s \(LOCAL_STACK_START_SECONDS\)"):
        _wait_for(_closed_port_url(), 0.0, "API")


@pytest.mark.parametrize(
    ("method", "status", "notified"),
    [
        ("GET", 200, False), ("HEAD", 200, False), ("GET", 500, False),  # reads write nothing
        ("POST", 400, False), ("PATCH", 404, False), ("DELETE", 409, False),  # refusals change nothing
        ("POST", 201, True), ("PUT", 200, True), ("DELETE", 204, True), ("POST", 303, True),
        ("POST", 500, True), ("POST", None, True),  # a failure or no answer: maybe written
    ],
)
def test_the_runner_is_woken_after_requests_that_may_have_written(method: str, status: int | None, notified: bool) -> None:
    from local_stack.server import ApiRequestHandler

    handler = ApiRequestHandler.__new__(ApiRequestHandler)  # no socket: only the decision is tested
    handler.command, handler.status = method, status
    assert handler._may_have_written() is notified
