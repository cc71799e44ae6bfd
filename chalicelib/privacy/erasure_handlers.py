"""Outbox stream consumer of account erasures (via ``app.py``): each ``account.erasure_step``
event runs one round of its erasure (:func:`chalicelib.privacy.erasure.run_round`)."""

from __future__ import annotations

from typing import Any

from chalicelib.persistence import outbox
from chalicelib.persistence.outbox import OutboxEvent
from chalicelib.persistence.streams import process_outbox_batch
from chalicelib.privacy import erasure


def _handle(item: OutboxEvent) -> None:
    if item["type"] != outbox.ACCOUNT_ERASURE_STEP:
        return
    erasure.run_round(str(item["data"]["userId"]), int(item["data"]["round"]))


def handle_outbox_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry: run the erasure round of every ``account.erasure_step`` event of the batch.

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: a round that raised is retried by the event source
        mapping (rounds are idempotent and conditional on their round number).
    """
    return process_outbox_batch(event, _handle)
