"""Cold start: what ``import app`` loads and costs beyond the floor of chalice, boto3 and pydantic's models.

A Lambda cold start imports ``app.py`` before serving the first request; what the service adds
on top of its three unavoidable libraries is what this benchmark watches. The floor is
``import chalice, boto3; from pydantic import BaseModel``: pydantic 2's package loads its model
machinery on the first attribute read (``pydantic.__getattr__``), so a bare ``import pydantic``
would leave out what any service with one model pays.

Two measures. The modules ``import app`` adds to ``sys.modules`` beyond the floor: a count,
the same on every machine. And the CPU time: each repetition starts
two fresh interpreters one after the other, alternating which goes first, and reads each child's
CPU time (user + system, ``os.wait4``), so a noisy neighbour slows both sides of a pair alike.
The ratio is the median of the per-pair ratios.

Both sides run with the functions' environment: the variables every stage of
``.chalice/config.json`` sets (e.g. ``PYDANTIC_DISABLE_PLUGINS``, which spares pydantic the scan
of every installed distribution for plugins) and the template's placeholder resource names
(``local_stack.resources``); nothing is called at import. Bytecode caches are warmed by one
unmeasured run of each side first.

Budgets (``--check`` exits 1 when one is missed): at most :data:`MAX_MODULES` modules beyond the
floor (``--max-modules``), and a median ratio ``import app`` / floor of at most :data:`MAX_RATIO`
(``--max-ratio``). The count is the tight one; the ratio only catches a gross regression, since
the median of 31 pairs still moved by 0.04 between machines (measured figures:
docs/decisions.md, "Cold start").

The route modules load their domain's code with the first request of one of their routes
(:mod:`chalicelib.kernel.lazy_imports`), so part of what a cold start once paid moves to that request.
``--first-requests N`` also prints what the first requests cost (informational, no budget): in
N fresh interpreters on an in-process moto, the CPU and wall time of ``import app``, then of a
first and a second ``GET /v1/health`` and ``GET /v1/listings/search`` (medians).

Usage, from the repository root:
``python bench/cold_start.py [--check] [--max-ratio R] [--repetitions N] [--first-requests N]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from local_stack.resources import placeholder_environment  # noqa: E402  (needs the root on sys.path)

#: The two programs, run with ``python -c``.
APP = "import app"
FLOOR = "import chalice, boto3; from pydantic import BaseModel"
#: Budget: median CPU ratio of APP over FLOOR (measured 1.28 on a 2-core machine).
MAX_RATIO = 1.4
#: Budget: modules ``import app`` adds beyond FLOOR (measured 143: 94 of the service, 40 of powertools'
#: package, which its ``Logger`` import loads whole, and 9 others).
MAX_MODULES = 150
#: A child that prints how many modules APP adds to ``sys.modules`` after FLOOR.
COUNT_MODULES = f"import sys; {FLOOR}; before = set(sys.modules); {APP}; print(len(set(sys.modules) - before))"
#: Pairs per run: on the shared 2-core machines one pair's ratio ranges over 1.1-1.9, and the median of 11
#: pairs moved by +-0.05 from run to run (1.41-1.51 on one tree in one hour), 31 pairs by +-0.01
#: (docs/decisions.md, "Cold start").
DEFAULT_REPETITIONS = 31

#: A child of ``--first-requests``: moto with the template's resources and one API key, then the
#: timed steps; prints ``{step: [CPU ms, wall ms]}`` as JSON on its last line.
FIRST_REQUESTS = r"""
import hashlib, json, os, time
from moto import mock_aws
import boto3
from chalice.test import Client
from local_stack.resources import create_resources

