"""Rate limits out of the way: the settings the test suites and benchmarks run with.

Tests and benchmarks send many requests with one key within a second (and many match requests
and messages per user), far beyond the production defaults (``chalicelib.kernel.config``: 20 requests
per second and 100 at once per key, daily quotas per user), and they are about other things.

* :data:`LIMITS_OFF`: the integration fixtures (``tests/integration/conftest.py``) and the
  end-to-end stacks (``tests/e2e/conftest.py``) turn the limiter off. Left on with high limits it
  cost one more DynamoDB call per request on the embedded moto: measured +13% CPU on the
  request-heavy ``test_requests.py`` + ``test_conversations.py`` (15.2 -> 17.2 s, two runs each),
  against a suite whose wall time is budgeted (docs/testing.md).
  ``tests/integration/test_rate_limits.py`` turns it on, with its own limits and the defaults.
* :data:`HIGH_LIMITS`: ``bench/requests.py`` keeps the limiter on with limits no run reaches, and
  checks its one bucket write per request.
"""

from __future__ import annotations

LIMITS_OFF: dict[str, str] = {"RATE_LIMITS_ENABLED": "false"}

HIGH_LIMITS: dict[str, str] = {
    "RATE_LIMITS_ENABLED": "true",
    "RATE_LIMIT_PER_SECOND": "1000000",
    "RATE_LIMIT_BURST": "1000000",
    "ADMIN_RATE_LIMIT_PER_SECOND": "1000000",
    "ADMIN_RATE_LIMIT_BURST": "1000000",
    "MATCH_REQUESTS_PER_DAY": "1000000000",
    "PROFILE_REQUESTS_PER_DAY": "1000000000",
    "MESSAGES_PER_DAY": "1000000000",
    "SIGN_IN_PER_SOURCE_BURST": "1000000",
    "SIGN_IN_PER_SOURCE_PER_MINUTE": "60000000",
    "SIGN_IN_PER_KEY_PREFIX_BURST": "1000000",
    "SIGN_IN_PER_KEY_PREFIX_PER_MINUTE": "60000000",
}
