"""DynamoDB's data-plane answers read as sent (``storage.WireJSONParser``) give the items botocore's modeled parse gave."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from typing import Any

import botocore.session
from boto3.dynamodb.types import Binary, TypeSerializer
from botocore.parsers import JSONParser
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.persistence import storage
from tests.dynamodb_values import attribute_values

_MODEL = botocore.session.get_session().get_service_model("dynamodb")

_scalars = st.one_of(
    st.text(max_size=8), st.integers(-(10**20), 10**20), st.booleans(), st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-(10**6), max_value=10**6),
    st.binary(max_size=6).map(Binary),
)
_binary_sets = st.frozensets(st.binary(min_size=1, max_size=3), min_size=1, max_size=2).map(lambda s: {Binary(b) for b in s})
_values = attribute_values(_scalars, _binary_sets, size=3, leaves=10)
_items = st.dictionaries(st.text(min_size=1, max_size=6), _values, min_size=1, max_size=5)


def _wire(value: Any) -> Any:
    """An attribute value as DynamoDB puts it in JSON (binary values base64-encoded)."""
    if isinstance(value, dict):
        ((tag, raw),) = value.items()
        if tag == "B":
            return {"B": base64.b64encode(bytes(raw)).decode()}
        if tag == "BS":
            return {"BS": [base64.b64encode(bytes(b)).decode() for b in raw]}
        if tag == "M":
            return {"M": {k: _wire(v) for k, v in raw.items()}}
        if tag == "L":
            return {"L": [_wire(v) for v in raw]}
    return value


def _answer(document: dict[str, Any]) -> dict[str, Any]:
    """An HTTP answer of DynamoDB carrying ``document``, as botocore hands it to a parser."""
    return {"status_code": 200, "headers": {"x-amzn-requestid": "req-1"}, "body": json.dumps(document).encode()}


def _both(operation: str, document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    shape = _MODEL.operation_model(operation).output_shape
    assert shape is not None
    return JSONParser().parse(_answer(document), shape), storage.WireJSONParser().parse(_answer(document), shape)


@given(st.lists(_items, max_size=4), st.none() | st.just({"pk": {"S": "a"}, "sk": {"S": "b"}}))
def test_a_query_answer_converts_to_the_items_of_the_modeled_parse(items: list[dict[str, Any]], last: Any) -> None:
    serializer = TypeSerializer()
    wire = [{k: _wire(serializer.serialize(Decimal(v) if isinstance(v, Decimal) else v)) for k, v in i.items()} for i in items]
    document = {"Items": wire, "Count": len(wire), "ScannedCount": len(wire) + 1, **({"LastEvaluatedKey": last} if last else {})}
    modeled, raw = _both("Query", document)
    assert [storage.from_item(i) for i in raw["Items"]] == [storage.from_item(i) for i in modeled["Items"]]
    assert (raw["Count"], raw["ScannedCount"]) == (modeled["Count"], modeled["ScannedCount"])
    assert raw.get("LastEvaluatedKey") == modeled.get("LastEvaluatedKey")
    assert raw["ResponseMetadata"]["RequestId"] == modeled["ResponseMetadata"]["RequestId"] == "req-1"


def test_get_and_batch_get_answers_hold_the_same_documents_as_the_modeled_parse_without_binary() -> None:
    item = {"id": {"S": "lst_1"}, "n": {"N": "1.5"}, "m": {"M": {"tags": {"SS": ["a", "b"]}}}, "l": {"L": [{"NULL": True}]}}
    got_modeled, got_raw = _both("GetItem", {"Item": item})
    assert got_raw["Item"] == got_modeled["Item"] == item
    batch = {"Responses": {"Listings": [item]}, "UnprocessedKeys": {}}
    batch_modeled, batch_raw = _both("BatchGetItem", batch)
    assert batch_raw["Responses"] == batch_modeled["Responses"]


def test_binary_values_arrive_as_base64_text_and_convert_to_the_same_bytes() -> None:
    document = {"Item": {"b": {"B": base64.b64encode(b"\x00\xff").decode()}, "bs": {"BS": [base64.b64encode(b"x").decode()]}}}
    modeled, raw = _both("GetItem", document)
    assert raw["Item"]["b"] == {"B": "AP8="}
    assert modeled["Item"]["b"] == {"B": b"\x00\xff"}
    assert storage.from_item(raw["Item"]) == storage.from_item(modeled["Item"]) == {"b": Binary(b"\x00\xff"), "bs": [Binary(b"x")]}


def test_other_outputs_and_errors_are_parsed_as_botocore_models_them() -> None:
    """A control-plane output keeps botocore's types (a timestamp becomes a datetime), and so does an error's item."""
    table = {"Table": {"TableName": "t", "CreationDateTime": 1_700_000_000.0}}
    modeled, raw = _both("DescribeTable", table)
    assert raw["Table"] == modeled["Table"]
    assert not isinstance(raw["Table"]["CreationDateTime"], float)
    error = {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", "message": "failed",
             "Item": {"b": {"B": base64.b64encode(b"k").decode()}}}
    answer = {**_answer(error), "status_code": 400}
    put_output = _MODEL.operation_model("PutItem").output_shape
    assert put_output is not None
    failed = storage.WireJSONParser().parse(answer, put_output)
    assert failed["Error"]["Code"] == "ConditionalCheckFailedException"
    # botocore adds the error's modeled fields with a second parse by the error's own shape
    # (endpoint._add_modeled_error_fields): bytes there, converted alike.
    fields = storage.WireJSONParser().parse(answer, _MODEL.shape_for("ConditionalCheckFailedException"))
    assert fields["Item"] == {"b": {"B": b"k"}}
    assert storage.from_item(fields["Item"]) == {"b": Binary(b"k")}


def test_the_clients_of_this_process_use_the_wire_parser() -> None:
    factory = storage.session()._session.get_component("response_parser_factory")
    assert isinstance(factory, storage.WireParserFactory)
    assert isinstance(factory.create_parser("json"), storage.WireJSONParser)
    assert not isinstance(factory.create_parser("query"), storage.WireJSONParser)
