"""Shared fixtures: fake AWS credentials so no test ever reaches a real account."""

from __future__ import annotations

import os

from local_stack.resources import placeholder_environment

# Resource names are required settings (chalicelib.config): tests of pure logic, packaging and
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
        # No EMF metric lines on the tests' stdout (chalicelib/metrics.py); the tests of the
        # metrics switch them on with a file of their own.
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
)
os.environ.pop("AWS_ENDPOINT_URL", None)
os.environ.pop("AWS_PROFILE", None)
