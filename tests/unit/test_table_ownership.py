"""docs/architecture.md "Table ownership" stays true: only a table's owner names its table.

Each row of the table names a table setting (``USERS_TABLE``) and, in parentheses, the modules
that may name it. The test reads every module of ``chalicelib`` and checks that a setting's
name appears only in its owner's modules, in ``config`` (which reads the names) and in
``system.health`` (the readiness probe of every table); and that every setting of
``chalicelib.kernel.config.Settings`` has a row. The import side of the rule (no other package
imports an owner's repository) is the ``*-own-their-tables`` contracts of ``make lint``.
"""

from __future__ import annotations

import re
from pathlib import Path

from chalicelib.kernel.config import Settings

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
#: Modules that name every table on purpose.
EVERY_TABLE = ("chalicelib.kernel.config", "chalicelib.system.health")


def _rows() -> dict[str, tuple[str, ...]]:
    """``{setting: owner module prefixes}`` from the table of the "Table ownership" section."""
    section = DOC.read_text(encoding="utf-8").split("## Table ownership", 1)[1].split("\n## ", 1)[0]
    owners: dict[str, tuple[str, ...]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not line.startswith("|") or cells[0].startswith(("---", "table")):
            continue
        modules = re.findall(r"`([\w.]+)`", cells[1].split("(", 1)[1])
        for setting in re.findall(r"`(\w+_TABLE)`", cells[0]):
            owners[setting] = tuple(f"chalicelib.{m}" for m in modules)
    return owners


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_every_table_setting_has_one_row() -> None:
    settings = {name for name in Settings.model_fields if name.endswith("_TABLE")}
    assert set(_rows()) == settings


def test_only_the_owner_names_a_table() -> None:
    rows = _rows()
    strays = []
    for path in sorted((ROOT / "chalicelib").rglob("*.py")):
        module, text = _module_name(path), path.read_text(encoding="utf-8")
        for setting, owners in rows.items():
            if re.search(rf"\b{setting}\b", text) and not _within(module, owners + EVERY_TABLE):
                strays.append(f"{module} names {setting} (owned by {', '.join(owners)})")
    assert strays == []


def test_the_check_sees_a_stray_name() -> None:
    # The conversations repository once read the Users table itself: the rule must catch that shape.
    owners = _rows()["USERS_TABLE"]
    assert not _within("chalicelib.conversations.repository", owners + EVERY_TABLE)
    assert _within("chalicelib.users.repository", owners)
