"""Unit-test fixtures: in-process moto with the template's resources, the Chalice test client,
users with keys, and an event runner that drains the outbox stream on demand."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from chalice.test import Client
from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber

from chalicelib import storage
from chalicelib.auth.service import clear_cache
from chalicelib.config import settings
from chalicelib.users.models import AdminUserCreate
from chalicelib.users.service import create_user
from local_stack.moto_server import remember_deduplication_ids
from local_stack.resources import create_resources

remember_deduplication_ids()  # SQS FIFO deduplication as in AWS (local_stack/moto_server.py)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A fresh in-process moto with every table and queue of ``infra/resources.json``.

    moto handles one AWS call at a time here, as a real service is atomic per call: its
    DynamoDB backend is not thread-safe (a cancelled transaction restores a snapshot of the
    whole table), while the product code above it still runs truly concurrently.
    """
    lock = threading.Lock()
    original = BotocoreStubber.process_request

    def one_at_a_time(self: BotocoreStubber, request: Any) -> Any:
        with lock:
            return original(self, request)

    monkeypatch.setattr(BotocoreStubber, "process_request", one_at_a_time)
    with mock_aws():
        environment = create_resources()
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        settings.cache_clear()
        storage.client.cache_clear()
        clear_cache()
        yield environment
        settings.cache_clear()
        storage.client.cache_clear()
        clear_cache()


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


@pytest.fixture
def api(aws: dict[str, str]) -> Iterator[Api]:
    """The app behind Chalice's test client, on the fresh moto."""
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
