"""No test asserts a wall-clock duration (docs/testing.md, "Time in tests").

Latencies and gaps measured on the wall clock depend on the machine's load; they live in
``bench/`` behind ``--check``. Tests assert order, counts, states and the schedule the code itself
recorded. This test reads every test module's syntax tree and fails on an ``assert`` that

* calls a clock (``time.time``, ``time.monotonic``, ``time.perf_counter`` and their ``_ns`` forms),
* uses a name bound to a clock reading in the same module (``started = time.monotonic()``), or
* uses a name or attribute that holds a measured span (``elapsed``, ``latency``, ``gap``, ``gaps``,
  ``duration``) or an attribute holding a receiver's arrival or end time (``.at``, ``.wall_at``,
  ``.ended``).

A deadline in a polling loop (``while time.monotonic() < deadline``) is fine: it is no assertion.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = {"time", "monotonic", "perf_counter", "time_ns", "monotonic_ns", "perf_counter_ns"}
TIMED_NAMES = {"elapsed", "latency", "latencies", "gap", "gaps", "duration", "durations"}
#: A receiver's arrival and end times (``request.at``, ``request.wall_at``, ``request.ended``).
TIMED_ATTRIBUTES = TIMED_NAMES | {"at", "wall_at", "ended"}


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in CLOCKS:
        return isinstance(func.value, ast.Name) and func.value.id == "time"
    return isinstance(func, ast.Name) and func.id in CLOCKS - {"time"}


def _reads_clock(value: ast.AST) -> bool:
    """A clock reading, or arithmetic on one (``time.monotonic() + 10``); not a call that takes one."""
    if isinstance(value, ast.BinOp):
        return _reads_clock(value.left) or _reads_clock(value.right)
    return _is_clock_call(value)


def _clock_bound_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _reads_clock(node.value):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def wall_clock_assertions(source: str) -> list[int]:
    """Line numbers of the ``assert`` statements in ``source`` that read the wall clock."""
    tree = ast.parse(source)
    bound = _clock_bound_names(tree)
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for part in ast.walk(node.test):
            timed_name = isinstance(part, ast.Name) and (part.id in bound or part.id in TIMED_NAMES)
            timed_attribute = isinstance(part, ast.Attribute) and part.attr in TIMED_ATTRIBUTES
            if _is_clock_call(part) or timed_name or timed_attribute:
                lines.append(node.lineno)
                break
    return lines


@pytest.mark.parametrize(
    "condition",  # each becomes `assert <condition>` (kept apart here so no grep takes them for assertions)
    [
        "time.monotonic() - started < 5",
        "first.at - started < 5.0",
        "all(gap >= 0.8 for gap in gaps)",
        "abs(int(ts) - time.time()) < 10",
        "elapsed < 3.5",
        "max(latency.values()) < 2.0",
    ],
)
def test_the_rule_catches_the_forms_it_names(condition: str) -> None:
    assert wall_clock_assertions(f"assert {condition}") != []


def test_the_rule_leaves_polling_deadlines_and_recorded_schedules_alone() -> None:
    source = (
        "deadline = time.monotonic() + 10\n"
        "while time.monotonic() < deadline:\n    pass\n"
        "assert later['attemptedAt'] >= earlier['nextAttemptAt']\n"
        "assert receiver.max_in_flight == 1\n"
    )
    assert wall_clock_assertions(source) == []


def test_no_test_module_asserts_a_wall_clock_duration() -> None:
    found = {
        str(path.relative_to(TESTS.parent)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != Path(__file__).name and (lines := wall_clock_assertions(path.read_text()))
    }
    assert found == {}, f"wall-clock assertions (move them to a bench/ --check): {found}"


def _times_examples(keyword: ast.keyword) -> bool:
    """A ``deadline`` other than ``None``, or a literal list of suppressed checks without ``too_slow``."""
    if keyword.arg == "deadline":
        return not (isinstance(keyword.value, ast.Constant) and keyword.value.value is None)
    if keyword.arg == "suppress_health_check" and isinstance(keyword.value, ast.List):
        return not any(isinstance(e, ast.Attribute) and e.attr == "too_slow" for e in keyword.value.elts)
    return False


def _timed_hypothesis_settings(source: str) -> list[int]:
    """Lines of ``settings(...)`` calls that put a wall-clock bound back (see :func:`_times_examples`)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in {"settings", "register_profile"}
        for keyword in node.keywords
        if _times_examples(keyword)
    ]


def test_hypothesis_times_no_example_on_the_wall_clock() -> None:
    """Hypothesis's per-example ``deadline`` and its ``too_slow`` health check are wall-clock bounds."""
    from hypothesis import HealthCheck, settings

    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
    sample = ("settings(deadline=200)\n@settings(max_examples=5, deadline=None)\ndef f(): pass\n"
              "settings(suppress_health_check=[HealthCheck.function_scoped_fixture])\n"
              "settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])\n")
    assert _timed_hypothesis_settings(sample) == [1, 4]
    found = {
        str(path.relative_to(TESTS.parent)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if (lines := _timed_hypothesis_settings(path.read_text()))
    }
    assert found == {}, f"hypothesis deadlines on the wall clock: {found}"
