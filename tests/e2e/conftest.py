"""End-to-end fixtures: the real local stack (moto server over HTTP, the served app, the event
runner) started as a child process exactly as ``make run`` starts it, driven over HTTP."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.limits import LIMITS_OFF
from tests.waiting import wait_until

__all__ = ["wait_until"]  # re-exported: the e2e modules import it from here

ROOT = Path(__file__).resolve().parents[2]
ADMIN_KEY = "msk_e2e_admin_key_0123456789"


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Stack:
    """A running local stack."""

    process: subprocess.Popen[bytes]
    base_url: str
    moto_url: str
    admin_key: str
    log_path: Path
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, key: str | None = None) -> httpx.Client:
        """An HTTP client for the API, sending ``key`` as bearer token."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        client = httpx.Client(base_url=self.base_url, headers=headers, timeout=30, verify=TLS)
        self.clients.append(client)
        return client

    def admin(self) -> httpx.Client:
        """A client with the administrator key."""
        return self.client(self.admin_key)

    def new_user(self, name: str, channels: dict[str, str] | None = None, **fields: Any) -> tuple[str, httpx.Client]:
        """Create a user through ``POST /v1/admin/users``; returns ``(userId, client with its key)``."""
        handle = name.lower().replace(" ", "")
        body = {"displayName": name, "channels": channels if channels is not None else {"telegram": f"@{handle}"}, **fields}
        response = self.admin().post("/v1/admin/users", json=body)
        assert response.status_code == 201, response.text
        return response.json()["userId"], self.client(response.json()["apiKey"])


#: One TLS context for every HTTP client of the end-to-end tests. httpx builds a context per
#: client, loading the system's CA bundle (about 50 ms of CPU, measured): polling a starting stack
#: with ``httpx.get`` five times a second spent more CPU than the stack's own start-up. The API
#: here is plain HTTP; the context is shared for what it would verify anyway.
TLS = ssl.create_default_context()


#: The stack's DynamoDB/SQS client timeouts in end-to-end runs (production: 2 s connect, 3 s read,
#: ``chalicelib.storage``). The stack's AWS calls run one at a time (local_stack.one_call_at_a_time); on a shared 2-core
#: machine under load an answer can take longer than 3 s, and a timed-out conditional write that
#: moto did apply is retried and refused (a false 409) or ends as a 503. The production timeouts
#: are tested against a stalled endpoint in tests/integration/test_dependency_timeouts.py.
STORAGE_TIMEOUTS = {"AWS_CONNECT_TIMEOUT_SECONDS": "10", "AWS_READ_TIMEOUT_SECONDS": "30"}


def start_stack(extra_env: dict[str, str] | None = None, timeout_seconds: float = 180, new_session: bool = False,
                root: Path = ROOT) -> Stack:
    """Start ``python -m local_stack`` on free ports and wait for ``GET /v1/health``.

    The bound is generous on purpose: it only turns a stack that never comes up into an error,
    and on a shared 2-core machine with e2e workers starting stacks at once a healthy start can
    take a minute (first-start time is measured by scripts/first_start.sh, not asserted here).
    The stack gets the same bound for its own start-up waits (``LOCAL_STACK_START_SECONDS``:
    the embedded moto, then the API), so a slow start is waited for, never an error, and a
    stack that dies is reported at once (its exit ends the wait). ``new_session``: the stack leads a
    process group of its own (a terminal's foreground job), for tests that signal the group.
    ``root``: the tree whose ``local_stack`` runs (this one; ``bench/freshness.py`` starts a baseline's)."""
    port, moto_port = free_port(), free_port()
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"matching-stack-{port}.log"
    env = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    env.update({"PORT": str(port), "MOTO_PORT": str(moto_port), "ADMIN_API_KEY": ADMIN_KEY,
                "LOCAL_STACK_START_SECONDS": str(timeout_seconds), **STORAGE_TIMEOUTS, **LIMITS_OFF, **(extra_env or {})})
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "local_stack"], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=new_session)
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_seconds
    # One client: a new one per poll costs its TLS setup. GET /v1/health probes every table and queue
    # of the stack's moto: under load an answer takes seconds, and a 1 s poll never saw one.
    with httpx.Client(timeout=15, verify=TLS) as poller:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"local stack exited early:\n{log_path.read_text()[-4000:]}")
            try:
                if poller.get(f"{base_url}/v1/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"local stack not healthy in {timeout_seconds} s:\n{log_path.read_text()[-4000:]}")
            time.sleep(0.2)
    return Stack(process, base_url, f"http://127.0.0.1:{moto_port}", ADMIN_KEY, log_path)


def stop_stack(stack: Stack) -> int:
    """SIGTERM the stack and wait; returns its exit status."""
    for client in stack.clients:
        client.close()
    stack.process.send_signal(signal.SIGTERM)
    try:
        return stack.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        stack.process.kill()
        raise


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    """One local stack shared by the end-to-end tests of a session."""
    running = start_stack()
    yield running
    stop_stack(running)


def approve_listing(stack: Stack, listing_id: str) -> dict[str, Any]:
    """Claim approval tasks through the admin route until ``listing_id``'s appears, and approve it."""
    admin = stack.admin()

    def claim() -> dict[str, Any] | None:
        response = admin.post("/v1/admin/approvals/claims", json={"max": 10})
        assert response.status_code == 200, response.text
        for task in response.json()["approvals"]:
            if task["listingId"] == listing_id:
                return dict(task)
        return None

    task = wait_until(claim, timeout_seconds=15)
    decided = admin.post(f"/v1/admin/approvals/{task['approvalId']}", json={"decision": "approve"})
    assert decided.status_code == 200, decided.text
    return dict(decided.json()["listing"])


#: Debian's chromium (``make test`` installs it: scripts/install-chromium.sh), driven by Playwright,
#: which downloads no browser. The flags keep it off the network this machine does not have.
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (a Playwright ``Browser``)."""
    from playwright.sync_api import sync_playwright

    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium), as `make test` does")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield launched
        launched.close()


#: Files that take most of the end-to-end run (the schemathesis contract run: about 150 of ~270 s
#: on one process). With ``make e2e`` on pytest-xdist workers they start first, each on a worker
#: of its own until it ends, while the other workers share the remaining files.
LONG_FILES = ("tests/e2e/test_contract.py",)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` scheduling (whole files per worker: a module's stack is started once),
    with :data:`LONG_FILES` first and alone on their workers (longest job first)."""
    from xdist.scheduler import LoadFileScheduling

    class LongFilesFirst(LoadFileScheduling):  # type: ignore[misc]
        def _assign_work_unit(self, node: Any) -> None:
            for scope in reversed(LONG_FILES):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            long_file = next(iter(self.workqueue)) in LONG_FILES
            super()._assign_work_unit(node)
            if long_file and self.workqueue:
                # A worker holds its last test back until it learns what follows (pytest's ``nextitem``):
                # a one-test file alone would wait for the shutdown signal, i.e. for every other file to
                # be handed out (measured: the contract run started 170 s late). The smallest other
                # file keeps it company; it runs after the long one.
                smallest = min(self.workqueue, key=lambda scope: len(self.workqueue[scope]))
                self.workqueue.move_to_end(smallest, last=False)
                super()._assign_work_unit(node)

        def _reschedule(self, node: Any) -> None:
            assigned = self.assigned_work.get(node, {})
            if any(scope in LONG_FILES and not all(done.values()) for scope, done in assigned.items()):
                return  # the long file keeps this worker to itself until it ends
            super()._reschedule(node)

    return LongFilesFirst(config, log) if config.getoption("dist") == "loadfile" else None
