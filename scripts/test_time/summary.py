"""Summarise ``measure.sh`` output: runs, mean, median and ratio to the baseline per label.

usage: python scripts/test_time/summary.py test-time.tsv [BASELINE_NAME]

BASELINE_NAME names B in the table (default ``12d280e``, issue 9's baseline; issue 19 measured
against ``bed1a20``).

Prints a Markdown table (one row per label: runs, mean and median wall seconds, each as a
ratio to the baseline's, the load averages seen) and every run. A run counts when every part
ran to its end (pytest printed its summary line: 1 for the baseline's single run, 3 for unit,
integration and e2e), with or without failed tests; the failures are shown with the run.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

NAMES = {"B": "baseline {baseline}, `make test`", "S": "this checkout, `make test`, the baseline's tests",
         "F": "this checkout, `make test`, every test",
         "S-nice": "as S, an earlier commit (schemathesis at nice 10)",
         "F-nice": "as F, an earlier commit (schemathesis at nice 10)"}


def parse(line: str) -> dict[str, str]:
    """One ``measure.sh`` line as ``{"label": ..., "start": ..., "load": ..., "rc": ..., "wall": ...}``."""
    fields = line.rstrip("\n").split("\t")
    row = {"label": fields[0]}
    for field in fields[1:7]:
        key, _, value = field.partition(" ")
        row[key] = value
    row["summary"] = fields[7] if len(fields) > 7 else ""
    return row


def main(path: str, baseline: str = "12d280e") -> None:
    """Print the tables for the measurements in ``path`` (``baseline`` names B's commit)."""
    rows = [parse(line) for line in Path(path).read_text().splitlines() if line.strip()]
    parts = {"B": 1}
    ok = [r for r in rows if r["summary"].count("passed") >= parts.get(r["label"], 3)]
    walls = {label: [float(r["wall"]) for r in ok if r["label"] == label] for label in dict.fromkeys(r["label"] for r in rows)}
    base = walls.get("B") or [float("nan")]
    b_mean, b_median = statistics.mean(base), statistics.median(base)
    print("| run | runs | mean wall s | median wall s | mean ratio | median ratio | load (1 min) at start |")
    print("|---|---|---|---|---|---|---|")
    for label, values in walls.items():
        if not values:
            continue
        loads = ", ".join(r["load"].split(" ->")[0] for r in ok if r["label"] == label)
        mean, median = statistics.mean(values), statistics.median(values)
        print(f"| {label}: {NAMES.get(label, label).format(baseline=baseline)} | {len(values)} | {mean:.1f} | {median:.1f} | "
              f"{mean / b_mean:.2f} | {median / b_median:.2f} | {loads} |")
    print()
    print("| label | start (UTC) | load before -> after | rc | wall s | user s | sys s | pytest |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['label']} | {r['start']} | {r['load']} | {r['rc']} | {r['wall']} | {r['user']} | {r['sys']} | {r['summary']} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
