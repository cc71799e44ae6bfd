"""Erasures table: one item per erased user (:class:`~chalicelib.privacy.erasure_records.ErasureRecord`).

Keyed by ``userId``: the record is created with ``attribute_not_exists(userId)``, so however many
``DELETE /v1/me`` of one user arrive at once, one creates it and the others find it. Each round
of the erasure moves it with a condition on the ``round`` it read (:func:`advance_op`).
"""

from __future__ import annotations

from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.privacy.erasure_records import ErasureRecord, ErasureStatus, ErasureStep, record


def _table() -> str:
    return settings().ERASURES_TABLE


def get(user_id: str, consistent: bool = False) -> ErasureRecord | None:
    """The erasure of ``user_id``, or ``None`` (one GetItem; ``consistent``: strongly consistent)."""
    item = storage.get(_table(), {"userId": user_id}, consistent=consistent)
    return None if item is None else record(item)


def start_op(erasure: ErasureRecord) -> TransactItem:
    """Transaction ``Put`` of a new erasure; its condition fails when the user has one already."""
    return storage.tx_put(_table(), erasure, condition="attribute_not_exists(userId)")


def advance_op(
    user_id: str, expected_round: int, step: ErasureStep | None, completed: list[str], position: str | None, at: str
) -> TransactItem:
    """Transaction ``Update`` recording one round: the erasure is at ``step`` (``None``: completed
    at ``at``), ``completed`` are the steps finished, ``position`` where ``step`` stands.

    Conditional on the erasure being in progress at ``expected_round``; the round goes up by one.
    """
    values: dict[str, Any] = {"r": expected_round, "one": 1, "at": at, "done": completed,
                              "progress": ErasureStatus.IN_PROGRESS.value}
    sets = ["#round = #round + :one", "updatedAt = :at", "stepsCompleted = :done"]
    removes = []
    if step is None:
        sets += ["#status = :completed", "completedAt = :at"]
        values["completed"] = ErasureStatus.COMPLETED.value
        removes += ["step", "#position"]
    else:
        sets.append("step = :step")
        values["step"] = step.value
        if position is None:
            removes.append("#position")
        else:
            sets.append("#position = :position")
            values["position"] = position
    expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
    return storage.tx_update(
        _table(), {"userId": user_id}, expression,
        condition="#round = :r AND #status = :progress",
        ExpressionAttributeNames={"#round": "round", "#status": "status", "#position": "position"},
        ExpressionAttributeValues=storage.values(**values),
    )
