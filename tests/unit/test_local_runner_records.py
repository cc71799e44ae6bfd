"""The local event runner hands stream records to handlers in a Lambda event's JSON."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from local_stack.runner import lambda_event_json


def test_a_parsed_stream_record_becomes_a_lambda_event_record() -> None:
    parsed = {"eventName": "INSERT", "dynamodb": {
        "ApproximateCreationDateTime": datetime(2026, 6, 1, 12, 0, 30, 700000, tzinfo=UTC),
        "NewImage": {"id": {"S": "lst_1"}, "blob": {"B": b"\x00\xff"}, "tags": {"BS": [b"a", b"b"]}, "n": {"N": "7"}},
        "Keys": {"id": {"S": "lst_1"}}, "SequenceNumber": "100"}}

    event = lambda_event_json(parsed)

    assert event["dynamodb"]["ApproximateCreationDateTime"] == 1780315230  # whole epoch seconds, as Lambda sends
    assert event["dynamodb"]["NewImage"] == {"id": {"S": "lst_1"}, "blob": {"B": base64.b64encode(b"\x00\xff").decode()},
                                            "tags": {"BS": ["YQ==", "Yg=="]}, "n": {"N": "7"}}
    assert event["dynamodb"]["Keys"] == parsed["dynamodb"]["Keys"]
    assert event["eventName"] == "INSERT"
