"""The test runs' schedulers name files that exist.

``tests/integration/conftest.py`` and ``tests/e2e/conftest.py`` hand their longest files out first
(``LONG_FILES``); a renamed or deleted file would silently drop out of that order, so the lists are
read here (with :mod:`ast`, without importing the conftests and their AWS fakes) and checked.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def long_files(conftest: Path) -> tuple[str, ...]:
    """The string tuple assigned to ``LONG_FILES`` at the top level of ``conftest``."""
    for node in ast.parse(conftest.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "LONG_FILES" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, tuple)
            return value
    raise AssertionError(f"no LONG_FILES in {conftest}")


@pytest.mark.parametrize("folder", ["integration", "e2e"])
def test_long_files_are_existing_test_files_of_their_folder(folder: str) -> None:
    names = long_files(ROOT / "tests" / folder / "conftest.py")
    assert names, "an empty list schedules nothing first"
    assert len(set(names)) == len(names)
    for name in names:
        assert name.startswith(f"tests/{folder}/test_"), name
        assert (ROOT / name).is_file(), f"{name} is listed in LONG_FILES but does not exist"
