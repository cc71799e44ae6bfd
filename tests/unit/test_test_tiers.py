"""``scripts/test_tiers.py`` (``make test``) reads each tier's pytest summary and sums them into one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "test_tiers.py"
_SPEC = importlib.util.spec_from_file_location("test_tiers", _SCRIPT)
assert _SPEC is not None
assert _SPEC.loader is not None
tiers = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(tiers)


def test_the_summary_line_of_a_quiet_and_of_a_failing_run_is_found() -> None:
    quiet = "....\n....                                   [100%]\n955 passed, 2 skipped in 716.04s (0:11:56)\n"
    failing = "FAILED tests/x.py::t - boom\n========= 1 failed, 40 passed, 3 warnings in 12.50s =========\n"
    assert tiers.summary_line(quiet) == "955 passed, 2 skipped in 716.04s (0:11:56)"
    assert tiers.summary_line(failing) == "1 failed, 40 passed, 3 warnings in 12.50s"
    assert tiers.summary_line("make: *** [Makefile:1: unit] Error 4\n") is None


def test_the_tiers_counts_are_summed_into_one_pytest_style_line() -> None:
    lines = ["847 passed in 21.01s", "1 failed, 950 passed, 1 warning in 300.00s", "38 passed, 1 error in 250.00s"]
    assert tiers.combined(lines, 312.4) == "1 failed, 1835 passed, 1 warning, 1 error in 312.40s"


def test_progress_is_the_last_percentage_pytest_printed(tmp_path: Path) -> None:
    log = tmp_path / "unit.log"
    assert tiers.progress(log) == "starting"
    log.write_text("....  [ 10%]\n....  [ 55%]\n..")
    assert tiers.progress(log) == "55%"
