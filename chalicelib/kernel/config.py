"""Process configuration, read once from environment variables; the only place that reads them.

Each stage of ``.chalice/config.json`` sets the plain settings; the resource names (tables,
queues, stream ARN) are injected by the deployment template (``infra/resources.json``:
``Environment.Variables`` with ``Ref``/``GetAtt``) and, locally, by
``local_stack.resources.create_resources`` from that same template. Resource names have no
defaults: a function started without one fails at cold start, naming every missing variable,
instead of silently using a table of another stack.

A plain pydantic model validates the variables (numbers and booleans from their text): the
service reads no ``.env`` files, so pydantic-settings and its dotenv loader are not imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

#: A resource name or ARN: required, never empty.
Resource = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ConfigurationError(RuntimeError):
    """The environment lacks or mis-sets variables the functions need (raised at cold start)."""


#: The cursor key of local runs and tests (``make run``, pytest): public, so refused when deployed.
LOCAL_CURSOR_SECRET = "local-cursor-secret"
#: Shortest cursor key a deployed function accepts: 32 characters, 256 bits at one bit per
#: character at worst (RFC 2104 §3: a key shorter than the hash output, 32 bytes for SHA-256,
#: weakens the HMAC). The template generates 64 letters and digits.
MIN_DEPLOYED_CURSOR_SECRET_LENGTH = 32


class Settings(BaseModel):
    """Typed view of the environment: one field per variable, read by exact (case-sensitive) name."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    USERS_TABLE: Resource
    API_KEYS_TABLE: Resource
    LISTINGS_TABLE: Resource
    REQUESTS_TABLE: Resource
    CONVERSATIONS_TABLE: Resource
    CONVERSATION_MEMBERS_TABLE: Resource
    MESSAGES_TABLE: Resource
    WEBHOOKS_TABLE: Resource
    DELIVERIES_TABLE: Resource
    EVENTS_TABLE: Resource
    SEARCH_INDEX_TABLE: Resource
    #: The list counters' table (chalicelib.search.counters, chalicelib.listings.counters).
    COUNTERS_TABLE: Resource
    SAVED_SEARCHES_TABLE: Resource
    PERCOLATOR_TABLE: Resource
    SAVED_SEARCH_MATCHES_TABLE: Resource
    DASHBOARD_SESSIONS_TABLE: Resource
    APPROVAL_QUEUE_URL: Resource
    DELIVERY_QUEUE_URL: Resource
    DELIVERY_QUEUE_ARN: Resource
    #: The slow lanes' FIFO queue: deliveries to webhooks whose circuit breaker is open (and their
    #: retries), apart from the healthy lanes' ``DeliveryQueue`` (chalicelib.webhooks.delivery.lanes).
    DELIVERY_SLOW_QUEUE_URL: Resource
    DELIVERY_SLOW_QUEUE_ARN: Resource
    DELIVERY_RETRY_QUEUE_URL: Resource
    DELIVERY_RETRY_QUEUE_ARN: Resource
    EVENTS_STREAM_ARN: Resource
    #: Stream of the Listings table (NEW_AND_OLD_IMAGES): feeds the listing posting lists.
    LISTINGS_STREAM_ARN: Resource
    #: The Users table's stream (NEW_AND_OLD_IMAGES): profile posting lists follow it.
    USERS_STREAM_ARN: Resource
    #: Allow http:// and loopback/private webhook targets (local stage and tests only).
    ALLOW_INSECURE_WEBHOOKS: bool = False
    #: Total deadline of one webhook delivery (DNS + connect + TLS + send + read), seconds (spec §8: 10).
    WEBHOOK_TIMEOUT_SECONDS: float = Field(default=10.0, gt=0, le=60)
    #: Delays before the retries of a failed delivery, seconds, comma separated (SQS DelaySeconds: 0..900).
    WEBHOOK_RETRY_DELAYS_SECONDS: str = "30,120,600"
    #: How long a delivery attempt's hold on its lane message (SQS visibility) and on its claim (lease)
    #: lasts unless its worker's heartbeat extends it, seconds: a worker that dies is replaced within
    #: this time (docs/webhook-delivery.md "Crash recovery"). The heartbeat beats every quarter of it.
    DELIVERY_LEASE_SECONDS: int = Field(default=20, ge=1, le=900)
    #: Delivery lanes (FIFO message groups) per webhook owner: the most lane workers one owner's
    #: webhooks can hold at once, however many webhooks it has (each webhook keeps one lane).
    DELIVERY_OWNER_LANES: int = Field(default=4, ge=1, le=100)
    #: Slow lanes shared by every webhook whose circuit breaker is open (after a timeout): the most
    #: lane workers all timing-out endpoints together can hold.
    DELIVERY_SLOW_LANES: int = Field(default=4, ge=1, le=100)
    #: botocore client timeouts and attempts of every DynamoDB and SQS client (see storage.boto_config).
    AWS_CONNECT_TIMEOUT_SECONDS: float = Field(default=2.0, gt=0, le=60)
    AWS_READ_TIMEOUT_SECONDS: float = Field(default=3.0, gt=0, le=60)
    AWS_MAX_ATTEMPTS: int = Field(default=3, ge=1, le=10)
    #: Seconds an authenticated key stays in the per-process cache (revocation delay).
    AUTH_CACHE_TTL_SECONDS: int = Field(default=60, ge=0)
    #: Seconds an approval task stays claimed by ``POST /v1/admin/approvals/claims``.
    APPROVAL_CLAIM_SECONDS: int = Field(default=300, ge=1, le=43200)
    #: Origins allowed by CORS: comma-separated exact origins, ``*`` for any, empty for none (chalicelib.edge.cors).
    CORS_ALLOWED_ORIGINS: str = ""
    #: Table of the idempotency records of POST/PATCH requests (chalicelib.idempotency).
    IDEMPOTENCY_TABLE: Resource
    #: Seconds an interrupted keyed request (its process killed mid-flight) keeps its ``Idempotency-Key``
    #: busy, at most: API Gateway gives up on a request after 29 s, so no live attempt runs longer.
    IDEMPOTENCY_IN_PROGRESS_SECONDS: int = Field(default=30, ge=1, le=60)
    #: Table of the API keys' token buckets and the users' daily quota counters (chalicelib.rate_limits; TTL ``expiresAt``).
    RATE_LIMITS_TABLE: Resource
    #: Table of the administrators' audit log (chalicelib.audit; entries are never changed).
    AUDIT_LOG_TABLE: Resource
    #: Table of the blocks between users (chalicelib.blocks).
    BLOCKS_TABLE: Resource
    #: Table of the reports and the moderation queue (chalicelib.reports).
    REPORTS_TABLE: Resource
    #: Table of the account erasures, one record per erased user (chalicelib.privacy.erasure_repository).
    ERASURES_TABLE: Resource
    #: ``false`` turns the rate limits off (no bucket write, no quota counter): for the test suites and
    #: benchmarks, which are about other things (tests/limits.py). A deployed function refuses it.
    RATE_LIMITS_ENABLED: bool = True
    #: Requests per second one API key may sustain (GCRA token bucket, chalicelib.rate_limits; DESIGN §2: 20).
    RATE_LIMIT_PER_SECOND: float = Field(default=20.0, gt=0, le=1_000_000)
    #: Requests an idle API key may send at once, the bucket's size (DESIGN §2: 100).
    RATE_LIMIT_BURST: int = Field(default=100, ge=1, le=1_000_000)
    #: Dashboard sign-in attempts (any outcome) per source address: at once, and per minute after.
    SIGN_IN_PER_SOURCE_BURST: int = Field(default=20, ge=1, le=1_000_000)
    SIGN_IN_PER_SOURCE_PER_MINUTE: float = Field(default=10.0, gt=0, le=60_000_000)
    #: The same per key prefix tried (the key's first characters: guesses at one key from many addresses).
    SIGN_IN_PER_KEY_PREFIX_BURST: int = Field(default=10, ge=1, le=1_000_000)
    SIGN_IN_PER_KEY_PREFIX_PER_MINUTE: float = Field(default=5.0, gt=0, le=60_000_000)
    #: The same two for keys with the admin scope (bulk review and user creation: five times a user's).
    ADMIN_RATE_LIMIT_PER_SECOND: float = Field(default=100.0, gt=0, le=1_000_000)
    ADMIN_RATE_LIMIT_BURST: int = Field(default=500, ge=1, le=1_000_000)
    #: Daily quotas per user (UTC days; 429 RATE_LIMITED beyond): match requests, profile requests, messages sent.
    MATCH_REQUESTS_PER_DAY: int = Field(default=100, ge=0, le=1_000_000_000)
    PROFILE_REQUESTS_PER_DAY: int = Field(default=50, ge=0, le=1_000_000_000)
    MESSAGES_PER_DAY: int = Field(default=1000, ge=0, le=1_000_000_000)
    #: Saved searches one user may keep at once (``POST /v1/saved-searches`` answers 409 beyond).
    SAVED_SEARCH_LIMIT: int = Field(default=50, ge=1, le=1000)
    #: ``gazetteer`` (embedded GeoNames) or ``amazon-location``; case and surrounding blanks ignored,
    #: empty means ``gazetteer``.
    GEOCODER: str = "gazetteer"
    #: HMAC key of the page cursors (:mod:`chalicelib.kernel.cursors`). Deployed stacks get a generated one
    #: (``CursorSecret`` in ``infra/build_template.py``); the public default serves local runs only.
    CURSOR_SECRET: str = LOCAL_CURSOR_SECRET
    #: File the EMF metric lines are appended to (:mod:`chalicelib.telemetry.metrics`); empty: stdout, where
    #: a deployed function's lines reach CloudWatch Logs. ``make run`` sets ``.local/metrics.log``.
    METRICS_LOG: str = ""
    #: powertools' switch: no metric line is written (:mod:`chalicelib.telemetry.metrics`).
    POWERTOOLS_METRICS_DISABLED: bool = False
    #: powertools' switch: no X-Ray subsegment or annotation (:mod:`chalicelib.telemetry.tracing`); the local
    #: stack and the tests run without an X-Ray daemon.
    POWERTOOLS_TRACE_DISABLED: bool = False
    #: Set by the Lambda runtime in every function (AWS docs, "Defined runtime environment
    #: variables"); never by ``make run`` or the tests. Non-empty means a deployed function.
    AWS_LAMBDA_FUNCTION_NAME: str = ""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Settings:
        """The settings in ``environ`` (variables of other names are ignored).

        Raises
        ------
        ConfigurationError
            A required variable is missing or empty, or a value is invalid; the message names
            every such variable. Or running in AWS Lambda with the public local ``CURSOR_SECRET`` or one shorter than
            :data:`MIN_DEPLOYED_CURSOR_SECRET_LENGTH` (see :meth:`deployed_cursor_secret_problem`), or with
            ``RATE_LIMITS_ENABLED`` false.
        """
        try:
            loaded = cls.model_validate({name: environ[name] for name in cls.model_fields if name in environ})
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in e['loc'])} ({e['msg'].lower()})" for e in exc.errors()]
            raise ConfigurationError(
                "Invalid or missing environment variables: " + "; ".join(problems)
                + ". Resource names come from the deployment template (infra/resources.json) or the local stack."
            ) from exc
        problem = loaded.deployed_cursor_secret_problem()
        if problem:
            raise ConfigurationError(problem)
        if loaded.deployed and not loaded.RATE_LIMITS_ENABLED:
            raise ConfigurationError(
                "Invalid environment variable RATE_LIMITS_ENABLED: a deployed function "
                f"({loaded.AWS_LAMBDA_FUNCTION_NAME}) keeps its rate limits; raise RATE_LIMIT_* and the daily quotas instead."
            )
        return loaded

    @property
    def deployed(self) -> bool:
        """Whether this process is a deployed Lambda function (not ``make run`` or a test)."""
        return bool(self.AWS_LAMBDA_FUNCTION_NAME.strip())

    def deployed_cursor_secret_problem(self) -> str | None:
        """Why ``CURSOR_SECRET`` is unfit for a deployed function, or ``None`` (always ``None`` locally).

        With the public default anyone could sign cursors for a deployed API, so a deployed
        function refuses to start rather than sign with it.
        """
        if not self.deployed:
            return None
        secret = self.CURSOR_SECRET.strip()
        if secret == LOCAL_CURSOR_SECRET:
            reason = "is the public local default"
        elif len(secret) < MIN_DEPLOYED_CURSOR_SECRET_LENGTH:
            reason = f"is shorter than {MIN_DEPLOYED_CURSOR_SECRET_LENGTH} characters"
        else:
            return None
        return (
            f"Invalid environment variable CURSOR_SECRET: it {reason}, which a deployed function ("
            f"{self.AWS_LAMBDA_FUNCTION_NAME}) must not use to sign page cursors. The deployment template "
            "(infra/resources.json) sets it from the generated Secrets Manager secret CursorSecret; "
            "deploy with `chalice package --merge-template infra/resources.json` or set a random value "
            f"of at least {MIN_DEPLOYED_CURSOR_SECRET_LENGTH} characters."
        )


@lru_cache(maxsize=1)
def settings() -> Settings:
    """Return the process-wide :class:`Settings`, read from ``os.environ`` once.

    Tests that change the environment call ``settings.cache_clear()``.

    Raises
    ------
    ConfigurationError
        As :meth:`Settings.from_environment`.
    """
    return Settings.from_environment(os.environ)
