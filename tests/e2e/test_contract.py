"""Contract fuzzing: schemathesis against the running local stack, with the admin key.

Every operation of ``GET /v1/openapi.json`` is exercised (examples, coverage, fuzzing and
stateful phases; valid and invalid inputs) with every check schemathesis has (``--checks all``
as ``schemathesis.toml`` states it): no 5xx, no status code, content type, header or body that
the document does not allow, every schema-valid request accepted and every schema-violating one
refused. The exceptions, named operation by operation in ``schemathesis.toml``, are the
positive-data check of operations whose rules JSON Schema cannot express (listed in their
descriptions) and the use-after-free check on the two reads of a conversation, which its
``DELETE`` (leave) keeps readable by both parties. The stack runs sandboxed (``sandbox/sitecustomize.py``: loopback-only
networking), so fuzzed webhook URLs never reach beyond the machine.

``SCHEMATHESIS_SEED`` overrides the fixed seed, ``SCHEMATHESIS_MAX_EXAMPLES`` the cases per
operation and phase: 5 in ``make test`` (3,863 cases, the coverage phase's boundary cases whole),
15 in ``make contract`` (4,434 cases, three times the random fuzzing, about 40 % more CPU).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import ROOT, Stack, approve_listing, start_stack, stop_stack

pytestmark = pytest.mark.e2e

SANDBOX = Path(__file__).with_name("sandbox")
#: Every check enabled; the positive-data check off for the operations with non-schema rules.
CONFIG = Path(__file__).with_name("schemathesis.toml")
MIN_CASES = 1000
SEED = os.environ.get("SCHEMATHESIS_SEED", "20261122")
MAX_EXAMPLES = os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "5")
TIMEOUT_SECONDS = 600


def schemathesis_command() -> list[str]:
    """The schemathesis CLI of this interpreter's environment."""
    script = Path(sys.executable).parent / "schemathesis"
    if script.exists():
        return [str(script)]
    found = shutil.which("schemathesis")
    if found is None:
        pytest.fail("schemathesis is not installed (requirements-dev.txt)")
    return [found]


#: Parameters left out of the fuzzed document, by name: their values are only valid relative to
#: earlier responses (a page's ``nextCursor``, a resource's ``ETag``, an earlier request under the same
#: ``Idempotency-Key``), which no generator can know; each operation's description states their rules.
STATEFUL_PARAMETERS = frozenset({"cursor", "If-Match", "If-None-Match", "Idempotency-Key"})


def fuzzed_document(document: dict[str, Any]) -> dict[str, Any]:
    """The served document without the :data:`STATEFUL_PARAMETERS` (excluded by name).

    Dropping these parameters keeps every check on the operations that take them instead of
    exempting the operations.
    """
    fuzzed = copy.deepcopy(document)
    for methods in fuzzed["paths"].values():
        for operation in methods.values():
            if "parameters" in operation:
                operation["parameters"] = [p for p in operation["parameters"] if p["name"] not in STATEFUL_PARAMETERS]
    return fuzzed


def _listing(title: str, webhook_ids: list[str] | None = None) -> dict[str, object]:
    return {
        "categoryKey": "housing", "roleKey": "offering", "channels": ["telegram"], "webhookIds": webhook_ids or [],
        "meta": {"title": title, "description": "<p>Quiet flat</p>", "location": "Warsaw", "location_lat": "52.23",
                 "location_lng": "21.01", "propertyType": "room", "rentMonthly": "900", "amenities": "furnished,balcony"},
    }


