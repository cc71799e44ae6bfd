"""A local stack of any tree behind the recording proxy, for the benchmarks that drive the public API.

:func:`running_stack` starts, for a tree (this checkout, or a baseline commit extracted by
:func:`tree`):

1. the tree's embedded AWS: ``python -m local_stack.moto_server HOST PORT`` where the tree has
   that launcher, else ``python -m moto.server -H HOST -p PORT`` (plain moto);
2. the recording proxy in front of it (:mod:`bench.proxy`);
3. ``python -m local_stack`` from the tree, with ``AWS_ENDPOINT_URL`` naming the proxy (so the
   stack creates its tables through the proxy and uses the embedded AWS through it), ``PORT``,
   ``MOTO_PORT`` and ``ADMIN_API_KEY``; the rate limiter off (its bucket write per request is not
   the cost measured), as in the end-to-end tests.

Ports come from :data:`PORTS` (8700-8799 unless ``BENCH_PORTS=LOW-HIGH`` says otherwise), so
benchmark stacks do not collide with the test stacks of the same machine. Everything started is
stopped when the context ends, whatever happened.

:meth:`BenchStack.measure` sends one API request at a time and attributes to it the DynamoDB
calls that arrived at the proxy while it was in flight (:func:`bench.proxy.attribute`) and the
stack process's CPU time over it (user + system, ``/proc/<pid>/stat``, 10 ms ticks: reported,
never budgeted). Measure when the stack is quiet (the stream consumers idle), or the indexer's
calls are attributed to the request.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Hashable, Iterator, Sequence, Set
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.proxy import Cost, Recorder, attribute, proxy_server, schemas, wait_quiet

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
ADMIN_KEY = "msk_bench_admin_key_0123456789"


def _port_range() -> range:
    low, _, high = os.environ.get("BENCH_PORTS", "8700-8799").partition("-")
    return range(int(low), int(high) + 1)


#: Ports the benchmark stacks take (the API, the embedded AWS, the proxy).
PORTS = _port_range()
#: Seconds without any DynamoDB call that mark the stream consumers (the live indexer) done: main's
#: indexer, on a loaded machine, went over 3 s without a call and then wrote a third of its units more.
QUIET_SECONDS = 10.0
#: Tries of one measured request disturbed by the indexer's writes.
ATTEMPTS = 4
#: The table the live indexer writes (its label in ``infra/resources.json``).
INDEXER_TABLE = "SearchIndexTable"
#: Clock ticks per second of ``/proc/<pid>/stat``'s CPU times.
TICKS = os.sysconf("SC_CLK_TCK")


def bench_ports(count: int, ports: range = PORTS) -> list[int]:
    """``count`` distinct ports of ``ports`` (default :data:`PORTS`) that were free a moment ago on
    :data:`HOST`, tried in a random order.

    Each chosen port stays bound until all are chosen: choosing them one at a time could hand out
    one not yet taken by the process it was chosen for (the API's port went to the proxy).

    Raises
    ------
    RuntimeError
        Fewer than ``count`` ports of ``ports`` are free.
    """
    chosen: list[int] = []
    with ExitStack() as held:
        for port in random.sample(list(ports), len(ports)):
            sock = held.enter_context(socket.socket())
            try:
                sock.bind((HOST, port))
            except OSError:
                continue
            chosen.append(port)
            if len(chosen) == count:
                return chosen
    raise RuntimeError(f"fewer than {count} free ports in {ports.start}-{ports.stop - 1} (BENCH_PORTS)")


@contextmanager
def tree(rev: str | None) -> Iterator[Path]:
    """The tree at ``rev`` (``git archive`` into a temporary folder, removed afterwards), or this
    checkout when ``rev`` is empty."""
    if not rev:
        yield ROOT
        return
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield Path(tmp)


def wait_answering(url: str, process: subprocess.Popen[bytes], what: str, log: Path | None, timeout: float = 180) -> None:
    """Poll ``url`` until it answers 200 (every 0.3 s, up to ``timeout`` seconds).

    Raises
    ------
    RuntimeError
        ``process`` exited first (with the tail of ``log``), or ``timeout`` passed.
    """
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2) as poller:
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-3000:] if log else ""
                raise RuntimeError(f"{what} exited with status {process.returncode}\n{tail}")
            try:
                if poller.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} not answering at {url} after {timeout:.0f} s")
            time.sleep(0.3)


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def _proc_status(pid: int, field_name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class Measured:
    """One measured request: its response, the DynamoDB cost attributed to it, its wall time
    (seconds, reported) and the stack process's CPU over it (milliseconds, reported)."""

    response: httpx.Response
    cost: Cost
    seconds: float
    cpu_ms: float


@dataclass
class BenchStack:
    """A running stack of one tree behind the recording proxy."""

    label: str
    root: Path
    base_url: str
    recorder: Recorder
    stack: subprocess.Popen[bytes]
    moto: subprocess.Popen[bytes]
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, key: str | None = None) -> httpx.Client:
        """An HTTP client for the API sending ``key`` as bearer token."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        client = httpx.Client(base_url=self.base_url, headers=headers, timeout=120)
        self.clients.append(client)
        return client

    def admin(self) -> httpx.Client:
        """A client with the administrator's key."""
        return self.client(ADMIN_KEY)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the stack's process so far (its threads, exited ones too)."""
        fields = Path(f"/proc/{self.stack.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def aws_rss_mb(self) -> float:
        """Resident memory of the embedded AWS, MB."""
        return _proc_status(self.moto.pid, "VmRSS") / 1024

    def stack_rss_mb(self) -> float:
        """Resident memory of the stack's process (the API, the event runner, the lane workers), MB."""
        return _proc_status(self.stack.pid, "VmRSS") / 1024

    def measure(self, client: httpx.Client, path: str, params: dict[str, Any] | None = None) -> Measured:
        """``GET path`` with ``params`` and what it cost (see the module's docstring); raises on a non-200 answer.

        A read request writes nothing to the search index: a window with such a write in it had the
        indexer at work beside it, so the request is measured again once no call passed the proxy for
        :data:`QUIET_SECONDS` (at most :data:`ATTEMPTS` times, each wait at most a minute; the last is kept)."""
        for _ in range(ATTEMPTS - 1):
            measured = self._measure_once(client, path, params)
            if not any(label.startswith(INDEXER_TABLE) for label in measured.cost.written):
                return measured
            wait_quiet(self.recorder, QUIET_SECONDS, 60)
        return self._measure_once(client, path, params)

    def _measure_once(self, client: httpx.Client, path: str, params: dict[str, Any] | None) -> Measured:
        recorder = self.recorder
        with recorder.count_lock:
            recorder.calls.clear()
        recorder.log_calls = True
        cpu, start = self.cpu_seconds(), time.monotonic()
        try:
            response = client.get(path, params=params)
        finally:
            end = time.monotonic()
            used = self.cpu_seconds() - cpu
            recorder.log_calls = False
        if response.status_code != 200:
            raise RuntimeError(f"{path} {params}: {response.status_code} {response.text[:300]}")
        with recorder.count_lock:
            cost = attribute(recorder.calls, start, end)
            recorder.calls.clear()
        return Measured(response, cost, end - start, used * 1000)


@contextmanager
def running_stack(root: Path, label: str, images: bool = True, log_name: str = "bench",
                  demo: bool = False) -> Iterator[BenchStack]:
    """Start the embedded AWS, the proxy and the local stack of the tree at ``root``; stop them on exit.

    ``images``: :class:`bench.proxy.Recorder`'s; ``log_name``: the stack's log is
    ``.local/<log_name>-<label>-stack.log`` in this checkout; ``demo``: the stack seeds the demo
    data (``python -m local_stack --demo``, what ``make run DEMO=1`` runs).
    """
    if threading.current_thread() is threading.main_thread():  # SIGTERM (timeout, CI) stops what was started here too
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    aws_port, api_port, proxy_port = bench_ports(3)
    if (root / "local_stack" / "moto_server.py").exists():
        command = [sys.executable, "-m", "local_stack.moto_server", HOST, str(aws_port)]
    else:
        command = [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(aws_port)]
    logs = ROOT / ".local"
    logs.mkdir(exist_ok=True)
    log = logs / f"{log_name}-{label}-stack.log"
    moto = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    stack: subprocess.Popen[bytes] | None = None
    proxy = None
    try:
        wait_answering(f"http://{HOST}:{aws_port}/moto-api/", moto, "the embedded AWS", None)
        template = json.loads((root / "infra" / "resources.json").read_text())
        recorder = Recorder(f"http://{HOST}:{aws_port}", schemas(template), images=images)
        proxy = proxy_server(recorder, proxy_port)
        env = {**os.environ, "PORT": str(api_port), "MOTO_PORT": str(aws_port), "ADMIN_API_KEY": ADMIN_KEY,
               "AWS_ENDPOINT_URL": f"http://{HOST}:{proxy.server_address[1]}", "LOCAL_STACK_START_SECONDS": "180",
               "AWS_CONNECT_TIMEOUT_SECONDS": "10", "AWS_READ_TIMEOUT_SECONDS": "60", "RATE_LIMITS_ENABLED": "false",
               "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_LOG_LEVEL": "WARNING"}
        env.pop("PYTHONPATH", None)
        with log.open("wb") as out:
            stack_command = [sys.executable, "-m", "local_stack", *(["--demo"] if demo else [])]
            stack = subprocess.Popen(stack_command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
        base_url = f"http://{HOST}:{api_port}"
        wait_answering(f"{base_url}/v1/health", stack, f"the local stack ({label})", log)
        bench = BenchStack(label, root, base_url, recorder, stack, moto)
        try:
            yield bench
        finally:
            for client in bench.clients:
                client.close()
    finally:
        _stop(stack)
        if proxy is not None:
            proxy.shutdown()
            proxy.server_close()
        _stop(moto)


def budget_verdict(missed: Sequence[tuple[Hashable, str]], pending: Set[Hashable], enforce_pending: bool, started: float) -> bool:
    """Print the budgets a benchmark missed and its verdict; return whether it failed.

    Parameters
    ----------
    missed:
        ``(budget, message)`` per budget missed, ``budget`` as the benchmark names it in ``pending``.
    pending:
        The budgets the tree does not meet yet: a miss prints ``PENDING`` and fails only with
        ``enforce_pending`` (``--check --pending``); one met prints ``NOW MET``.
    started:
        When the run began (``time.monotonic()`` seconds), for the verdict line.

    Returns
    -------
    bool
        True when a budget outside ``pending`` (or, with ``enforce_pending``, any) was missed.
    """
    failed = False
    for budget, message in missed:
        is_pending = budget in pending
        print(f"{'PENDING' if is_pending else 'BUDGET MISSED'}: {message}")
        failed |= enforce_pending or not is_pending
    for budget in sorted(pending - {b for b, _ in missed}, key=str):
        print(f"NOW MET (remove from PENDING): {' '.join(budget) if isinstance(budget, tuple) else budget}")
    print(f"\n{'FAIL' if failed else 'OK'} ({time.monotonic() - started:.0f} s)")
    return failed
