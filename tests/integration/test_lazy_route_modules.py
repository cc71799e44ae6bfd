"""Route modules load their domain on the first request (chalicelib.kernel.lazy_imports): first requests of many
domains arriving at once, in a fresh interpreter, each load what they need and answer as usual.

The local stack serves requests on threads, so a domain's modules can be first needed by several
requests at the same moment; the stand-ins import through the ordinary import system, whose
per-module locks make every thread wait for one complete import. The child process has its own
in-process moto (the session's moto lives in this process, whose modules are loaded already).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from local_stack.resources import placeholder_environment

ROOT = Path(__file__).resolve().parents[2]

#: First requests of most domains, with the status each gets from an empty service and an admin
#: key whose user has no profile item (404 where a path names something that does not exist).
FIRST_REQUESTS = {
    "/v1/listings/search": 200,
    "/v1/listings/mine": 200,
    "/v1/listings/01JBTESTLISTING00000000000": 404,
    "/v1/categories": 200,
    "/v1/webhooks": 200,
    "/v1/conversations": 200,
    "/v1/match-requests/mine": 200,
    "/v1/saved-searches": 200,
    "/v1/profiles/search": 200,
    "/v1/profiles/01JBTESTUSER00000000000000": 404,
    "/v1/admin/approvals": 200,
    "/v1/me/channels": 404,
}

CHILD = r"""
import hashlib, json, os, sys, threading
from moto import mock_aws
import boto3
from chalice.test import Client
from local_stack.resources import create_resources

paths = json.loads(sys.argv[1])
key = "msk_" + "t" * 43
with mock_aws():
    os.environ.update(create_resources())
    boto3.client("dynamodb").put_item(TableName=os.environ["API_KEYS_TABLE"], Item={
        "keyHash": {"S": hashlib.sha256(key.encode()).hexdigest()}, "userId": {"S": "01JBTESTUSER00000000000000"},
        "scopes": {"L": [{"S": "admin"}]}, "createdAt": {"S": "2026-01-01T00:00:00Z"}})
    import app
    before = sorted(name for name in sys.modules if name.startswith("chalicelib.") and name.endswith(".service"))
    client = Client(app.app)
    start = threading.Barrier(len(paths))
    statuses = {}

    def first_request(path):
        start.wait()
        statuses[path] = client.http.get(path, headers={"authorization": f"Bearer {key}"}).status_code

    threads = [threading.Thread(target=first_request, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    print(json.dumps({"before": before, "statuses": statuses, "hung": sum(t.is_alive() for t in threads)}))
"""


def test_first_requests_of_many_domains_at_once_load_their_modules_and_answer() -> None:
    environment = {
        **os.environ, **placeholder_environment(), "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
    }
    environment.pop("AWS_ENDPOINT_URL", None)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(list(FIRST_REQUESTS))], cwd=ROOT, env=environment,
        capture_output=True, text=True, timeout=300,
    )
    assert child.returncode == 0, child.stderr
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["hung"] == 0
    assert result["before"] == ["chalicelib.auth.service"]  # no domain service before the first requests
    assert result["statuses"] == FIRST_REQUESTS
