"""Webhook delivery benchmark (issue 4, "Performance").

500 ``message.new`` events fanned out to 20 webhooks whose receivers run on 127.0.0.1 in a
child process (so their CPU does not compete with the sender's): 19 answer 200 at once, one
reads the request and never answers. The events go through the real stream consumer
(``chalicelib.webhooks.handlers.handle_outbox_batch``: fan-out, lanes, thread pool, address
checks, signing, the httpcore sender with the real 10 s total deadline, the failure policy)
in Lambda-sized batches (the ``deliver_webhooks`` batch size of ``app.py``), one batch after
another as one stream shard feeds them.

The sequential baseline, measured in the same run on a fresh set of webhooks pointing at the
same receivers, attempts the same deliveries one after another with the same sender, deadline
and failure policy (so its hanging webhook is switched off after 5 timeouts too).

DynamoDB: the webhooks and the fan-out reads are in the embedded AWS (in-process moto). The
per-attempt writes (claim, attempt log, counters, retry messages) go to an in-memory stand-in
with the same conditions that counts the calls, because moto executes each call in Python
(several ms under the GIL) and would be what this measures (DESIGN §1: local benchmarks count
calls, not milliseconds of moto); the report gives the calls per delivery. ``--full-path``
sends them to a moto server child process instead (moto-bound: reported, budget not applied).

Budget (``--check`` exits 1 when missed): every batch finishes its healthy deliveries within
2 s, plus one 10 s timeout for a batch in which the hanging webhook was still active: the
hanging receiver costs one deadline per batch, not one per attempt; and all 9,500 healthy
deliveries arrive. The last line sums up.

Usage: ``python bench/webhooks.py [--events 500] [--receivers 20] [--full-path] [--check]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import threading
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, bench/ is sys.path[0]: its modules (bench/requests.py) would shadow libraries.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HEALTHY_BATCH_BUDGET_SECONDS = 2.0
TIMEOUT_SECONDS = 10.0


# -- receivers (child process) ----------------------------------------------------------------------------

def _serve_receivers(count: int, ports: Any, stop: Any, results: Any) -> None:
    """Child process: ``count`` receivers on 127.0.0.1, receiver 0 hangs; reports arrival times at stop."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    arrivals: dict[int, list[float]] = {i: [] for i in range(count)}
    lock = threading.Lock()
    hang = threading.Event()

    def handler_for(index: int) -> type[BaseHTTPRequestHandler]:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    arrivals[index].append(time.time())
                if index == 0:
                    hang.wait(120)
                    return
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        return Handler

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 1024

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass

    servers = [Server(("127.0.0.1", 0), handler_for(i)) for i in range(count)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    ports.put([s.server_address[1] for s in servers])
    stop.wait()
    hang.set()
    with lock:
        results.put({i: list(times) for i, times in arrivals.items()})
    for server in servers:
        server.shutdown()


@dataclass
class Receivers:
    """Handle on the receivers' child process."""

    process: Any
    ports: list[int]
    stop: Any
    results: Any

    def arrivals(self) -> dict[int, list[float]]:
        """Stop the receivers and return the arrival times (epoch seconds) per receiver."""
        self.stop.set()
        found: dict[int, list[float]] = self.results.get(timeout=30)
        self.process.join(10)
        return found


def start_receivers(count: int) -> Receivers:
    context = multiprocessing.get_context("spawn")
    ports, results, stop = context.Queue(), context.Queue(), context.Event()
    process = context.Process(target=_serve_receivers, args=(count, ports, stop, results), daemon=True)
    process.start()
    return Receivers(process, ports.get(timeout=30), stop, results)


# -- per-attempt writes: in-memory stand-in -----------------------------------------------------------------

@dataclass
class Bookkeeping:
    """The per-attempt DynamoDB and SQS writes of :mod:`chalicelib.webhooks.delivery`, in memory, with
    the same conditions (claims once per attempt, ``failCount`` only while active, switch-off at the
    limit), counting the calls that would go to AWS."""

    calls: Counter[str] = field(default_factory=Counter)
    claims: dict[tuple[str, str], int] = field(default_factory=dict)
    counters: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def install(self, stack: ExitStack) -> None:
        from chalicelib.webhooks import deliveries, repository, retries

        for module, name in ((deliveries, "claim"), (deliveries, "log_attempt"), (repository, "add_failure"),
                             (repository, "deactivate"), (repository, "reset_failures"), (retries, "schedule")):
            original = getattr(module, name)
            setattr(module, name, getattr(self, name))
            stack.callback(setattr, module, name, original)

    def _state(self, webhook_id: str) -> dict[str, Any]:
        return self.counters.setdefault(webhook_id, {"webhookId": webhook_id, "failCount": 0, "active": True})

    def claim(self, webhook_id: str, event_id: str, attempt: int) -> bool:
        with self._lock:
            self.calls["dynamodb"] += 1
            if self.claims.get((webhook_id, event_id), 0) != attempt - 1:
                return False
            self.claims[(webhook_id, event_id)] = attempt
            return True

    def log_attempt(self, webhook_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.calls["dynamodb"] += 1
        return entry

    def add_failure(self, webhook_id: str) -> dict[str, Any] | None:
        with self._lock:
            self.calls["dynamodb"] += 1
            state = self._state(webhook_id)
            if not state["active"]:
                return None
            state["failCount"] += 1
            return dict(state)

    def deactivate(self, webhook_id: str, limit: int, now: str) -> bool:
        from chalicelib import storage
        from chalicelib.config import settings

        with self._lock:
            self.calls["dynamodb"] += 1
            state = self._state(webhook_id)
            if not state["active"] or state["failCount"] < limit:
                return False
            state["active"] = False
        # the fan-out of later batches reads the table: switch it off there too
        storage.update(settings().WEBHOOKS_TABLE, {"webhookId": webhook_id}, "SET active = :no",
                       ExpressionAttributeValues=storage.values(no=False))
        return True

    def reset_failures(self, webhook_id: str) -> bool:
        with self._lock:
            self.calls["dynamodb"] += 1
            state = self._state(webhook_id)
            changed = state["failCount"] > 0
            state["failCount"] = 0
            return bool(changed)

    def schedule(self, delivery: Any, delay_seconds: int) -> None:
        with self._lock:
            self.calls["sqs"] += 1


# -- the runs ------------------------------------------------------------------------------------------------

class _Context:
    """The Lambda context's remaining time (the ``deliver_webhooks`` timeout of ``.chalice/config.json``: 60 s)."""

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def _register(owner: str, ports: list[int]) -> list[str]:
    from chalicelib.auth.service import Caller
    from chalicelib.webhooks import service
    from chalicelib.webhooks.models import WebhookCreate

    return [service.create_webhook(Caller(owner), WebhookCreate(url=f"http://127.0.0.1:{p}/hook", name=f"r{i}")).id
            for i, p in enumerate(ports)]


def _events(count: int, owner: str) -> list[dict[str, Any]]:
    from chalicelib import outbox, storage

    items = []
    for i in range(count):
        data = {"conversationId": "cnv_bench", "messageId": f"msg_{i}", "senderId": "usr_sender", "senderName": "Bench",
                "content": f"message {i}", "isApiSent": True, "createdAt": "2026-11-22T00:00:00.000Z"}
        op = outbox.event_op("message.new", data, {"recipientId": owner, "senderId": "usr_sender"})
        item = storage.from_item(op["Put"]["Item"])
        assert item is not None
        items.append(item)
    return items


def _stream_event(items: list[dict[str, Any]], first: int) -> dict[str, Any]:
    from chalicelib import storage

    return {"Records": [
        {"eventID": str(first + n), "eventName": "INSERT", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
         "eventSourceARN": "arn:aws:dynamodb:us-east-1:000000000000:table/EventsTable/stream/bench",
         "dynamodb": {"Keys": {"eventId": {"S": item["eventId"]}}, "NewImage": storage.to_item(item),
                      "SequenceNumber": str(first + n), "SizeBytes": 1, "StreamViewType": "NEW_AND_OLD_IMAGES"}}
        for n, item in enumerate(items)
    ]}


@dataclass
class Run:
    """What one run measured."""

    seconds: float
    results: Counter[str]
    batch_seconds: list[tuple[float, bool]] = field(default_factory=list)  # (seconds, hanging webhook active)

    @property
    def attempts(self) -> int:
        return self.results["sent"] + self.results["failed"]

    def over_budget(self) -> list[str]:
        """The batches that took longer than their budget."""
        missed = []
        for index, (seconds, hanging) in enumerate(self.batch_seconds, start=1):
            budget = HEALTHY_BATCH_BUDGET_SECONDS + (TIMEOUT_SECONDS if hanging else 0.0)
            if seconds > budget:
                missed.append(f"batch {index} took {seconds:.2f} s, budget {budget:g} s")
        return missed


def concurrent_run(items: list[dict[str, Any]], batch_size: int, hanging_id: str) -> Run:
    """The real consumer, batch after batch as one stream shard feeds it."""
    from chalicelib.webhooks import dispatcher, handlers, repository

    run = Run(0.0, Counter())
    original = dispatcher.run

    def counting(jobs: Any, time_left: Any = None) -> Any:
        report = original(jobs, time_left)
        run.results.update(report.results)
        return report

    dispatcher.run = counting  # type: ignore[assignment]
    started = time.perf_counter()
    try:
        for first in range(0, len(items), batch_size):
            hanging = bool((repository.get(hanging_id) or {}).get("active"))
            batch_started = time.perf_counter()
            result = handlers.handle_outbox_batch(_stream_event(items[first:first + batch_size], first + 1), _Context())
            run.batch_seconds.append((time.perf_counter() - batch_started, hanging))
            assert not result["batchItemFailures"], result
    finally:
        dispatcher.run = original  # type: ignore[assignment]
    run.seconds = time.perf_counter() - started
    return run


def sequential_run(items: list[dict[str, Any]]) -> Run:
    """The baseline: every delivery after the previous one, same sender, deadline and policy."""
    from chalicelib.webhooks.events import Delivery, Event

    from chalicelib.webhooks import delivery, fanout

    run = Run(0.0, Counter())
    started = time.perf_counter()
    targets: dict[str, Any] = {}
    for item in items:
        event = Event.from_outbox(item)
        for webhook in fanout.recipients(event, fanout.WebhookDirectory()):
            target = targets.setdefault(webhook["webhookId"], delivery.Target(webhook))
            target._failed_in_batch = False  # one delivery per "batch": no postponing in the baseline
            run.results[delivery.attempt(Delivery(event, webhook["webhookId"]), target).value] += 1
    run.seconds = time.perf_counter() - started
    return run


def _prepare_aws(full_path: bool, stack: ExitStack) -> None:
    os.environ.update({
        "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
        "ALLOW_INSECURE_WEBHOOKS": "true", "WEBHOOK_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
        "WEBHOOK_RETRY_DELAYS_SECONDS": "30,120,600", "POWERTOOLS_LOG_LEVEL": "WARNING",
    })
    os.environ.pop("AWS_ENDPOINT_URL", None)
    if full_path:
        from local_stack.__main__ import start_moto
        from tests.e2e.conftest import free_port

        port = free_port()
        moto = start_moto("127.0.0.1", port)
        stack.callback(moto.wait, 10)
        stack.callback(moto.terminate)
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    else:
        from moto import mock_aws

        stack.enter_context(mock_aws())

    from chalicelib import storage
    from chalicelib.config import settings
    from local_stack.resources import create_resources

    os.environ.update(create_resources())
    settings.cache_clear()
    storage.client.cache_clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--receivers", type=int, default=20, help="receivers (webhooks); the first one hangs")
    parser.add_argument("--full-path", action="store_true", help="per-attempt writes to a moto server too")
    parser.add_argument("--check", action="store_true", help="exit 1 when the budget is missed")
    args = parser.parse_args()

    receivers = start_receivers(args.receivers)
    with ExitStack() as stack:
        stack.callback(receivers.stop.set)
        _prepare_aws(args.full_path, stack)
        bookkeeping = Bookkeeping()
        if not args.full_path:
            bookkeeping.install(stack)

        from chalice.app import DynamoDBEventConfig

        from app import app

        batch_size = next(s.batch_size for s in app.event_sources
                          if isinstance(s, DynamoDBEventConfig) and s.handler_string.endswith("deliver_webhooks"))
        hooks = _register("usr_bench_owner", receivers.ports)
        _register("usr_bench_baseline", receivers.ports)
        items = _events(args.events, "usr_bench_owner")
        baseline_items = _events(args.events, "usr_bench_baseline")
        expected_healthy = args.events * (args.receivers - 1)
        writes = "moto server" if args.full_path else "in-memory stand-in (calls counted)"
        print(f"{args.events} events x {args.receivers} webhooks on 127.0.0.1 (1 hangs), batches of {batch_size}, "
              f"{TIMEOUT_SECONDS:g} s total deadline per delivery; per-attempt writes: {writes}")

        wall_start = time.time()
        run = concurrent_run(items, batch_size, hooks[0])
        calls = Counter(bookkeeping.calls)
        baseline_start = time.time()
        baseline = sequential_run(baseline_items)
        arrivals = receivers.arrivals()

    healthy = sorted(t for i, times in arrivals.items() if i != 0 for t in times if wall_start <= t < baseline_start)
    healthy_done = (healthy[-1] - wall_start) if healthy else float("inf")
    rate = run.attempts / run.seconds
    baseline_rate = baseline.attempts / baseline.seconds

    print(f"\n{'run':<12} {'wall s':>8} {'attempts':>9} {'sent':>6} {'failed':>6} {'skipped':>7} {'postponed':>9} {'deliveries/s':>13}")
    for name, measured in (("concurrent", run), ("sequential", baseline)):
        r = measured.results
        print(f"{name:<12} {measured.seconds:>8.2f} {measured.attempts:>9} {r['sent']:>6} {r['failed']:>6} "
              f"{r['skipped']:>7} {r['postponed']:>9} {measured.attempts / measured.seconds:>13.1f}")
    slowest_free = max((sec for sec, hanging in run.batch_seconds if not hanging), default=0.0)
    slowest_hanging = max((sec for sec, hanging in run.batch_seconds if hanging), default=0.0)
    print(f"\nbatches: {len(run.batch_seconds)}; slowest with the hanging webhook active: {slowest_hanging:.2f} s "
          f"(budget {HEALTHY_BATCH_BUDGET_SECONDS + TIMEOUT_SECONDS:g} s), slowest other: {slowest_free:.2f} s "
          f"(budget {HEALTHY_BATCH_BUDGET_SECONDS:g} s)")
    print(f"healthy receivers had {len(healthy)}/{expected_healthy} deliveries after {healthy_done:.2f} s")
    if calls:
        print(f"AWS calls of the per-attempt writes: {calls['dynamodb']} DynamoDB ({calls['dynamodb'] / max(run.attempts, 1):.2f} "
              f"per attempt), {calls['sqs']} SQS")
    print(f"speed-up over the sequential baseline: {baseline.seconds / run.seconds:.1f}x wall, {rate / baseline_rate:.1f}x deliveries/s")

    failures = run.over_budget()
    if len(healthy) != expected_healthy or run.results["sent"] != expected_healthy:
        failures.append(f"healthy deliveries: {len(healthy)} received, {run.results['sent']} sent, {expected_healthy} expected")
    for failure in failures:
        print(f"BUDGET MISSED: {failure}")
    verdict = "OVER BUDGET" if failures else "within budget"
    print(f"webhooks bench: {run.attempts} deliveries in {run.seconds:.2f} s ({rate:.0f}/s) vs sequential {baseline.seconds:.2f} s "
          f"({baseline_rate:.0f}/s), {baseline.seconds / run.seconds:.1f}x faster; budget: {verdict}")
    if args.full_path:
        print("(--full-path: moto executes every write in Python; the budget applies to the default mode)")
        return 0
    return 1 if failures and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
