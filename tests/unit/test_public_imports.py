"""``scripts/check_public_imports.py`` finds private moto and botocore imports, and only those."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_public_imports.py"
_SPEC = importlib.util.spec_from_file_location("check_public_imports", _SCRIPT)
assert _SPEC is not None
assert _SPEC.loader is not None
check = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check)


def found(source: str) -> list[str]:
    return [name for _, name in check.offending_imports(source)]


def test_public_moto_and_botocore_imports_pass() -> None:
    source = "\n".join([
        "import moto", "from moto import mock_aws", "from moto.server import ThreadedMotoServer",
        "from moto.core import DEFAULT_ACCOUNT_ID", "import botocore.session", "from botocore.config import Config",
        "from .moto import x",
    ])
    assert found(source) == []


def test_private_moto_modules_names_and_botocore_parsers_are_reported() -> None:
    source = "\n".join([
        "import moto.dynamodb.models", "from moto.core.botocore_stubber import BotocoreStubber", "from moto import dynamodb",
        "from moto.core import _private", "from botocore.parsers import JSONParser", "import botocore.parsers",
        "def f():\n    from moto.sqs.models import Queue",
    ])
    assert found(source) == ["moto.dynamodb.models", "moto.core.botocore_stubber", "moto.dynamodb", "moto.core._private",
                             "botocore.parsers", "botocore.parsers", "moto.sqs.models"]


def test_the_tree_imports_no_private_moto_or_botocore_module() -> None:
    assert check.main([]) == 0
