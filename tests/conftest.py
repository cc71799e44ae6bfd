"""Shared fixtures: fake AWS credentials so no test ever reaches a real account."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from local_stack.resources import placeholder_environment

# Resource names are required settings (chalicelib.kernel.config): tests of pure logic, packaging and
# the template see the template's placeholder names; the moto fixtures set the real ones.
os.environ.update(placeholder_environment())
# Set before any boto3 client exists (moto docs: "Getting started", credentials).
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "ALLOW_INSECURE_WEBHOOKS": "true",
        # No EMF metric lines on the tests' stdout (chalicelib/telemetry/metrics.py); the tests of the
        # metrics switch them on with a file of their own.
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
)
os.environ.pop("AWS_ENDPOINT_URL", None)
os.environ.pop("AWS_PROFILE", None)

# Property tests draw the same examples on every run (`make test` is never flaky: a failure
# repeats), from a seed of each test's own; `HYPOTHESIS_PROFILE=explore` draws new ones each run
# and keeps failing examples in .hypothesis/ (docs/testing.md, "Property tests").
# Neither profile has a wall-clock bound: hypothesis's default ``deadline`` (200 ms per example) and
# its ``too_slow`` health check time examples on the wall clock, which failed a join property test
# on a machine at load 12 (no wall-clock assertion in a test; speed lives in bench/).
# How many examples: a property test that states no ``max_examples`` of its own draws the profile's,
# 100 in ``make test`` (hypothesis's default: the pure properties of tests/unit run in about a second
# each) and 1,000 under ``explore``, the deep run for a change to a property or the code under it.
# Tests on moto (tests/integration) state a handful of their own: each example writes to moto.
_NO_WALL_CLOCK = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("deterministic", derandomize=True, database=None, print_blob=True, max_examples=100, **_NO_WALL_CLOCK)
settings.register_profile("explore", derandomize=False, max_examples=1_000, **_NO_WALL_CLOCK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


def _embedded_aws_tests() -> frozenset[Path]:
    """The test modules of the local stack's embedded AWS (``EMBEDDED_AWS`` in
    scripts/check_public_imports.py, the one place they are listed), as absolute paths."""
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("check_public_imports", root / "scripts" / "check_public_imports.py")
    assert spec is not None
    assert spec.loader is not None
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    return frozenset(root / path for path in check.EMBEDDED_AWS if path.startswith("tests/"))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not embedded_aws"`` (``make compat``, another moto release) the embedded AWS's
    test modules are not even imported: they import the pinned moto's internals, which another
    release need not have (moto 5.1.22 has no ``moto.core.parse``), and their tests would be
    deselected by their marker anyway."""
    if "not embedded_aws" not in (config.option.markexpr or ""):
        return None
    return True if collection_path.resolve() in _embedded_aws_tests() else None
