"""Field types whose JSON Schema says exactly what the server accepts.

The OpenAPI document is generated from the pydantic models (:mod:`chalicelib.openapi.document`), so a
rule a model enforces must also appear in the model's JSON Schema, and the schema must not
allow what the model refuses. These annotated types close the gaps pydantic leaves open:

* :data:`Timestamp`: every time the API returns, ISO 8601 UTC (``format: date-time``,
  RFC 3339 §5.6), as :func:`chalicelib.kernel.clock.iso` writes it;
* :data:`NON_BLANK`: the pattern of text that must contain a non-whitespace character (a
  blank value stripped to nothing would otherwise be schema-valid but refused);
* :data:`SINGLE_LINE`: single-line text (titles, names, handles) and :data:`MULTI_LINE`
  (messages): the one text policy of :func:`chalicelib.kernel.text.text_issue` (no controls, format
  characters but the joiners emoji need, private-use, unassigned or separator code points; a
  multi-line field allows line breaks).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, WithJsonSchema
from pydantic_core import CoreSchema, core_schema

from chalicelib.kernel import text

#: ``pattern`` of text without the C0 control characters every request is refused
#: (:mod:`chalicelib.edge.json_input`: U+0000..U+001F except tab, line feed and carriage return).
CONTROL_FREE = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f]*$"
#: ``pattern`` of an object key or id: no C0 control character at all.
CONTROL_FREE_KEY = r"^[^\x00-\x1f]*$"
#: ``pattern`` of text with at least one non-whitespace character and no forbidden control
#: character (JSON Schema patterns use ECMA-262 ``search`` semantics, as pydantic-core does).
NON_BLANK = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f]*[^\s\x00-\x1f][^\x00-\x08\x0b\x0c\x0e-\x1f]*$"
#: Each of these patterns' rule in words: the ``issue`` of a value that does not match it
#: (:func:`chalicelib.kernel.errors.from_pydantic`), rather than the expression itself.
PATTERN_RULES = {
    CONTROL_FREE: "must not contain a control character (tab and line breaks aside)",
    CONTROL_FREE_KEY: "must not contain a control character",
    NON_BLANK: "must contain a character other than white space, and no control character (tab and line breaks aside)",
}

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



#: JSON Schema ``format`` of single-line text: text :func:`chalicelib.kernel.text.single_line_issue` accepts.
SINGLE_LINE_FORMAT = "single-line-text"
#: JSON Schema ``format`` of multi-line text: text :func:`chalicelib.kernel.text.multi_line_issue` accepts.
MULTI_LINE_FORMAT = "multi-line-text"


class SingleLine:
    """Annotation of single-line text (titles, names, handles): ``Annotated[str, StringConstraints(...), SINGLE_LINE]``,
    or with ``multi_line=True`` (``MULTI_LINE``) of multi-line text (messages).

    Validation (after the string constraints, so on the stripped value) refuses what
    :func:`chalicelib.kernel.text.text_issue` names, as a VALIDATION_ERROR on the field, and turns
    each tab of a single line into a space (the one control it allows, pasted from a table); the JSON
    Schema gets :func:`chalicelib.kernel.text.single_line_pattern` or :func:`~chalicelib.kernel.text.multi_line_pattern`
    (which state the same rule for the assigned code points of the Basic Multilingual Plane; the
    context of the joiners, astral format characters, surrogates and unassigned code points are the
    validator's alone) and the ``format`` :data:`SINGLE_LINE_FORMAT` or :data:`MULTI_LINE_FORMAT`,
    which names the whole rule.
    """

    def __init__(self, multi_line: bool = False) -> None:
        self.multi_line = multi_line

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        check = _multi_line if self.multi_line else _single_line
        return core_schema.no_info_after_validator_function(check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        result: dict[str, Any] = handler(schema)
        result["pattern"] = text.multi_line_pattern() if self.multi_line else text.single_line_pattern()
        # Names the whole rule, which the pattern states only in part: a validator that does not
        # know the format ignores it (JSON Schema 2020-12, 7.2); a fuzzer can be taught to draw it.
        result["format"] = MULTI_LINE_FORMAT if self.multi_line else SINGLE_LINE_FORMAT
        return result


def _single_line(value: str) -> str:
    issue = text.single_line_issue(value)
    if issue is not None:
        raise ValueError(issue)
    return value.replace("\t", " ")  # a single line normalizes the one control it allows (docs/decisions.md, "Input edges")


def _multi_line(value: str) -> str:
    issue = text.multi_line_issue(value)
    if issue is not None:
        raise ValueError(issue)
    return value


#: The :class:`SingleLine` annotation of single-line text.
SINGLE_LINE = SingleLine()
#: The :class:`SingleLine` annotation of multi-line text (line feed and carriage return allowed).
MULTI_LINE = SingleLine(multi_line=True)
