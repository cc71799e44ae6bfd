"""What ``import app`` (a cold start of the API function) must not load: the heavy pieces are
imported on the paths that use them (figures in bench/cold_start.py). Pure: a
fresh interpreter imports the app with placeholder resource names, nothing is called."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from local_stack.resources import placeholder_environment

ROOT = Path(__file__).resolve().parents[2]

#: Module -> the path that imports it when needed.
LAZY = {
    "chalicelib.geocoding.gazetteer": "the first geocode with the gazetteer backend",
    "aws_lambda_powertools.utilities.batch": "the stream and queue consumers (app.py handlers)",
    "httpx": "the webhook delivery client (delivery lanes)",
    "httpcore": "the webhook delivery client (delivery lanes)",
    "jinja2": "the first Dashboard page rendered",
    "chalicelib.openapi.document": "the first GET /v1/openapi.json (chalicelib.openapi.route)",
    "ulid": "the first new id (chalicelib.kernel.clock.new_id)",
    "pydantic_settings": "nothing: configuration is a plain pydantic model",
    "dotenv": "nothing: the service reads no .env files",
    "chalicelib.idempotency.service": "the first POST or PATCH (chalicelib.composition)",
    "aws_lambda_powertools.utilities.idempotency": "the first POST or PATCH (chalicelib.composition)",
}

#: A domain's services, repositories, models, records and search modules load with the first
#: request of one of its routes (chalicelib.kernel.lazy_imports); only authentication, which every route runs, loads at once.
DOMAIN_MODULE = re.compile(
    r"chalicelib\.(?!auth\.)[a-z_]+\.(?:service|repository|models|records|registry|content|samples"
    r"|listing_deletion|listing_detail|profile_detail|request_decisions)(?:\..+)?"
    r"|chalicelib\.profiles\.search|chalicelib\.listings\.search\..+"
)


def test_importing_the_app_loads_none_of_the_heavy_pieces() -> None:
    code = "import json, sys, app; print(json.dumps(sorted(sys.modules)))"
    environment = {**os.environ, **placeholder_environment(), "AWS_DEFAULT_REGION": "us-east-1"}
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, check=True)
    loaded = set(json.loads(run.stdout.strip().splitlines()[-1]))
    assert {name: why for name, why in LAZY.items() if name in loaded} == {}
    assert sorted(name for name in loaded if DOMAIN_MODULE.fullmatch(name)) == []
