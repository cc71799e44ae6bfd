"""Rate limits out of the way: the settings the test suites and benchmarks run with.

Tests and benchmarks send many requests with one key within a second (and many match requests
and messages per user), far beyond the production defaults (``chalicelib.config``: 20 requests
per second and 100 at once per key, daily quotas per user), which they are not about. The
integration fixtures (``tests/integration/conftest.py``), the end-to-end stacks
(``tests/e2e/conftest.py``) and ``bench/requests.py`` therefore raise every limit here; the limiter
still runs on every request (one bucket write each), so its path is exercised everywhere.
``tests/integration/test_rate_limits.py`` sets its own limits and also runs the real defaults.
"""

from __future__ import annotations

HIGH_LIMITS: dict[str, str] = {
    "RATE_LIMIT_PER_SECOND": "1000000",
    "RATE_LIMIT_BURST": "1000000",
    "ADMIN_RATE_LIMIT_PER_SECOND": "1000000",
    "ADMIN_RATE_LIMIT_BURST": "1000000",
    "MATCH_REQUESTS_PER_DAY": "1000000000",
    "PROFILE_REQUESTS_PER_DAY": "1000000000",
    "MESSAGES_PER_DAY": "1000000000",
}
