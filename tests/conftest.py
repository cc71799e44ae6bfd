"""Shared fixtures: fake AWS credentials so no test ever reaches a real account."""

from __future__ import annotations

import os

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
_NO_WALL_CLOCK = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("deterministic", derandomize=True, database=None, print_blob=True, **_NO_WALL_CLOCK)
settings.register_profile("explore", derandomize=False, **_NO_WALL_CLOCK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))
