"""``make test``: the unit, integration and end-to-end tiers side by side, with progress, and one summary.

Each tier is one ``make`` target (``make unit``, ``make integration``, ``make e2e``) run as a
child process whose output goes to ``build/test-logs/<tier>.log``. While they run, one line
shows each tier's progress (pytest's ``[ NN%]`` marks) every :data:`PROGRESS_SECONDS`; a tier
that ends prints its own last lines (its failures, then pytest's summary). The last line is one
summary of all three in pytest's form (``N passed, N failed, ... in S s``), the counts summed,
so CI can read one line. The exit status is 1 if any tier failed.

Usage: ``python scripts/test_tiers.py [TIER ...]`` (default: unit integration e2e).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "build" / "test-logs"
TIERS = ("unit", "integration", "e2e")
#: How often the progress line is printed (seconds).
PROGRESS_SECONDS = 15.0
#: pytest's outcome words, in the order its summary line names them.
OUTCOMES = ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "warnings", "errors")
_PERCENT = re.compile(rb"\[\s*(\d+)%\]")
_COUNT = re.compile(r"(\d+) (failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?)\b")
#: The summary line pytest prints last (``==== 3 passed in 1.2s ====`` or, with -q, without the bars).
_SUMMARY = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+.* in [\d.]+s")


def progress(log: Path) -> str:
    """The last ``NN%`` pytest printed to ``log`` ("starting" before the first)."""
    found = _PERCENT.findall(log.read_bytes()) if log.exists() else []
    return f"{int(found[-1])}%" if found else "starting"


def summary_line(text: str) -> str | None:
    """pytest's summary line in ``text`` (the last one), or None when the tier printed none."""
    lines = [line.strip() for line in text.splitlines() if _SUMMARY.match(line.strip())]
    return lines[-1].strip("= ") if lines else None


def counts(line: str) -> Counter[str]:
    """The outcome counts of a pytest summary line (``warning``/``error`` counted as plural)."""
    found: Counter[str] = Counter()
    for number, word in _COUNT.findall(line):
        found[word if word.endswith("s") or word in ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed")
              else word + "s"] += int(number)
    return found


def combined(lines: list[str], seconds: float) -> str:
    """One pytest-style summary of several: the counts summed, the wall time of the whole run."""
    total: Counter[str] = Counter()
    for line in lines:
        total += counts(line)
    parts = [f"{total[word]} {word[:-1] if total[word] == 1 and word in ('warnings', 'errors') else word}"
             for word in OUTCOMES if total[word]]
    return f"{', '.join(parts) or 'no tests ran'} in {seconds:.2f}s"


def main(argv: list[str]) -> int:
    """Run the tiers, print progress and the summaries; 0 when every tier passed, else 1."""
    tiers = argv or list(TIERS)
    LOGS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    running: dict[str, subprocess.Popen[bytes]] = {}
    for tier in tiers:
        with (LOGS / f"{tier}.log").open("wb") as log:
            running[tier] = subprocess.Popen(["make", "--no-print-directory", tier], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    print(f"make test: {', '.join(tiers)} side by side; each tier's output in {LOGS.relative_to(ROOT)}/<tier>.log", flush=True)
    status: dict[str, int] = {}
    summaries: list[str] = []
    last_progress = time.monotonic()
    while len(status) < len(running):
        time.sleep(1.0)
        for tier, process in running.items():
            if tier in status or process.poll() is None:
                continue
            status[tier] = process.returncode
            text = (LOGS / f"{tier}.log").read_text(errors="replace")
            line = summary_line(text)
            failed = process.returncode != 0
            tail = text.splitlines()[-40:] if failed else []
            print("\n".join([*tail, f"{tier}: {line or f'exit status {process.returncode}, no pytest summary'}"]), flush=True)
            if line:
                summaries.append(line)
            elif failed:
                summaries.append("1 errors")
        if time.monotonic() - last_progress >= PROGRESS_SECONDS and len(status) < len(running):
            last_progress = time.monotonic()
            states = [f"{tier} {'done' if tier in status else progress(LOGS / f'{tier}.log')}" for tier in running]
            print(f"[{time.monotonic() - started:4.0f} s] " + " | ".join(states), flush=True)
    print(combined(summaries, time.monotonic() - started), flush=True)
    return 0 if all(code == 0 for code in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
