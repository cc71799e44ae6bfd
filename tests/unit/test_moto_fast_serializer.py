"""``local_stack.moto_server.fast_json_structures`` answers exactly as moto's own serializer.

Random DynamoDB, Streams and SQS results (wire-shaped dicts, as moto's handlers build them) are
serialized with the fast path and with moto's alias-lookup path; the bodies must be equal as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto.core.serialize import BaseJSONSerializer, JSONSerializer, XFormedAttributePicker
from moto.core.utils import get_service_model

from local_stack.moto_server import fast_json_structures
from tests.unit.dynamodb_strategies import items

# Tests of the local stack's embedded AWS (pyproject.toml, marker embedded_aws).
pytestmark = pytest.mark.embedded_aws

_names = st.text("abcdefgXYZ_#", min_size=1, max_size=6)
_items = items(_names)


@pytest.fixture(scope="module", autouse=True)
def patched() -> Iterator[Any]:
    before = BaseJSONSerializer._serialize_type_structure
    fast_json_structures()
    yield BaseJSONSerializer._serialize_type_structure
    BaseJSONSerializer._serialize_type_structure = before  # type: ignore[method-assign]


def _body(service: str, operation: str, result: Any, fast: bool, patched: Any) -> Any:
    model = get_service_model(service).operation_model(operation)
    serializer = JSONSerializer(operation_model=model, value_picker=XFormedAttributePicker())
    if not fast:  # moto's own path, on this instance only
        serializer._serialize_type_structure = patched.original.__get__(serializer)  # type: ignore[method-assign]
    return json.loads(serializer.serialize(result)["body"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(_items, max_size=4), last=st.none() | _items)
def test_a_query_result_serializes_as_moto_would(patched: Any, items: list[dict[str, Any]], last: dict[str, Any] | None) -> None:
    result = {"Items": items, "Count": len(items), "ScannedCount": len(items), "LastEvaluatedKey": last}
    assert _body("dynamodb", "Query", result, True, patched) == _body("dynamodb", "Query", result, False, patched)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(new=_items, old=st.none() | _items, keys=_items)
def test_a_stream_record_serializes_as_moto_would(
    patched: Any, new: dict[str, Any], old: dict[str, Any] | None, keys: dict[str, Any]
) -> None:
    record = {"eventID": "1", "eventName": "MODIFY", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
              "dynamodb": {"Keys": keys, "NewImage": new, "OldImage": old, "SequenceNumber": "100", "SizeBytes": 10,
                           "StreamViewType": "NEW_AND_OLD_IMAGES"}}
    result = {"Records": [record], "NextShardIterator": "it"}
    assert _body("dynamodbstreams", "GetRecords", result, True, patched) == _body("dynamodbstreams", "GetRecords", result, False, patched)


def test_dicts_with_other_keys_and_objects_take_moto_s_path(patched: Any) -> None:
    class Attributes:
        QueueUrl = "http://queue"

    snake = {"queue_url": "http://queue"}  # moto's alias lookup finds QueueUrl under its snake_case name
    for result in (Attributes(), snake):
        assert _body("sqs", "CreateQueue", result, True, patched) == {"QueueUrl": "http://queue"}