def seed(stack: Stack) -> None:
    """Data for the links of the stateful phase to follow: the admin owns an approved listing with
    a webhook, has an accepted request (a conversation with a message), a pending request of its
    own, a pending profile request and a listing awaiting approval."""
    admin = stack.admin()
    assert admin.put("/v1/me/channels/telegram", json={"handle": "@fuzz_admin"}).status_code == 200
    # A loopback port nobody listens on: deliveries fail and are logged, nothing leaves the machine.
    hook = admin.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/hook"})
    assert hook.status_code == 201, hook.text
    owned = admin.post("/v1/listings", json=_listing("Room of the admin", [hook.json()["id"]]))
    assert owned.status_code == 201, owned.text
    approve_listing(stack, owned.json()["id"])
    peer_id, peer = stack.new_user("Fuzz Peer")
    theirs = peer.post("/v1/listings", json=_listing("Room of the peer"))
    assert theirs.status_code == 201, theirs.text
    approve_listing(stack, theirs.json()["id"])
    asked = peer.post("/v1/match-requests", json={"listingId": owned.json()["id"], "message": "Hello", "channels": ["telegram"]})
    assert asked.status_code == 201, asked.text
    accepted = admin.patch(f"/v1/match-requests/{asked.json()['requestId']}/status", json={"status": "ACCEPTED"})
    assert accepted.status_code == 200, accepted.text
    conversation_id = admin.get("/v1/conversations").json()["conversations"][0]["conversationId"]
    assert admin.post(f"/v1/conversations/{conversation_id}/messages", json={"content": "Welcome"}).status_code == 201
    mine = admin.post("/v1/match-requests", json={"listingId": theirs.json()["id"], "message": "Hi", "channels": ["telegram"]})
    assert mine.status_code == 201, mine.text
    admin.post("/v1/profile-requests", json={"userId": peer_id, "message": "Hi", "channel": "telegram"})
    assert admin.post("/v1/listings", json=_listing("Room awaiting review")).status_code == 201


@pytest.fixture(scope="module")
def fuzz_stack() -> Iterator[Stack]:
    """A stack of its own (fuzzing fills it with data), with loopback-only networking, seeded."""
    python_path = os.pathsep.join(p for p in (str(SANDBOX), os.environ.get("PYTHONPATH", "")) if p)
    running = start_stack(extra_env={"PYTHONPATH": python_path})
    try:
        seed(running)
        yield running
    finally:
        stop_stack(running)


@pytest.mark.timeout(TIMEOUT_SECONDS + 120)
def test_every_operation_conforms_to_the_openapi_document(fuzz_stack: Stack, tmp_path: Path) -> None:
    document = httpx.get(f"{fuzz_stack.base_url}/v1/openapi.json", timeout=10).json()
    operations = sum(len(methods) for methods in document["paths"].values())
    report_path = tmp_path / "schemathesis.json"
    schema_path = tmp_path / "openapi.json"
    schema_path.write_text(json.dumps(fuzzed_document(document)))
    command = [
        *schemathesis_command(),
        "--config-file", str(CONFIG),
        "run",
        str(schema_path),
        "--url", fuzz_stack.base_url,
        "--header", f"Authorization: Bearer {fuzz_stack.admin_key}",
        "--max-examples", MAX_EXAMPLES,
        "--seed", SEED,
        "--workers", "2",
        # Each request's bound (default 10 s): generous for a stack on a loaded, shared 2-core
        # machine; a request that never answers still fails the run.
        "--request-timeout", "30",
        "--generation-database", "none",
        "--no-color",
        "--report", "json",
        "--report-json-path", str(report_path),
    ]
    # In tmp_path: schemathesis and hypothesis keep state in the working directory.
    # The hooks teach schemathesis the document's text formats (tests/e2e/schemathesis_hooks.py).
    hooks_env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.e2e.schemathesis_hooks",
                 "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    run = subprocess.run(command, cwd=tmp_path, env=hooks_env, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False)
    output = run.stdout + run.stderr
    report = json.loads(report_path.read_text())
    cases = report["test_cases"]
    print(
        f"\nschemathesis {report['schemathesis_version']}: {report['operations']['tested']}/{operations} operations, "
        f"{cases['generated']} test cases generated, {cases['with_failures']} with failures, "
        f"{cases['errored']} errored, {report['running_time']:.0f} s (seed {report['seed']})"
    )
    assert run.returncode == 0, output[-20000:]
    assert report["failures"] == [], output[-20000:]
    assert report["errors"] == [], output[-20000:]
    # Schemathesis does not test the operation that serves the document itself.
    assert report["operations"]["tested"] >= operations - 1, output[-5000:]
    assert report["operations"]["errored"] == 0
    assert {name: phase["status"] for name, phase in report["phases"].items()} == dict.fromkeys(
        ("examples", "coverage", "fuzzing", "stateful"), "success"
    ), report["phases"]
    assert cases["generated"] >= MIN_CASES, f"only {cases['generated']} cases generated"
