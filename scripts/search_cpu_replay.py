"""The API's CPU per search page with and without the embedded AWS in the same process (docs/search.md,
"Where a search page's CPU goes").

usage: python scripts/search_cpu_replay.py [LISTINGS=5000] [USERS=2000] [ROUNDS=9]

``bench/search.py`` measures each issue-20 row in one process that also hosts moto: the request's
process CPU minus the thread CPU spent inside moto's ``BotocoreStubber`` (DynamoDB's own work).
This script loads the same data, runs the same rows through the same app, and measures each
request twice, interleaved:

- **in process**: as the benchmark does (moto answers every call);
- **replayed**: moto's answer to each distinct request (operation and body) was recorded on the
  first run and is served from memory, so the API's code runs with the same answers but without
  moto's work between its steps.

Both columns count the same code on our side (Chalice, the service, the engine, botocore's client
side, serialization). A row whose in-process figure were well above its replayed one would pay for
moto sharing its process (caches and allocator state after moto's work), a cost a Lambda function
talking to DynamoDB does not have; measured 2026-11-28 (docs/search.md) the two agree within
3 % for the posting rows and the detail, 18 % for the range rows and 33-63 % for the geo rows
(dozens of calls from the geo walk's threads), and the median ratio is the same (4.2x). Medians
over ``ROUNDS``, in ms; compare rows of one run.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                   "POWERTOOLS_LOG_LEVEL": "WARNING"})

from botocore.awsrequest import AWSResponse
from moto.core.botocore_stubber import BotocoreStubber, MockRawResponse

from bench import search

#: Moto's answers by (``X-Amz-Target``, request body): ``(status, headers, body)``.
_tape: dict[tuple[str, bytes], tuple[int, Any, bytes]] = {}
_replaying = [False]


def _request_key(request: Any) -> tuple[str, bytes]:
    body = request.body or b""
    return str(request.headers.get("X-Amz-Target", "")), body if isinstance(body, bytes) else str(body).encode()


def _answer(self: BotocoreStubber, event_name: str, request: Any, **kwargs: Any) -> AWSResponse | None:
    """moto's answer, recorded; served from the tape while replaying."""
    key = _request_key(request)
    if _replaying[0] and key in _tape:
        status, headers, recorded = _tape[key]
        return AWSResponse(request.url, status, headers, MockRawResponse(recorded))
    answered = self.process_request(request)
    if answered is None:
        return None
    status, headers, body = answered
    _tape[key] = (status, headers, body if isinstance(body, bytes) else str(body).encode())
    return AWSResponse(request.url, status, headers, MockRawResponse(body))  # type: ignore[arg-type]  # moto types headers as a dict


def _both(meter: search.Meter, runs: dict[str, tuple[Callable[[], Any], frozenset[str]]]) -> dict[str, search.Figures]:
    """In place of ``search._interleaved``: each row's CPU in process and replayed, rows interleaved."""
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    in_process: dict[str, list[float]] = {name: [] for name in runs}
    replayed: dict[str, list[float]] = {name: [] for name in runs}
    calls: dict[str, int] = {}
    for _ in range(rounds):
        for name, (run, _skip) in runs.items():
            for replay, into in ((False, in_process), (True, replayed)):
                _replaying[0] = replay
                meter.reset()
                started = time.process_time()
                run()
                into[name].append((time.process_time() - started - meter.inside_cpu) * 1000)
                calls[name] = meter.calls
    _replaying[0] = False
    print(f"\n{'row':36} {'calls':>5} {'in process ms':>14} {'replayed ms':>12} {'ratio':>6}")
    for name in runs:
        a, b = statistics.median(in_process[name]), statistics.median(replayed[name])
        print(f"{name:36} {calls[name]:5d} {a:14.2f} {b:12.2f} {a / b:6.2f}")
    for label, figures in (("in process", in_process), ("replayed", replayed)):
        rows = [statistics.median(v) for name, v in figures.items() if name != search.DETAIL]
        detail = statistics.median(figures[search.DETAIL])
        print(f"{label}: median search page {statistics.median(rows):.2f} ms, listing detail {detail:.2f} ms, "
              f"ratio {statistics.median(rows) / detail:.2f}x")
    return {name: {"items": 0, "skipped": 0, "kb": 0, "calls": calls[name], "rt": 0, "cpu": 0} for name in runs}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    users = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    BotocoreStubber.__call__ = _answer  # type: ignore[method-assign]  # metering() wraps it in turn
    search._interleaved = _both
    with search.embedded_aws():
        everything, _, _ = search.load_data(count, users)
        search.engine_rows(everything)


if __name__ == "__main__":
    main()
