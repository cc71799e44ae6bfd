"""The local event runner reads its streams at once when notified (the local stack notifies it
after every API request), however long its idle stream poll is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import Api, User
from tests.integration.webhook_helpers import create_webhook, message_event
from tests.integration.webhook_receivers import Receiver

#: Far longer than any wait below: only notify() can make the stream threads poll in time.
IDLE_SECONDS = 120.0


@pytest.fixture
def slow_runner(aws: dict[str, str]) -> Iterator[Any]:
    """An event runner whose idle streams poll every :data:`IDLE_SECONDS`, running on threads."""
    from app import app
    from local_stack.runner import EventRunner

    runner = EventRunner(app, idle_poll_seconds=IDLE_SECONDS)
    runner.start()
    yield runner
    runner.stop()


def test_a_write_followed_by_notify_is_delivered_without_waiting_for_the_idle_poll(
    api: Api, alice: User, bob: User, slow_runner: Any, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok")
    create_webhook(api, alice, receiver.url)
    for n in range(2):  # twice: the second write comes after the stream threads went idle again
        receiver_count = len(receiver.requests)
        message_event(alice, bob, content=f"m{n}")
        slow_runner.notify()
        assert len(receiver.wait_for(receiver_count + 1, timeout=30)) == receiver_count + 1  # 30 s << 120 s
