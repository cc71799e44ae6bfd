"""Write the OpenAPI document of the app to a file (for linters and client generators).

Usage: ``python scripts/write_openapi.py build/openapi.json``. The document is the one
``GET /v1/openapi.json`` serves, without the ``servers`` entry the served copy derives from the
request (the file names the local stack instead).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_stack.resources import placeholder_environment

# Importing the app reads the resource names (chalicelib.kernel.config); none is used to build the document.
os.environ.update({**placeholder_environment(), **os.environ})

import app  # noqa: F401  (registers every route)
from chalicelib.openapi.document import document


def main(target: str) -> None:
    """Write the document, pretty-printed, to ``target`` (directories created)."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/openapi.json")
