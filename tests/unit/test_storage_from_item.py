"""``storage.from_item`` converts DynamoDB JSON in one pass exactly as boto3's deserializer + ``_plain`` did."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.persistence import storage
from tests.dynamodb_values import attribute_values

_numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.decimals(allow_nan=False, allow_infinity=False, places=6, min_value=-(10**12), max_value=10**12),
)
_scalars = st.one_of(st.text(max_size=8), _numbers, st.booleans(), st.none(), st.binary(max_size=4).map(Binary))
_values = attribute_values(_scalars, st.frozensets(st.integers(-1000, 1000), min_size=1, max_size=3).map(set), size=4, leaves=12)


def _reference(item: dict[str, Any]) -> dict[str, Any]:
    """The conversion before the one-pass converter: boto3's TypeDeserializer, then ``_plain``."""
    deserializer = TypeDeserializer()
    return {k: storage._plain(deserializer.deserialize(v)) for k, v in item.items()}


def _same(converted: Any, reference: Any, value: dict[str, Any]) -> bool:
    """Equal, walking the DynamoDB value alongside: a set's elements in any order (neither converter promises one)."""
    (tag, raw), = value.items()
    if tag in ("SS", "NS"):
        return sorted(converted) == sorted(reference)
    if tag == "M":
        return converted.keys() == reference.keys() and all(_same(converted[k], reference[k], raw[k]) for k in raw)
    if tag == "L":
        return len(converted) == len(reference) == len(raw) and all(map(_same, converted, reference, raw))
    return bool(converted == reference) and type(converted) is type(reference)


@given(st.dictionaries(st.text(min_size=1, max_size=6), _values, max_size=6))
def test_from_item_equals_the_deserializer(plain: dict[str, Any]) -> None:
    serializer = TypeSerializer()
    item = {k: serializer.serialize(Decimal(v) if isinstance(v, Decimal) else v) for k, v in plain.items()}
    converted = storage.from_item(item)
    reference = _reference(item)
    assert converted is not None
    assert converted.keys() == reference.keys()
    assert all(_same(converted[k], reference[k], dict(item[k])) for k in item)


def test_from_item_numbers_and_none() -> None:
    item = {"i": {"N": "12"}, "f": {"N": "1.5"}, "e": {"N": "1E+3"}, "z": {"N": "2.0"}, "n": {"NULL": True},
            "ss": {"SS": ["b", "a"]}, "ns": {"NS": ["3", "0.5"]}, "b": {"B": b"\x00"}}
    assert storage.from_item(item) == {"i": 12, "f": 1.5, "e": 1000, "z": 2, "n": None, "ss": ["b", "a"], "ns": [3, 0.5],
                                       "b": Binary(b"\x00")}
    assert storage.from_item(None) is None


_plain_values = st.recursive(
    st.one_of(st.text(max_size=8), st.integers(min_value=-(10**40), max_value=10**40), st.booleans(), st.none(),
              st.floats(allow_nan=False, allow_infinity=False, width=32), st.binary(max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=4), inner, max_size=4),
        st.frozensets(st.text(max_size=4), min_size=1, max_size=3).map(set),
    ),
    max_leaves=12,
)


def _reference_item(data: dict[str, Any]) -> dict[str, Any]:
    """The serialization before the one-pass serializer: ``_dynamo_value``, then boto3's TypeSerializer."""
    serializer = TypeSerializer()
    return {k: serializer.serialize(storage._dynamo_value(v)) for k, v in data.items() if v is not None}


@given(st.dictionaries(st.text(min_size=1, max_size=6), _plain_values, max_size=6))
def test_to_item_equals_the_serializer(data: dict[str, Any]) -> None:
    try:
        expected = _reference_item(data)
    except Exception as exc:  # noqa: BLE001 -- the same refusal is expected of the fast path
        with pytest.raises(type(exc)):
            storage.to_item(data)
        return
    assert storage.to_item(data) == expected
