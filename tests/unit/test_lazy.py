"""chalicelib.lazy: a stand-in module imports the real one on the first attribute read, not before."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.lazy import LazyModule, lazy_import

PROBE = "lazy_probe_module"


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A module on ``sys.path`` that records each time it runs (in ``runs``) and holds ``value = 42``."""
    (tmp_path / f"{PROBE}.py").write_text("import builtins\nbuiltins.lazy_probe_runs.append('run')\nvalue = 42\n")
    runs: list[str] = []
    monkeypatch.setattr("builtins.lazy_probe_runs", runs, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield runs
    sys.modules.pop(PROBE, None)


def test_the_module_runs_on_the_first_attribute_read_only(probe: list[str]) -> None:
    stand_in = lazy_import(PROBE)
    assert isinstance(stand_in, LazyModule)
    assert probe == []
    assert PROBE not in sys.modules

    assert stand_in.value == 42
    assert probe == ["run"]
    assert sys.modules[PROBE].value == 42

    assert stand_in.value == 42  # later reads do not run it again
    assert probe == ["run"]


def test_reads_see_changes_made_to_the_real_module(probe: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in = lazy_import(PROBE)
    real = __import__(PROBE)
    monkeypatch.setattr(real, "value", 7)
    assert stand_in.value == 7


def test_writes_to_the_stand_in_are_refused(probe: list[str]) -> None:
    stand_in = lazy_import(PROBE)
    with pytest.raises(AttributeError, match="set 'value' on the module itself"):
        stand_in.value = 1
    assert probe == []


def test_a_missing_attribute_is_an_attribute_error(probe: list[str]) -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = lazy_import(PROBE).no_such_name


def test_a_misspelt_module_fails_at_once() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"chalicelib\.no_such_module"):
        lazy_import("chalicelib.no_such_module")
