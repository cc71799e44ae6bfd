"""Field types whose JSON Schema says exactly what the server accepts.

The OpenAPI document is generated from the pydantic models (:mod:`chalicelib.openapi`), so a
rule a model enforces must also appear in the model's JSON Schema, and the schema must not
allow what the model refuses. These annotated types close the gaps pydantic leaves open:

* :data:`Timestamp`: every time the API returns, ISO 8601 UTC (``format: date-time``,
  RFC 3339 §5.6), as :func:`chalicelib.clock.iso` writes it;
* :data:`INTEGRAL_FLOAT`: JSON Schema's ``integer`` includes ``1.0`` (2020-12 §6.1.1: "a
  number with a zero fractional part"), which pydantic's strict mode refuses; this validator
  accepts it. Put it after the bounds, ``Annotated[int, Field(ge=0), INTEGRAL_FLOAT]``, so the
  bounds still become ``minimum``/``maximum`` in the schema;
* :data:`NON_BLANK`: the pattern of text that must contain a non-whitespace character (a
  blank value stripped to nothing would otherwise be schema-valid but refused).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

#: ``pattern`` of a string with at least one non-whitespace character (JSON Schema patterns
#: are unanchored: ECMA-262 ``search`` semantics, as pydantic-core applies them).
NON_BLANK = r"\S"

#: A time the API returns: ISO 8601 UTC with milliseconds and ``Z`` (``2026-11-21T23:55:55.123Z``).
Timestamp = Annotated[
    str,
    WithJsonSchema({"type": "string", "format": "date-time", "examples": ["2026-11-21T23:55:55.123Z"]}),
]


def _integral_float_to_int(value: Any) -> Any:
    """``1.0`` -> ``1`` (JSON Schema counts it as an integer); anything else is left to pydantic."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def not_nullable(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` of a field typed ``X | None = None`` whose validator refuses ``null``
    (omitted means unchanged): the schema offers ``X`` only, without ``null`` or a ``default``."""
    schema.pop("default", None)
    options = schema.pop("anyOf", None)
    if isinstance(options, list):
        rest = [o for o in options if o != {"type": "null"}]
        schema.update(rest[0] if len(rest) == 1 else {"anyOf": rest})


#: For an ``int`` in a JSON body: ``3`` and ``3.0`` are accepted, ``3.5``, ``"3"`` and ``true`` are not.
INTEGRAL_FLOAT = BeforeValidator(_integral_float_to_int)
