"""Integration-test fixtures: one in-process moto per session with the template's resources
(emptied before every test), the Chalice test client, users with keys, and an event runner that
drains the outbox stream on demand."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.auth.service import clear_cache
from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.users.models import AdminUserCreate
from chalicelib.users.service import create_user
from tests.clocks import FrozenClock, frozen_clock
from tests.integration.aws_session import Resources, moto_session, reset, wipe
from tests.limits import HIGH_LIMITS, LIMITS_OFF


@pytest.fixture(scope="session")
def aws_resources() -> Iterator[Resources]:
    """The session's in-process moto with every table and queue of ``infra/resources.json``."""
    with moto_session() as resources:
        yield resources


@pytest.fixture(scope="module", autouse=True)
def aws_wiped_per_module(aws_resources: Resources) -> None:
    """Each test module starts on a moto holding nothing but the template's resources
    (:func:`tests.integration.aws_session.wipe`: what moto keeps is bounded by one module's writes)."""
    wipe(aws_resources)


def reset_process_caches() -> None:
    """Forget cached settings, boto3 clients, API-key lookups, rate-limit hints and the remembered
    block sets (they depend on the environment and the last test's tables)."""
    from chalicelib.blocks import api as blocks
    from chalicelib.rate_limits.service import clear_hints

    settings.cache_clear()
    storage.client.cache_clear()
    storage.probe_client.cache_clear()
    clear_cache()
    clear_hints()
    blocks.forget_hidden()


#: The process environment. Chalice's test client swaps ``os.environ`` for a copy with the stage's
#: variables during each request; concurrent requests (threads) can leave such a copy in place,
#: which would carry one test's stage variables into the next tests.
_PROCESS_ENVIRON = os.environ


