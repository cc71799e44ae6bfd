"""Field types whose JSON Schema says exactly what the server accepts.

The OpenAPI document is generated from the pydantic models (:mod:`chalicelib.openapi`), so a
rule a model enforces must also appear in the model's JSON Schema, and the schema must not
allow what the model refuses. These annotated types close the gaps pydantic leaves open:

* :data:`Timestamp`: every time the API returns, ISO 8601 UTC (``format: date-time``,
  RFC 3339 §5.6), as :func:`chalicelib.clock.iso` writes it;
* :data:`NON_BLANK`: the pattern of text that must contain a non-whitespace character (a
  blank value stripped to nothing would otherwise be schema-valid but refused);
* :data:`SINGLE_LINE`: single-line text (titles, names, handles): no bidirectional controls,
  DEL or C1 controls, and at least one visible character (:mod:`chalicelib.text`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, WithJsonSchema
from pydantic_core import CoreSchema, core_schema

from chalicelib import text

#: ``pattern`` of text without the C0 control characters every request is refused
#: (:mod:`chalicelib.json_input`: U+0000..U+001F except tab, line feed and carriage return).
CONTROL_FREE = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f]*$"
#: ``pattern`` of an object key or id: no C0 control character at all.
CONTROL_FREE_KEY = r"^[^\x00-\x1f]*$"
#: ``pattern`` of text with at least one non-whitespace character and no forbidden control
#: character (JSON Schema patterns use ECMA-262 ``search`` semantics, as pydantic-core does).
NON_BLANK = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f]*[^\s\x00-\x1f][^\x00-\x08\x0b\x0c\x0e-\x1f]*$"

#: A time the API returns: ISO 8601 UTC with milliseconds and ``Z`` (``2026-11-21T23:55:55.123Z``).
Timestamp = Annotated[
    str,
    WithJsonSchema({"type": "string", "format": "date-time", "examples": ["2026-11-21T23:55:55.123Z"]}),
]


def not_nullable(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` of a field typed ``X | None = None`` whose validator refuses ``null``
    (omitted means unchanged): the schema offers ``X`` only, without ``null`` or a ``default``."""
    schema.pop("default", None)
    options = schema.pop("anyOf", None)
    if isinstance(options, list):
        rest = [o for o in options if o != {"type": "null"}]
        schema.update(rest[0] if len(rest) == 1 else {"anyOf": rest})



class SingleLine:
    """Annotation of single-line text (titles, names, handles): ``Annotated[str, StringConstraints(...), SINGLE_LINE]``.

    Validation (after the string constraints, so on the stripped value) refuses what
    :func:`chalicelib.text.single_line_issue` names, as a VALIDATION_ERROR on the field; the JSON
    Schema gets :data:`chalicelib.text.SINGLE_LINE_PATTERN` (which states the same rule for the
    Basic Multilingual Plane; an all-invisible text of astral format characters, e.g. only tag
    characters, is refused by the validator alone).
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(_single_line, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        result: dict[str, Any] = handler(schema)
        result["pattern"] = text.SINGLE_LINE_PATTERN
        return result


def _single_line(value: str) -> str:
    issue = text.single_line_issue(value)
    if issue is not None:
        raise ValueError(issue)
    return value


#: The one :class:`SingleLine` annotation.
SINGLE_LINE = SingleLine()
