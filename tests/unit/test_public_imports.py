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
        "from botocore.utils import _private", "import botocore._internal",
        "def f():\n    from moto.sqs.models import Queue",
    ])
    assert found(source) == ["moto.dynamodb.models", "moto.core.botocore_stubber", "moto.dynamodb", "moto.core._private",
                             "botocore.parsers", "botocore.parsers", "botocore.utils._private", "botocore._internal",
                             "moto.sqs.models"]


def test_the_tree_imports_no_private_moto_or_botocore_module() -> None:
    assert check.main([]) == 0


def test_the_one_exception_is_the_local_stacks_embedded_aws_and_its_tests() -> None:
    root = _SCRIPT.parents[1]
    assert all((root / path).is_file() for path in check.EMBEDDED_AWS)  # no stale entry
    assert {path.split("/")[0] for path in check.EMBEDDED_AWS} == {"local_stack", "tests"}
    for path in (path for path in check.EMBEDDED_AWS if path.startswith("tests/")):
        text = (root / path).read_text()
        if "moto_server" in text:  # pinned to the installed moto: make compat deselects them
            assert "pytestmark = pytest.mark.embedded_aws" in text, path
