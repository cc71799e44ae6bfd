"""``local_stack.moto_server.fast_json_requests`` gives moto's DynamoDB handler the parameters its own parser gives.

Random data-plane requests are serialized as botocore sends them; moto's request parser (the shape
walk) and the decoded JSON must be equal whenever the fast path takes the body (no ``null``, no
binary value), and a body with either must be left to moto's parser.
"""

from __future__ import annotations

import json
from typing import Any

import botocore.session
import pytest
from botocore.serialize import create_serializer
from hypothesis import HealthCheck, given, settings
from moto.core.parse import PROTOCOL_PARSERS

from local_stack.moto_server import DATA_PLANE_ACTIONS
from tests.unit.dynamodb_strategies import data_plane_requests

# Tests of the local stack's embedded AWS (pyproject.toml, marker embedded_aws).
pytestmark = pytest.mark.embedded_aws

_MODEL = botocore.session.get_session().get_service_model("dynamodb")
#: botocore's request serializer of the "json" protocol, as a client builds it (without validation, as ours).
_SERIALIZER = create_serializer("json", include_validation=False)


def _sent(operation: str, params: dict[str, Any]) -> bytes:
    """The body botocore sends for ``params``."""
    body: bytes = _SERIALIZER.serialize_to_request(params, _MODEL.operation_model(operation))["body"]
    return body


def _moto_parse(operation: str, body: bytes) -> Any:
    parser = PROTOCOL_PARSERS["json"](_MODEL.operation_model(operation), map_type=dict)
    return parser.parse({"method": "POST", "values": {}, "headers": {}, "body": body, "url_path": "/", "url_params": {}})


def _taken(body: bytes) -> bool:
    """Whether the fast path reads ``body`` (the condition of ``fast_json_requests``)."""
    return b"null" not in body and b'"B"' not in body and b'"BS"' not in body


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=data_plane_requests())
def test_a_data_plane_body_reads_as_moto_parses_it(request: tuple[str, dict[str, Any]]) -> None:
    operation, params = request
    assert operation in DATA_PLANE_ACTIONS
    body = _sent(operation, params)
    if _taken(body):
        assert json.loads(body) == _moto_parse(operation, body)


def test_a_body_with_a_null_or_a_binary_value_is_left_to_moto() -> None:
    binary = _sent("PutItem", {"TableName": "T", "Item": {"pk": {"S": "a"}, "b": {"B": b"\x00\x01"}}})
    assert not _taken(binary)
    assert _moto_parse("PutItem", binary)["Item"]["b"] == {"B": b"\x00\x01"}  # moto decodes it: json would not
    dropped = b'{"TableName": "T", "Key": {"pk": {"S": "a"}}, "ConsistentRead": null}'
    assert not _taken(dropped)
    assert "ConsistentRead" not in _moto_parse("GetItem", dropped)  # moto drops a null member: json would keep it


def test_the_patch_is_in_place_and_reads_only_dynamodb_data_plane_bodies() -> None:
    from moto.core.responses import BaseResponse

    from local_stack.moto_server import fast_json_requests

    fast_json_requests()
    assert getattr(BaseResponse.parse_parameters, "reads_json", False)
    assert {"DescribeTable", "CreateTable", "ListTables"}.isdisjoint(DATA_PLANE_ACTIONS)
