"""chalicelib.kernel.lazy_imports: a stand-in module imports the real one on the first attribute read, not before."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib.kernel.lazy_imports import DECLARED, LazyModule, lazy_import, lazy_imports

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


def test_a_lazy_imports_block_binds_stand_ins_and_records_the_names(probe: list[str], tmp_path: Path) -> None:
    (tmp_path / "lazy_probe_package").mkdir()
    (tmp_path / "lazy_probe_package" / "__init__.py").write_text("")
    (tmp_path / "lazy_probe_package" / "inner.py").write_text("import builtins\nbuiltins.lazy_probe_runs.append('inner')\nvalue = 7\n")
    (tmp_path / "lazy_probe_routes.py").write_text(
        "from chalicelib.kernel.lazy_imports import lazy_imports\n"
        "import json\n"  # an ordinary import outside the block stays eager
        "with lazy_imports(__name__):\n"
        "    from lazy_probe_package import inner as renamed\n"
    )
    try:
        import lazy_probe_routes  # type: ignore[import-not-found]

        assert isinstance(lazy_probe_routes.renamed, LazyModule)
        assert probe == []
        assert lazy_probe_routes.renamed.value == 7
        assert probe == ["inner"]
        assert DECLARED["lazy_probe_routes"] == ("lazy_probe_package.inner",)
    finally:
        for name in ("lazy_probe_routes", "lazy_probe_package", "lazy_probe_package.inner"):
            sys.modules.pop(name, None)
        DECLARED.pop("lazy_probe_routes", None)


@pytest.mark.parametrize(
    "statement",
    [
        "from chalicelib.kernel.lazy_imports import LazyModule",
        "import chalicelib.kernel.lazy_imports",
        "from chalicelib import no_such_module",
    ],
)
def test_a_lazy_imports_block_takes_modules_of_absolute_packages_only(statement: str) -> None:
    code = compile(f"with lazy_imports(__name__):\n    {statement}\n", "<block>", "exec")
    with pytest.raises(ImportError, match="lazy_imports"):
        exec(code, {"__name__": "block", "lazy_imports": lazy_imports})


def test_every_module_the_app_declares_lazily_exists() -> None:
    import app  # noqa: F401 -- registers every route module, each declaring its lazy imports

    assert DECLARED, "the route modules declare their dependencies with lazy_imports()"
    missing = []
    checked: set[str] = set()
    while unchecked := [importer for importer in DECLARED if importer not in checked]:  # importing may declare more
        for importer in unchecked:
            checked.add(importer)
            for name in DECLARED[importer]:
                try:
                    importlib.import_module(name)
                except ImportError as exc:
                    missing.append(f"{importer}: {name}: {exc}")
    assert missing == []
