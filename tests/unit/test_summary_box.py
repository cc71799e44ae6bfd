"""``make run``'s summary box keeps whole lines when its output is not a terminal (a file, a pipe)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from local_stack.console import print_summary, summary_box

KEY = "msk_" + "a" * 43
BASE = "http://127.0.0.1:8000"


def _printed(console: Console) -> list[str]:
    print_summary(summary_box(BASE, KEY, [{"displayName": "Demo Dana", "apiKey": "msk_" + "b" * 43}],
                              Path("/srv/app/.local/requests.log"), "http://127.0.0.1:5000", Path("/srv/app/.local/metrics.log")),
                  console)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue().splitlines()


def test_not_a_terminal_prints_every_value_on_one_line_inside_one_box() -> None:
    lines = _printed(Console(file=io.StringIO(), force_terminal=False, width=80))
    assert lines[0].startswith("╭")
    assert lines[-1].startswith("╰")
    assert len({len(line) for line in lines}) == 1  # a rectangle: every line as wide as the box
    assert all(line.startswith("│") and line.endswith("│") for line in lines[1:-1])
    text = "\n".join(lines)
    assert f"curl -H 'Authorization: Bearer {KEY}' {BASE}/v1/categories" in text
    assert f"{BASE}/docs  (OpenAPI: {BASE}/v1/openapi.json)" in text
    assert "\x1b[" not in text  # no terminal escapes in a file


def test_a_terminal_keeps_its_width() -> None:
    lines = _printed(Console(file=io.StringIO(), force_terminal=True, width=60, color_system=None))
    assert max(len(line) for line in lines) <= 60
