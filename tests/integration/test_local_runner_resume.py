"""The local event runner saves its stream checkpoints to its state file and a new runner on the
same file (the local stack restarted against a surviving embedded AWS) goes on after them instead
of handling the streams again from their start."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import Api, User
from tests.integration.helpers import approval_queue_depth, create_listing


def test_a_runner_restarted_on_its_state_file_goes_on_after_what_was_handled(api: Api, alice: User, tmp_path: Path) -> None:
    from app import app
    from local_stack.runner import EventRunner, load_checkpoints

    state = tmp_path / "stream-checkpoints.json"
    for _ in range(3):
        create_listing(api, alice)
    first = EventRunner(app, state_file=state)
    assert first.drain() > 0
    assert approval_queue_depth() == (3, 0)  # one approval task per pending listing
    saved = load_checkpoints(state)
    assert all(saved[arn] == shards for arn, shards in first.checkpoints().items())

    restarted = EventRunner(app, state_file=state)
    assert restarted.drain() == 0
    assert approval_queue_depth() == (3, 0)  # no second task for a listing
    create_listing(api, alice)
    assert restarted.drain() > 0
    assert approval_queue_depth() == (4, 0)


def test_a_state_file_that_is_not_checkpoints_stops_with_its_name(tmp_path: Path) -> None:
    from local_stack.runner import load_checkpoints

    state = tmp_path / "stream-checkpoints.json"
    assert load_checkpoints(state) == {}
    state.write_text("[1, 2]")
    with pytest.raises(SystemExit, match=r"stream-checkpoints\.json"):
        load_checkpoints(state)
