"""``python -m local_stack``: the whole service on 127.0.0.1 (DESIGN "Local run contract").

1. the embedded AWS: ``python -m local_stack.moto_server`` on ``MOTO_PORT`` (default 5000) as a
   child process, unless ``AWS_ENDPOINT_URL`` already names an endpoint (a surviving embedded AWS
   of an earlier run, for example);
2. every table, stream and queue of ``infra/resources.json`` created there;
3. the ``local`` stage's environment from ``.chalice/config.json`` (variables already set win);
4. the admin key from ``ADMIN_API_KEY`` registered (or a new one generated and printed);
5. the event runner (streams and queues -> the app's event handlers) on threads; it saves its
   stream checkpoints in the stack's folder (``.local/<PORT>/``), and resumes from them when
   ``AWS_ENDPOINT_URL`` names the embedded AWS of an earlier run;
6. the API on ``PORT`` (default 8000); ``GET /v1/health`` answers 200 once all of it is up;
7. with ``--demo``, demo users and listings created through the public API.

Ctrl-C or SIGTERM stops the server, the runner and the moto child process. A ``PORT`` or
``MOTO_PORT`` that is already in use stops the start with one line naming it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
log = logging.getLogger("local_stack")


#: Default bound of each start-up wait (``LOCAL_STACK_START_SECONDS`` overrides it). It only turns a
#: part that never comes up into a clear error: the wait itself ends as soon as the part answers
#: (or its process exits). Tests that start several stacks at once on a loaded machine raise it.
START_SECONDS = 30.0


#: How long one start-up poll waits for its answer (seconds).
POLL_TIMEOUT_SECONDS = 15.0


#: How often an idle stream is polled when nothing notified the event runner (seconds): a safety net,
#: since every write of this process (API requests, handled batches) notifies it.
IDLE_POLL_SECONDS = 2.0
#: How often the main thread looks for a stop signal (seconds): the bound on how late it starts
#: shutting down after SIGTERM or SIGINT.
STOP_CHECK_SECONDS = 0.2


def start_seconds() -> float:
    """The start-up bound in seconds: ``LOCAL_STACK_START_SECONDS`` or :data:`START_SECONDS`.

    Raises
    ------
    SystemExit
        When the variable is set to something other than a positive number.
    """
    raw = os.environ.get("LOCAL_STACK_START_SECONDS", "")
    if not raw:
        return START_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise SystemExit(f"LOCAL_STACK_START_SECONDS must be a positive number of seconds, not {raw!r}")
    return value


def _wait_for(url: str, timeout_seconds: float, what: str, process: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until ``url`` answers; fail at once if ``process`` (the server's) exits, and after ``timeout_seconds``."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        try:
            # A readiness answer probes every table and queue (GET /v1/health): on a loaded machine it
            # can take seconds, and a poll that gives up after one second never sees it.
            with urllib.request.urlopen(url, timeout=POLL_TIMEOUT_SECONDS):
                return
        except OSError:  # URLError, connection refused, timeouts
            if process is not None and process.poll() is not None:
                raise SystemExit(f"{what} exited with status {process.returncode} before answering at {url}") from None
            if time.monotonic() > deadline:
                raise SystemExit(
                    f"{what} did not start at {url} within {timeout_seconds:.0f} s (LOCAL_STACK_START_SECONDS)"
                ) from None
            time.sleep(0.1)


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port`` (a TCP connection is accepted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


def refuse_ports_in_use(host: str, port: int, moto_port: int | None) -> None:
    """Stop with one line when the API's ``port`` or the embedded AWS's ``moto_port`` (``None``:
    the caller's ``AWS_ENDPOINT_URL`` is used instead) is taken.

    A taken ``MOTO_PORT`` is usually another stack's embedded AWS: joining it would make two
    event runners share its queues and streams.

    Raises
    ------
    SystemExit
        Naming the port and the setting that chooses another.
    """
    if port_in_use(host, port):
        raise SystemExit(f"PORT {port} is already in use on {host}: stop what serves it, or choose another (make run PORT=8001)")
    if moto_port is not None and port_in_use(host, moto_port):
        raise SystemExit(
            f"MOTO_PORT {moto_port} is already in use on {host}: choose another (make run MOTO_PORT=5001), "
            f"or set AWS_ENDPOINT_URL=http://{host}:{moto_port} to use that embedded AWS on purpose"
        )


def start_moto(host: str, port: int) -> subprocess.Popen[bytes]:
    """Start the embedded AWS (:mod:`local_stack.moto_server`) as a child process and wait until it answers.

    The child runs in a session of its own: Ctrl-C in a terminal signals the whole foreground
    process group, and a moto that exited at once left the stack's event runners calling a closed
    port (an ERROR traceback per pass) until the stack noticed the signal. Only the stack is
    signalled now; it stops its server and runners first, then terminates the child (:func:`main`).
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "local_stack.moto_server", host, str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(f"http://{host}:{port}/moto-api/", start_seconds(), "moto server", process)
    except SystemExit:
        process.kill()
        raise
    return process


def stop_moto(process: subprocess.Popen[bytes], timeout_seconds: float = 10.0) -> None:
    """Stop the embedded AWS started by :func:`start_moto`: SIGTERM (its server exits on it),
    then SIGKILL if it has not exited within ``timeout_seconds`` (a loaded machine)."""
    process.terminate()
    try:
        process.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stage_environment(stage: str = "local") -> dict[str, str]:
    """The environment variables of ``stage`` in ``.chalice/config.json`` (global ones overridden by the stage's)."""
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    return {**config.get("environment_variables", {}), **config["stages"][stage].get("environment_variables", {})}


def register_admin_key(api_key: str | None) -> tuple[str, bool]:
    """Register ``api_key`` (or a new one) as an administrator's key; returns ``(key, created)``."""
    from chalicelib.kernel import errors
    from chalicelib.users.models import AdminUserCreate
    from chalicelib.users.service import create_user

    try:
        created = create_user(AdminUserCreate(displayName="Local admin", admin=True), api_key=api_key)
    except errors.Conflict:
        return str(api_key), False
    return created.apiKey, True


def main(argv: list[str] | None = None) -> int:
    """Run the local stack until Ctrl-C / SIGTERM; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m local_stack", description=__doc__.splitlines()[0])
    parser.add_argument("--demo", action="store_true", help="create demo users and ~200 approved listings")
    args = parser.parse_args(argv)
    verbose = os.environ.get("VERBOSE", "") not in ("", "0")
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")

    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8000"))
    moto_port = int(os.environ.get("MOTO_PORT", "5000"))
    for name, value in {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(name, value)

    from local_stack.console import (
        ACCESS_LOG,
        CHECKPOINTS,
        METRICS_LOG,
        print_summary,
        route_request_logs,
        stack_folder,
        startup_progress,
        summary_box,
    )

    own_moto = not os.environ.get("AWS_ENDPOINT_URL")
    refuse_ports_in_use(host, port, moto_port if own_moto else None)
    folder = stack_folder(port)
    checkpoints = folder / CHECKPOINTS
    if own_moto:  # a new embedded AWS: the checkpoints of an earlier one name streams it does not have
        checkpoints.unlink(missing_ok=True)

    moto: subprocess.Popen[bytes] | None = None
    # The handler only appends (no lock): an Event.set() here deadlocked the stack when a second
    # SIGTERM interrupted the first handler inside the Event's lock (the process never exited).
    stop_signals: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        stop_signals.append(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server = runner = None
    demo_users: list[dict[str, str]] = []
    try:
        with startup_progress(total=5) as steps:
            if own_moto:
                steps.step("Starting the embedded AWS (moto)")
                moto = start_moto(host, moto_port)
                os.environ["AWS_ENDPOINT_URL"] = f"http://{host}:{moto_port}"
            steps.advance()
            from local_stack.resources import create_resources

            steps.step("Creating tables and queues")
            # The local stage's settings, unless the caller's environment sets them (tests, debugging).
            os.environ.update({k: v for k, v in stage_environment("local").items() if k not in os.environ})
            metrics_log = Path(os.environ.setdefault("METRICS_LOG", str(folder / METRICS_LOG)))
            metrics_log.parent.mkdir(parents=True, exist_ok=True)
            os.environ.update(create_resources())
            steps.advance()
            steps.step("Registering the admin key")
            admin_key, created = register_admin_key(os.environ.get("ADMIN_API_KEY") or None)
            steps.advance()

            steps.step("Starting the API and the event runner")
            from app import app
            from local_stack.runner import EventRunner
            from local_stack.server import make_server

            request_log = route_request_logs(verbose, folder / ACCESS_LOG)
            # Streams and queues are read at once after each API request (notify) and polled every
            # few seconds otherwise: their records and messages come from this process's writes.
            runner = EventRunner(app, idle_poll_seconds=IDLE_POLL_SECONDS, state_file=checkpoints)
            runner.start()
            server = make_server(app, host, port, after_request=runner.notify)
            threading.Thread(target=server.serve_forever, name="api", daemon=True).start()
            base_url = f"http://{host}:{port}"
            _wait_for(f"{base_url}/v1/health", start_seconds(), "API")
            steps.advance()
            if args.demo:
                from local_stack.demo import DEMO_USERS, seed_demo

                listings = 200
                steps.grow(len(DEMO_USERS) + 2 * listings)

                def tick(step: str) -> None:
                    steps.step(step)
                    steps.advance()

                seeded = seed_demo(base_url, admin_key, runner, listings=listings, advance=tick)
                demo_users = seeded["users"]
                if seeded["listings"] < listings:
                    print(f"Warning: only {seeded['listings']} of {listings} demo listings were approved; "
                          "the rest wait in the approval queue (GET /v1/admin/approvals)", flush=True)
            steps.advance()
        print_summary(summary_box(base_url, admin_key + ("" if created else "  (already registered)"), demo_users,
                                  request_log, os.environ["AWS_ENDPOINT_URL"], metrics_log))
        while not stop_signals:
            time.sleep(STOP_CHECK_SECONDS)
    finally:
        print("Stopping...", flush=True)
        if server is not None:
            server.shutdown()
        if runner is not None:
            runner.stop()
        if moto is not None:
            stop_moto(moto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
