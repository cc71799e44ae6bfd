"""The local stack as a process: a port already in use stops a second stack with one line, and it
stops on repeated signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx

from tests.e2e.conftest import Stack, free_port, start_stack


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
