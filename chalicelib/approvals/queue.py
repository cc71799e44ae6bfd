"""The SQS listing-approval queue.

A task is ``{listingId, version, enqueuedAt}``. Claiming receives messages with a visibility
timeout of ``APPROVAL_CLAIM_SECONDS``, so a task an administrator claims but never decides
becomes visible again; after ``maxReceiveCount`` receives the queue's redrive policy moves
it to the dead-letter queue (``infra/resources.json``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from chalicelib import storage
from chalicelib.config import settings


@dataclass(frozen=True)
class Task:
    """One approval task as received: the message's receipt handle and body."""

    receipt: str
    listing_id: str
    version: int
    enqueued_at: str


def _sqs() -> Any:
    return storage.client("sqs")


def send_task(listing_id: str, version: int, enqueued_at: str) -> None:
    """Queue a review of ``listing_id`` at ``version``."""
    body = json.dumps({"listingId": listing_id, "version": version, "enqueuedAt": enqueued_at})
    _sqs().send_message(QueueUrl=settings().APPROVAL_QUEUE_URL, MessageBody=body)


def receive(max_tasks: int) -> list[Task]:
    """Claim up to ``max_tasks`` (1..10) tasks for ``APPROVAL_CLAIM_SECONDS``; no long polling."""
    response = _sqs().receive_message(
        QueueUrl=settings().APPROVAL_QUEUE_URL,
        MaxNumberOfMessages=max_tasks,
        VisibilityTimeout=settings().APPROVAL_CLAIM_SECONDS,
        WaitTimeSeconds=0,
    )
    tasks = []
    for message in response.get("Messages", []):
        body = json.loads(message["Body"])
        tasks.append(Task(message["ReceiptHandle"], body["listingId"], int(body["version"]), body["enqueuedAt"]))
    return tasks


def delete(receipt: str) -> None:
    """Remove a decided or dropped task from the queue."""
    _sqs().delete_message(QueueUrl=settings().APPROVAL_QUEUE_URL, ReceiptHandle=receipt)
