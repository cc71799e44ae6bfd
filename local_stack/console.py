"""What ``make run`` prints: a progress bar while the stack starts and seeds, then one summary box.

Built on ``rich`` (https://rich.readthedocs.io): :func:`startup_progress` shows the steps
(embedded AWS, tables and queues, admin key, API, and with ``--demo`` the demo users, listings
and approvals) as a progress bar; :func:`summary_box` is the short summary printed after it
(:func:`print_summary`, whole lines also when the output is not a terminal):
the API URL, the docs URL, the Dashboard, the admin key and, with ``--demo``, the demo users'
keys. Per-request access logs (one JSON line per request) go to the stack's folder
(:func:`stack_folder`, file :data:`ACCESS_LOG`) unless ``VERBOSE=1`` (:func:`route_request_logs`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent

#: Where each stack keeps its files: ``.local/<PORT>/`` (:func:`stack_folder`), so two stacks of
#: one checkout (different ``PORT``) never write to the same log.
LOCAL = ROOT / ".local"
#: In a stack's folder: the API's access log unless VERBOSE=1 (one JSON line per request).
ACCESS_LOG = "requests.log"
#: In a stack's folder: the functions' metric lines (CloudWatch embedded metric format, one JSON
#: line each; ``METRICS_LOG``, read by ``chalicelib.telemetry.metrics``), unless the caller's environment
#: names another file.
METRICS_LOG = "metrics.log"
#: In a stack's folder: the event runner's stream checkpoints (``local_stack.runner``).
CHECKPOINTS = "stream-checkpoints.json"


def stack_folder(port: int) -> Path:
    """The folder of the stack serving the API on ``port``: ``.local/<port>/`` (created)."""
    folder = LOCAL / str(port)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


console = Console()


def route_request_logs(verbose: bool, path: Path) -> Path | None:
    """Send the app's structured logs (powertools logger ``matching-service``) to ``path``, or keep
    them on the console when ``verbose``; returns the file used (``None`` when verbose)."""
    app_logger = logging.getLogger("matching-service")
    if verbose:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    for existing in list(app_logger.handlers):
        handler.setFormatter(existing.formatter)  # powertools' JSON formatter
        app_logger.removeHandler(existing)
    app_logger.addHandler(handler)
    return path


class Steps:
    """A progress bar over named start-up steps (``advance`` one step at a time)."""

    def __init__(self, progress: Progress, total: int) -> None:
        self._progress = progress
        self._task = progress.add_task("Starting", total=total)

    def step(self, description: str) -> None:
        """Show ``description`` as the step now running."""
        self._progress.update(self._task, description=description)

    def advance(self, amount: int = 1) -> None:
        """Mark ``amount`` steps done."""
        self._progress.advance(self._task, amount)

    def grow(self, amount: int) -> None:
        """Add ``amount`` steps (e.g. the demo listings once their number is known)."""
        task = self._progress.tasks[self._task]
        self._progress.update(self._task, total=(task.total or 0) + amount)


@contextmanager
def startup_progress(total: int) -> Iterator[Steps]:
    """A transient progress bar of ``total`` steps (removed when the block ends)."""
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True,
    )
    with progress:
        yield Steps(progress, total)


def summary_box(base_url: str, admin_key: str, demo_users: Sequence[dict[str, Any]] = (),
                request_log: Path | None = None, aws_endpoint: str | None = None,
                metrics_log: Path | None = None) -> Panel:
    """The summary printed once the stack is up (and seeded)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("API", base_url)
    table.add_row("Docs", f"{base_url}/docs  (OpenAPI: {base_url}/v1/openapi.json)")
    table.add_row("Dashboard", f"{base_url}/dashboard  (sign in with the admin key)")
    table.add_row("Admin API key", admin_key)
    for user in demo_users:
        table.add_row(f"Demo: {user['displayName']}", str(user["apiKey"]))
    table.add_row("Try", f"curl -H 'Authorization: Bearer {admin_key}' {base_url}/v1/categories")
    table.add_row("Request log", str(request_log) if request_log else "on this console (VERBOSE=1)")
    if metrics_log:
        table.add_row("Metrics", f"{metrics_log}  (CloudWatch EMF lines)")
    if aws_endpoint:
        table.add_row("Embedded AWS", aws_endpoint)
    table.add_row("Data", "in memory only: gone when the stack stops (Ctrl-C)")
    return Panel(table, title="Matching Service is running", expand=False, border_style="green")


def print_summary(panel: Panel, out: Console = console) -> None:
    """Print the summary box: on a terminal at the terminal's width (long values fold inside it);
    elsewhere (a file, a pipe, a CI log) as wide as its longest line, so that no URL, key or
    command is cut across two lines of the box (rich would otherwise assume 80 columns)."""
    if out.is_terminal:
        out.print(panel)
        return
    natural = out.measure(panel, options=out.options.update(width=10_000)).maximum
    terminal_width = out.width  # print() never renders wider than the console: widen it for this box
    out.width = max(natural, terminal_width)
    try:
        out.print(panel)
    finally:
        out.width = terminal_width
