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

from botocore.exceptions import ClientError

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.telemetry import metrics


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
        AttributeNames=["SentTimestamp"],  # moto and SQS both honour it (MessageSystemAttributeNames is its newer name)
    )
    sent = [int(m["Attributes"]["SentTimestamp"]) for m in response.get("Messages", []) if "SentTimestamp" in m.get("Attributes", {})]
    if sent:  # how long the oldest claimed task waited (ApprovalQueueAge)
        metrics.record_approval_queue_age(clock.now().timestamp() - min(sent) / 1000)
    tasks = []
    for message in response.get("Messages", []):
        body = json.loads(message["Body"])
        tasks.append(Task(message["ReceiptHandle"], body["listingId"], int(body["version"]), body["enqueuedAt"]))
    return tasks


#: SQS error codes meaning a receipt handle no longer (or never did) name a claimed message.
_LOST_CLAIM_CODES = frozenset({"ReceiptHandleIsInvalid", "AWS.SimpleQueueService.MessageNotInflight", "MessageNotInflight"})


class ClaimLostError(Exception):
    """The receipt handle of a task is not (or no longer) a claim this queue issued."""


def hold(receipt: str) -> None:
    """Confirm the claim behind ``receipt`` is still held, extending it by ``APPROVAL_CLAIM_SECONDS``.

    Raises
    ------
    ClaimLostError
        SQS rejects the receipt handle (forged, or its message is gone) or the message is
        no longer in flight (the claim expired).
    """
    try:
        _sqs().change_message_visibility(
            QueueUrl=settings().APPROVAL_QUEUE_URL, ReceiptHandle=receipt, VisibilityTimeout=settings().APPROVAL_CLAIM_SECONDS
        )
    except ClientError as exc:
        if exc.response["Error"]["Code"] in _LOST_CLAIM_CODES:
            raise ClaimLostError(exc.response["Error"]["Code"]) from exc
        raise


def delete_many(receipts: list[str]) -> None:
    """Remove up to 10 dropped tasks in one DeleteMessageBatch (receipts SQS rejects are already gone)."""
    if receipts:
        entries = [{"Id": str(i), "ReceiptHandle": r} for i, r in enumerate(receipts)]
        _sqs().delete_message_batch(QueueUrl=settings().APPROVAL_QUEUE_URL, Entries=entries)


def delete(receipt: str) -> None:
    """Remove a decided or dropped task from the queue (a receipt SQS rejects means the task is already gone)."""
    try:
        _sqs().delete_message(QueueUrl=settings().APPROVAL_QUEUE_URL, ReceiptHandle=receipt)
    except ClientError as exc:
        if exc.response["Error"]["Code"] not in _LOST_CLAIM_CODES:
            raise