@contextmanager
def fresh_aws(resources: Resources, patch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Empty the session's moto (:func:`tests.integration.aws_session.reset`), point the
    environment at its resources through ``patch``, and reset the process caches around it
    (and the environment itself, should a test's requests have left a swapped copy)."""
    os.environ = _PROCESS_ENVIRON  # noqa: B003  (restores the object, on purpose)
    reset(resources)
    for name, value in {**resources.environment, **LIMITS_OFF}.items():
        patch.setenv(name, value)
    reset_process_caches()
    try:
        yield dict(resources.environment)
    finally:
        os.environ = _PROCESS_ENVIRON  # noqa: B003
        reset_process_caches()


@pytest.fixture
def aws(aws_resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Every table and queue of ``infra/resources.json``, empty, on the session's in-process moto;
    yields the functions' environment (already set in ``os.environ``).

    ``os.environ`` is restored whole afterwards: Chalice's test client swaps the stage's
    variables in and out around each request, and requests made from several threads at once
    can interleave those swaps and leave the ``dev`` stage's values behind (e.g.
    ``ALLOW_INSECURE_WEBHOOKS=false``), which would break every later test."""
    saved = dict(os.environ)
    try:
        with fresh_aws(aws_resources, monkeypatch) as environment:
            yield environment
    finally:
        os.environ.clear()
        os.environ.update(saved)


@dataclass
class Api:
    """The Chalice test client with JSON helpers; ``key`` is sent as the bearer token."""

    client: Client

    def call(self, method: str, path: str, key: str | None = None, body: Any = None, raw: bytes | None = None,
             headers: dict[str, str] | None = None) -> Any:
        sent = {"content-type": "application/json", **(headers or {})}
        if key:
            sent["authorization"] = f"Bearer {key}"
        payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        response = getattr(self.client.http, method.lower())(path, headers=sent, body=payload)
        response.json = json.loads(response.body) if response.body else None
        return response

    def call_json(self, method: str, path: str, key: str | None = None, body: Any = None, status: int = 200) -> dict[str, Any]:
        """:meth:`call`, asserting the answer's ``status`` (the body is shown when it differs); the JSON body."""
        response = self.call(method, path, key, body)
        assert response.status_code == status, response.json
        result: dict[str, Any] = response.json
        return result


@pytest.fixture
def api(aws: dict[str, str]) -> Iterator[Api]:
    """The app behind Chalice's test client, on the emptied moto."""
    from app import app

    with Client(app) as client:
        yield Api(client)


@dataclass
class User:
    """A created user and its API key."""

    user_id: str
    key: str


def make_user(name: str = "Ada", admin: bool = False, channels: dict[str, str] | None = None, **fields: Any) -> User:
    """Create a user directly through the service (no HTTP), with channels telegram+email by default."""
    channels = {"telegram": f"@{name.lower()}", "email": f"{name.lower()}@example.org"} if channels is None else channels
    created = create_user(AdminUserCreate(displayName=name, admin=admin, channels=channels, **fields))  # type: ignore[arg-type]
    return User(created.userId, created.apiKey)


@pytest.fixture
def admin(aws: dict[str, str]) -> User:
    """An administrator."""
    return make_user("Admin", admin=True)


@pytest.fixture
def alice(aws: dict[str, str]) -> User:
    """A regular user with telegram and email connected."""
    return make_user("Alice", country="de")


@pytest.fixture
def bob(aws: dict[str, str]) -> User:
    """Another regular user."""
    return make_user("Bob", country="fr")


@pytest.fixture
def runner(aws: dict[str, str]) -> Any:
    """The local event runner over the in-process moto (call ``runner.drain()``)."""
    from app import app
    from local_stack.runner import EventRunner

    return EventRunner(app)


#: The files that take longest (wall seconds per file, each test's ``time.perf_counter()`` in one
#: process, 2026-11-28; docs/testing.md, "Wall time of make test"), longest first. With ``make
#: integration`` on pytest-xdist workers (``--dist loadfile``: whole files) they are handed out first
#: and the short files fill in behind them, so both workers end close together (longest processing
#: time first) instead of one finishing a long file alone at the end. By wall time, not CPU: the
#: webhook delivery file waits on hanging receivers for most of its 20-30 s, and handed out late
#: (the other files go in name order) it can leave one worker alone with it at the end.
LONG_FILES = (
    "tests/integration/test_webhooks_delivery.py",
    "tests/integration/test_profile_index.py",
    "tests/integration/test_saved_searches.py",
    "tests/integration/test_list_pages.py",
    "tests/integration/test_profiles.py",
    "tests/integration/test_search_geo.py",
    "tests/integration/test_search_native.py",
    "tests/integration/test_saved_searches_property.py",
    "tests/integration/test_saved_search_match_pages.py",
    "tests/integration/test_search.py",
    "tests/integration/test_dashboard.py",
    "tests/integration/test_listings.py",
    "tests/integration/test_approvals.py",
    "tests/integration/test_requests.py",
    "tests/integration/test_search_round_trips.py",
)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` scheduling (whole files per worker) with :data:`LONG_FILES` first."""
    from xdist.scheduler import LoadFileScheduling

    class LongestFirst(LoadFileScheduling):  # type: ignore[misc]
        def _assign_work_unit(self, node: Any) -> None:
            for scope in reversed(LONG_FILES):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return LongestFirst(config, log) if config.getoption("dist") == "loadfile" else None


@pytest.fixture
def limits(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``limits(NAME=value, ...)``: this test's limits; every other one is the production default."""

    def apply(**values: str) -> None:
        for name in HIGH_LIMITS:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("RATE_LIMITS_ENABLED", "true")  # the suite runs with them off (tests/limits.py)
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        settings.cache_clear()

    return apply


@pytest.fixture
def frozen() -> Iterator[FrozenClock]:
    """The clock frozen at a whole millisecond of now (items written under it stay realistic: TTLs, createdAt)."""
    with frozen_clock(clock.now().replace(microsecond=0)) as fake:
        yield fake


@pytest.fixture
def receivers() -> Iterator[Any]:
    """``receivers(behaviour, **options)`` starts a webhook receiver on 127.0.0.1; all are closed after the test."""
    from tests.integration.webhook_helpers import receiver_factory  # it imports this module's helpers

    yield from receiver_factory()


@pytest.fixture
def fast_delivery(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Webhook delivery with a 1 s total deadline and retries without delay."""
    from tests.integration.webhook_helpers import fast_delivery_settings

    fast_delivery_settings(monkeypatch)


@pytest.fixture
def local_server(api: Api) -> Iterator[str]:
    """The base URL of the app behind ``local_stack.server`` (the local stack's HTTP edge) on a free port."""
    with serve_locally() as base:
        yield base


@contextmanager
def serve_locally(after_request: Callable[[], None] | None = None) -> Iterator[str]:
    """Serve the app behind ``local_stack.server`` on a free port (``after_request`` as the local
    stack's runner wake-up); yields the base URL."""
    from app import app
    from local_stack.server import make_server

    app_class = app.__class__
    server = make_server(app, "127.0.0.1", 0, after_request)  # turns the app into a LocalChalice (thread-local requests)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join(10)
        app.__class__ = app_class  # the other tests use the plain app with Chalice's test client