KEY = "msk_" + "a" * 43
with mock_aws():
    os.environ.update(create_resources())
    boto3.client("dynamodb").put_item(TableName=os.environ["API_KEYS_TABLE"], Item={
        "keyHash": {"S": hashlib.sha256(KEY.encode()).hexdigest()}, "userId": {"S": "01JBENCHUSER0000000000000"},
        "scopes": {"L": []}, "createdAt": {"S": "2026-01-01T00:00:00Z"}})
    steps = {}

    def step(name, call):
        cpu, wall = time.process_time(), time.perf_counter()
        result = call()
        steps[name] = [(time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000]
        return result

    app = step("import app", lambda: __import__("app").app)
    with Client(app) as client:
        for path, headers in (("/v1/health", {}), ("/v1/listings/search?pageSize=5", {"authorization": f"Bearer {KEY}"})):
            for order in ("1st", "2nd"):
                response = step(f"{order} GET {path.split('?')[0]}", lambda: client.http.get(path, headers=headers))
                assert response.status_code == 200, response.body
    print(json.dumps(steps))
"""


def cpu_seconds(code: str, environment: dict[str, str]) -> float:
    """CPU time (user + system, seconds) of a fresh ``python -c code`` run from the repository root.

    Raises
    ------
    RuntimeError
        The child failed (its stderr is included).
    """
    process = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    error = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"python -c {code!r} failed: {error.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime


def modules_beyond_floor(environment: dict[str, str]) -> int:
    """How many modules ``import app`` adds to ``sys.modules`` after the floor's imports, in a fresh interpreter.

    Raises
    ------
    subprocess.CalledProcessError
        The child failed.
    """
    child = subprocess.run([sys.executable, "-c", COUNT_MODULES], cwd=ROOT, env=environment, capture_output=True,
                           text=True, check=True)
    return int(child.stdout.strip().splitlines()[-1])


def functions_environment() -> dict[str, str]:
    """The process environment plus the stages' variables and the template's placeholder resource names."""
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    environment = {
        **os.environ, **config.get("environment_variables", {}), **placeholder_environment(),
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def measure(repetitions: int) -> tuple[list[float], list[float]]:
    """``repetitions`` alternating pairs: (app CPU seconds, floor CPU seconds), in pair order."""
    environment = functions_environment()
    cpu_seconds(APP, environment)  # warm the bytecode caches of both sides
    cpu_seconds(FLOOR, environment)
    app, floor = [], []
    for repetition in range(repetitions):
        if repetition % 2:
            floor.append(cpu_seconds(FLOOR, environment))
            app.append(cpu_seconds(APP, environment))
        else:
            app.append(cpu_seconds(APP, environment))
            floor.append(cpu_seconds(FLOOR, environment))
    return app, floor


def report(app: list[float], floor: list[float], max_ratio: float = MAX_RATIO) -> float:
    """Print the table; return the median of the per-pair ratios."""
    ratios = [a / f for a, f in zip(app, floor, strict=True)]
    ratio = statistics.median(ratios)
    width = len(FLOOR)
    print(f"{'import':<{width}} {'median CPU s':>12} {'min':>8} {'max':>8}")
    for label, values in ((APP, app), (FLOOR, floor)):
        print(f"{label:<{width}} {statistics.median(values):>12.3f} {min(values):>8.3f} {max(values):>8.3f}")
    print(f"{'ratio app / floor (median of pairs)':<{width}} {ratio:>12.2f} {min(ratios):>8.2f} {max(ratios):>8.2f}")
    print(f"budget: ratio <= {max_ratio} -> {'ok' if ratio <= max_ratio else 'OVER'} ({len(ratios)} pairs)")
    return ratio


def first_requests(runs: int) -> None:
    """Print the median CPU and wall milliseconds of ``import app`` and of the first requests after it.

    Each of ``runs`` fresh interpreters (after one unmeasured run that warms the bytecode caches)
    runs :data:`FIRST_REQUESTS` against its own in-process moto with fake credentials.

    Raises
    ------
    RuntimeError
        A child failed (its stderr is included).
    """
    environment = {
        **functions_environment(), "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
    }
    environment.pop("AWS_ENDPOINT_URL", None)
    results: list[dict[str, list[float]]] = []
    for _ in range(runs + 1):
        child = subprocess.run([sys.executable, "-c", FIRST_REQUESTS], cwd=ROOT, env=environment, capture_output=True, text=True)
        if child.returncode != 0:
            raise RuntimeError(f"first-requests run failed: {child.stderr}")
        results.append(json.loads(child.stdout.strip().splitlines()[-1]))
    results = results[1:]
    print(f"{f'first requests (median of {runs} processes)':<36} {'CPU ms':>12} {'wall ms':>8}")
    for name in results[0]:
        cpu = statistics.median(result[name][0] for result in results)
        wall = statistics.median(result[name][1] for result in results)
        print(f"{name:<36} {cpu:>12.1f} {wall:>8.1f}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; with ``--check`` return 1 when the module count or the ratio is over its budget."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the median ratio exceeds the budget")
    parser.add_argument("--max-ratio", type=float, default=MAX_RATIO, help=f"the budget (default {MAX_RATIO})")
    parser.add_argument("--max-modules", type=int, default=MAX_MODULES,
                        help=f"the module budget (default {MAX_MODULES})")
    parser.add_argument("--repetitions", type=int, default=DEFAULT_REPETITIONS, help="alternating pairs to run")
    parser.add_argument("--first-requests", type=int, default=0, metavar="N",
                        help="also time import app and the first requests in N fresh processes on moto (no budget)")
    args = parser.parse_args(argv)
    modules = modules_beyond_floor(functions_environment())
    print(f"modules import app adds beyond the floor: {modules}; budget <= {args.max_modules} -> "
          f"{'ok' if modules <= args.max_modules else 'OVER'}")
    ratio = report(*measure(max(1, args.repetitions)), max_ratio=args.max_ratio)
    if args.first_requests > 0:
        first_requests(args.first_requests)
    return 1 if args.check and (ratio > args.max_ratio or modules > args.max_modules) else 0


if __name__ == "__main__":
    sys.exit(main())
