"""The account erasure's steps and record shape (pure logic, no AWS)."""

from __future__ import annotations

import pytest

from chalicelib.persistence.record_check import MalformedRecord
from chalicelib.privacy.erasure_models import Erasure
from chalicelib.privacy.erasure_records import STEPS, ErasureStatus, ErasureStep, next_step, record


def test_the_steps_run_in_their_documented_order_and_end_with_the_profile() -> None:
    assert [s.value for s in STEPS] == [
        "keys", "listings", "webhooks", "saved_searches", "requests", "conversations", "blocks", "profile",
    ]
    walked = [STEPS[0]]
    while (following := next_step(walked[-1])) is not None:
        walked.append(following)
    assert walked == list(STEPS)
    assert next_step(ErasureStep.PROFILE) is None


def test_a_completed_record_reads_without_a_step_and_a_running_one_with_it() -> None:
    base = {"userId": "usr_1", "erasureId": "ers_1", "stepsCompleted": [], "round": 0,
            "requestedAt": "2026-11-29T03:00:00.000Z", "updatedAt": "2026-11-29T03:00:00.000Z"}
    running = record({**base, "status": "in_progress", "step": "listings"})
    assert running["step"] is ErasureStep.LISTINGS
    assert running["status"] is ErasureStatus.IN_PROGRESS
    done = record({**base, "status": "completed", "completedAt": "2026-11-29T03:00:04.000Z"})
    assert "step" not in done
    with pytest.raises(MalformedRecord):
        record({**base, "status": "in_progress", "step": "passwords"})


def test_the_documented_examples_are_valid_erasures() -> None:
    examples = Erasure.model_json_schema()["examples"]
    assert [Erasure.model_validate(e).status for e in examples] == [ErasureStatus.IN_PROGRESS, ErasureStatus.COMPLETED]
