"""``local_stack.moto_server.fast_fifo_sends`` (in-process moto): a send to a FIFO queue of the embedded SQS answers as
moto's own path does (deduplication, the missing-id refusal, the queue's counts read after it) and
no longer counts the queue's messages."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.sqs import models as sqs_models

from chalicelib.persistence import storage
from local_stack.moto_server import fast_fifo_sends


@pytest.fixture
def sqs(aws: dict[str, str]) -> Any:
    """The session's in-process moto (``speed_up`` applied it; applying it again changes nothing)."""
    fast_fifo_sends()
    return storage.client("sqs")


def _fifo(sqs: Any, name: str, content_based: bool = False) -> str:
    attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true" if content_based else "false"}
    return str(sqs.create_queue(QueueName=f"{name}.fifo", Attributes=attributes)["QueueUrl"])


def _counts(sqs: Any, url: str) -> dict[str, str]:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"]
    return dict(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"])


def test_sends_deduplicate_and_count_as_moto_does(sqs: Any) -> None:
    url = _fifo(sqs, "lanes")
    entries = [{"Id": str(i), "MessageBody": f"m{i}", "MessageGroupId": f"g{i % 3}", "MessageDeduplicationId": f"d{i}"}
               for i in range(10)]
    assert len(sqs.send_message_batch(QueueUrl=url, Entries=entries)["Successful"]) == 10
    sqs.send_message(QueueUrl=url, MessageBody="again", MessageGroupId="g0", MessageDeduplicationId="d0")  # a duplicate: dropped
    assert _counts(sqs, url) == {"ApproximateNumberOfMessages": "10", "ApproximateNumberOfMessagesNotVisible": "0",
                                 "ApproximateNumberOfMessagesDelayed": "0"}
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in received][:1] == ["m0"]  # group order kept
    assert int(_counts(sqs, url)["ApproximateNumberOfMessagesNotVisible"]) == len(received)
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ContentBasedDeduplication"] == "false"
    assert "ApproximateNumberOfMessages" in attributes


def test_a_queue_without_content_deduplication_still_refuses_a_send_without_an_id(sqs: Any) -> None:
    url = _fifo(sqs, "strict")
    with pytest.raises(ClientError) as refused:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageGroupId="g")
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValue"
    deduplicated = _fifo(sqs, "by-content", content_based=True)
    sqs.send_message(QueueUrl=deduplicated, MessageBody="same", MessageGroupId="g")
    sqs.send_message(QueueUrl=deduplicated, MessageBody="same", MessageGroupId="g")
    assert _counts(sqs, deduplicated)["ApproximateNumberOfMessages"] == "1"


def test_a_send_reads_no_message_of_a_deep_queue(sqs: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _fifo(sqs, "deep")
    for start in range(0, 200, 10):
        sqs.send_message_batch(QueueUrl=url, Entries=[
            {"Id": str(i), "MessageBody": "{}", "MessageGroupId": f"slow.{i % 4}", "MessageDeduplicationId": f"d{start + i}"}
            for i in range(10)])
    reads = 0
    visible = sqs_models.Message.visible

    def counted(self: sqs_models.Message) -> bool:
        nonlocal reads
        reads += 1
        return bool(visible.fget(self))  # type: ignore[attr-defined]

    monkeypatch.setattr(sqs_models.Message, "visible", property(counted))
    sqs.send_message_batch(QueueUrl=url, Entries=[
        {"Id": str(i), "MessageBody": "{}", "MessageGroupId": "slow.0", "MessageDeduplicationId": f"new{i}"} for i in range(10)])
    assert reads == 0
    assert _counts(sqs, url)["ApproximateNumberOfMessages"] == "210"
    assert reads > 0  # GetQueueAttributes still counts
