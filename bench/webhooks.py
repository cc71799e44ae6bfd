"""Webhook delivery benchmark: two tenants, one with a hanging receiver (issue 10).

The real pipeline of the local stack: a moto server child process (``local_stack.moto_server``)
with the template's tables and queues, the event runner (``local_stack.runner``) with its
concurrent FIFO lane consumers, and the app's handlers (outbox stream -> delivery lanes ->
attempts -> retry queue -> lanes). Receivers run on 127.0.0.1 in another child process (so their
CPU does not compete with the sender's): tenant A's receiver reads each request and never
answers; tenant B's answers 200 at once.

Two phases in one run:

* ``baseline``: only tenant B gets events (``--rate`` per second for ``--baseline-seconds``);
* ``two tenants``: A and B both get events at ``--rate`` per second for ``--seconds``.

An event's latency is from just before its outbox write to its arrival at B's receiver (both
epoch clocks of this machine). The delivery deadline is ``--timeout`` seconds (default 2 s
instead of the production 10 s, so that A's five attempts fit in a short run; the isolation
does not depend on it) and the retry delays ``--delays`` (default 2,3,4 s).

Budget (``--check`` exits 1 when missed): B's p99 latency while A hangs < 2 s, every B event
delivered, and A's receiver gets exactly 5 requests (then A's webhook is off and its lane
drains). The baseline's p99 is printed beside it for the ratio.

Usage: ``python bench/webhooks.py [--seconds 20] [--baseline-seconds 8] [--rate 1] [--check]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

P99_BUDGET_SECONDS = 2.0
EXPECTED_HANGING_ATTEMPTS = 5
HANGING, HEALTHY = 0, 1


# -- receivers (child process) ----------------------------------------------------------------------------

def _serve_receivers(count: int, ports: Any, stop: Any, results: Any) -> None:
    """Child process: ``count`` receivers on 127.0.0.1, receiver 0 hangs; reports arrival times at stop."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    arrivals: dict[int, list[tuple[float, str]]] = {i: [] for i in range(count)}
    lock = threading.Lock()
    hang = threading.Event()

    def handler_for(index: int) -> type[BaseHTTPRequestHandler]:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                content = str(json.loads(body)["data"].get("content"))
                with lock:
                    arrivals[index].append((time.time(), content))
                if index == HANGING:
                    hang.wait(120)
                    return
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        return Handler

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass

    servers = [Server(("127.0.0.1", 0), handler_for(i)) for i in range(count)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    ports.put([s.server_address[1] for s in servers])
    while not stop.wait(0.05):
        with lock:
            results.put({i: list(times) for i, times in arrivals.items()})
    hang.set()
    for server in servers:
        server.shutdown()


@dataclass
class Receivers:
    """Handle on the receivers' child process; :meth:`arrivals` polls its latest report."""

    process: Any
    ports: list[int]
    stop: Any
    results: Any
    latest: dict[int, list[tuple[float, str]]]

    def arrivals(self) -> dict[int, list[tuple[float, str]]]:
        """Arrival ``(epoch seconds, content)`` per receiver, as last reported (every 50 ms)."""
        while not self.results.empty():
            self.latest = self.results.get()
        return self.latest

    def close(self) -> None:
        self.stop.set()
        self.process.join(10)


def start_receivers(count: int) -> Receivers:
    context = multiprocessing.get_context("spawn")
    ports, results, stop = context.Queue(), context.Queue(), context.Event()
    process = context.Process(target=_serve_receivers, args=(count, ports, stop, results), daemon=True)
    process.start()
    return Receivers(process, ports.get(timeout=30), stop, results, {i: [] for i in range(count)})


# -- the stack ----------------------------------------------------------------------------------------------

def _start_stack(stack: ExitStack, timeout: float, delays: str) -> Any:
    """moto server + resources + the event runner (started); returns the runner."""
    from local_stack.__main__ import stage_environment, start_moto
    from tests.e2e.conftest import free_port

    os.environ.update(stage_environment("local"))
    os.environ.update({
        "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
        "ALLOW_INSECURE_WEBHOOKS": "true", "WEBHOOK_TIMEOUT_SECONDS": str(timeout),
        "WEBHOOK_RETRY_DELAYS_SECONDS": delays, "POWERTOOLS_LOG_LEVEL": "ERROR",
    })
    port = free_port()
    moto = start_moto("127.0.0.1", port)
    stack.callback(moto.wait, 10)
    stack.callback(moto.terminate)
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"

    from chalicelib import storage
    from chalicelib.config import settings
    from local_stack.resources import create_resources

    os.environ.update(create_resources())
    settings.cache_clear()
    storage.client.cache_clear()

    from app import app
    from local_stack.runner import EventRunner

    runner = EventRunner(app)
    runner.start()
    stack.callback(runner.stop)
    return runner


def _tenant(name: str, port: int) -> tuple[str, str]:
    """A user with one webhook to ``port``; returns ``(userId, webhookId)``."""
    from chalicelib.auth.service import Caller
    from chalicelib.users.models import AdminUserCreate
    from chalicelib.users.service import create_user
    from chalicelib.webhooks import service
    from chalicelib.webhooks.models import WebhookCreate

    user = create_user(AdminUserCreate(displayName=name, channels={"telegram": f"@{name.lower()}"}))  # type: ignore[arg-type]
    webhook = service.create_webhook(Caller(user.userId), WebhookCreate(url=f"http://127.0.0.1:{port}/hook"))
    return user.userId, webhook.id


def _emit(recipient: str, content: str) -> None:
    """One ``message.new`` outbox event to ``recipient``, written as the services write it."""
    from chalicelib import outbox, storage

    data = {"conversationId": "cnv_bench", "messageId": f"msg_{content}", "senderId": "usr_sender", "senderName": "Bench",
            "content": content, "isApiSent": True, "createdAt": "2026-11-22T00:00:00.000Z"}
    storage.transact([outbox.event_op("message.new", data, {"recipientId": recipient, "senderId": "usr_sender"})])


@dataclass
class Phase:
    """What one phase measured for the healthy tenant."""

    name: str
    sent: int
    latencies: list[float]

    def percentile(self, q: float) -> float:
        """The ``q`` quantile (0..1) of the latencies, seconds (nearest rank)."""
        ordered = sorted(self.latencies)
        if not ordered:
            return float("inf")
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def run_phase(name: str, receivers: Receivers, tenants: dict[int, str], seconds: float, rate: float) -> Phase:
    """Send events to ``tenants`` (receiver index -> userId) at ``rate`` per second; wait for B's deliveries."""
    written: dict[str, float] = {}
    interval = 1.0 / rate
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        for index, user_id in tenants.items():
            content = f"{name}-{index}-{n}"
            if index == HEALTHY:
                written[content] = time.time()
            _emit(user_id, content)
        n += 1
        time.sleep(max(0.0, start + n * interval - time.monotonic()))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        arrived = {c: at for at, c in receivers.arrivals()[HEALTHY] if c in written}
        if len(arrived) == len(written):
            break
        time.sleep(0.05)
    arrived = {c: at for at, c in receivers.arrivals()[HEALTHY] if c in written}
    return Phase(name, len(written), [arrived[c] - written[c] for c in written if c in arrived])


def _wait_inactive(webhook_id: str, timeout: float) -> bool:
    from chalicelib.webhooks import repository

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        item = repository.get(webhook_id, consistent=True) or {}
        if not item.get("active"):
            return True
        time.sleep(0.1)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the two-tenant phase")
    parser.add_argument("--baseline-seconds", type=float, default=8.0, help="length of the healthy-only phase")
    parser.add_argument("--rate", type=float, default=1.0, help="events per second per tenant")
    parser.add_argument("--timeout", type=float, default=2.0, help="WEBHOOK_TIMEOUT_SECONDS (production: 10)")
    parser.add_argument("--delays", default="2,3,4", help="WEBHOOK_RETRY_DELAYS_SECONDS")
    parser.add_argument("--check", action="store_true", help="exit 1 when the budget is missed")
    parser.add_argument("--trace", action="store_true", help="print every arrival (seconds from the run's start)")
    args = parser.parse_args()
    started = time.time()

    receivers = start_receivers(2)
    with ExitStack() as stack:
        stack.callback(receivers.close)
        _start_stack(stack, args.timeout, args.delays)
        hanging_user, hanging_hook = _tenant("Hanging", receivers.ports[HANGING])
        healthy_user, _ = _tenant("Healthy", receivers.ports[HEALTHY])
        baseline = run_phase("baseline", receivers, {HEALTHY: healthy_user}, args.baseline_seconds, args.rate)
        both = run_phase("two-tenants", receivers, {HANGING: hanging_user, HEALTHY: healthy_user}, args.seconds, args.rate)
        switched_off = _wait_inactive(hanging_hook, timeout=EXPECTED_HANGING_ATTEMPTS * (args.timeout + 5))
        time.sleep(max(int(d) for d in args.delays.split(",")) + 1.0)  # a retry that still came would show now
        attempts = len(receivers.arrivals()[HANGING])

    if args.trace:
        for index, arrivals in receivers.latest.items():
            print(f"receiver {index}: " + ", ".join(f"{c}@{at - started:.2f}" for at, c in arrivals))
    print(f"{'phase':<12} {'B events':>8} {'delivered':>9} {'p50 s':>7} {'p99 s':>7} {'max s':>7} {'A attempts':>10}")
    for phase, hanging_attempts in ((baseline, "-"), (both, str(attempts))):
        top = max(phase.latencies, default=float("inf"))
        print(f"{phase.name:<12} {phase.sent:>8} {len(phase.latencies):>9} {phase.percentile(0.5):>7.3f} "
              f"{phase.percentile(0.99):>7.3f} {top:>7.3f} {hanging_attempts:>10}")
    ratio = both.percentile(0.99) / max(baseline.percentile(0.99), 1e-9)
    print(f"p99 two-tenants / baseline: {ratio:.2f}x; deadline {args.timeout:g} s, retry delays {args.delays} s, "
          f"A's webhook switched off: {switched_off}")
    failures = []
    if both.percentile(0.99) >= P99_BUDGET_SECONDS:
        failures.append(f"B's p99 {both.percentile(0.99):.3f} s >= {P99_BUDGET_SECONDS} s")
    if len(both.latencies) != both.sent or len(baseline.latencies) != baseline.sent:
        failures.append("not every healthy event was delivered")
    if attempts != EXPECTED_HANGING_ATTEMPTS:
        failures.append(f"A's receiver got {attempts} requests, expected {EXPECTED_HANGING_ATTEMPTS}")
    for failure in failures:
        print(f"BUDGET MISSED: {failure}")
    print("webhooks: " + ("OVER BUDGET" if failures else "within budget") +
          f" (p99 < {P99_BUDGET_SECONDS:g} s, hanging attempts == {EXPECTED_HANGING_ATTEMPTS})")
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
