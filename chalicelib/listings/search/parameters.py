"""The query parameters of ``GET /v1/listings/search``: the fixed ones as a pydantic model, the
``meta.<key>`` filters as explicit parameters generated from the category registry.

Generated clients (``openapi-python-client`` and others) handle neither free-form query names
nor ``deepObject`` well, so every filter a category offers is declared as its own parameter
(``meta.salary_min``, ``meta.location_lat``, ...) with the schema of its value: an ``enum`` for
select fields, a pattern of option keys for multiselect fields, a decimal or integer pattern for
numbers (:mod:`chalicelib.kernel.json_numbers`), degrees for coordinates. The patterns below are
enforced by :mod:`chalicelib.listings.search.query` too, so the document and the server accept the
same values.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints

from chalicelib.categories.models import Category, CategoryField, FieldType
from chalicelib.categories.registry import all_categories, category_key_schema, role_key_schema
from chalicelib.kernel.json_numbers import DECIMAL_TEXT, INTEGER_TEXT
from chalicelib.kernel.pagination import PageQuery

#: Longest ``q``, in characters (a saved search's query values are bounded alike).
MAX_Q_LENGTH = 512
#: Largest accepted ``radiusKm``: half the Earth's circumference (km, WGS 84 equator / 2).
MAX_RADIUS_KM = 20_038.0

#: The value of a number filter: a decimal as JSON writes it, without an exponent
#: (:data:`~chalicelib.kernel.json_numbers.DECIMAL_TEXT`), the form a listing's number is stored in.
#: The field's range and a listing value's length (:func:`chalicelib.listings.meta.parse_value`)
#: bound it, so that every value a listing may store is a value a filter takes.
NUMBER_PATTERN = f"^{DECIMAL_TEXT.pattern}$"
#: The value of a boolean filter: true or false, in any case.
BOOLEAN_PATTERN = "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$"
#: The value of an integer filter: an integer as JSON writes it
#: (:data:`~chalicelib.kernel.json_numbers.INTEGER_TEXT`), bounded like a number filter's.
INTEGER_PATTERN = f"^{INTEGER_TEXT.pattern}$"


class ListingSearchQuery(PageQuery):
    """The fixed parameters of ``GET /v1/listings/search``; ``meta.*`` filters pass through.

    ``q``: every word must match a word of the title or text fields (case and accents ignored;
    the same stem, a correction within the typo distance, or, for the last word, a word it
    starts: docs/search.md, "The match rule and the score"). ``sort``: ``relevance`` (the default with ``q``: BM25F,
    ties newest first) or ``newest``. ``category``/``role`` narrow to one category and role. ``radiusKm`` limits a geo
    search (``meta.<key>_lat`` + ``meta.<key>_lng``) to that great-circle distance.
    """

    model_config = ConfigDict(extra="allow")
    q: Annotated[str, StringConstraints(max_length=MAX_Q_LENGTH)] | None = Field(default=None, description=(
        "Free-text search: every word must match (the same stem, a word one typo away, or for the last word "
        "a word it starts)"
    ))
    sort: Literal["relevance", "newest"] | None = Field(
        default=None,
        description="Order of the results: `relevance` (the default when `q` is given: BM25F over title, description and "
        "text fields, ties newest first; each result carries `score`) or `newest` (creation time, newest first; the "
        "default without `q`). A geo search is always nearest first.",
    )
    category: str | None = Field(default=None, json_schema_extra=category_key_schema, description="A category key")
    role: str | None = Field(default=None, json_schema_extra=role_key_schema, description="A role key of the category")
    radiusKm: float | None = Field(
        default=None, gt=0, le=MAX_RADIUS_KM, description="Radius of a geo search in km (needs meta.<key>_lat and _lng)"
    )


def _pattern_of_options(options: list[str]) -> str:
    choice = "|".join(re.escape(o) for o in sorted(options))
    return f"^({choice})(,({choice}))*$"


def value_schema(field: CategoryField) -> dict[str, Any]:
    """The JSON Schema of a ``meta.<key>`` filter value on ``field`` (a filterable, non-location field)."""
    if field.type == FieldType.SELECT:
        return {"type": "string", "enum": sorted(field.option_keys())}
    if field.type == FieldType.MULTISELECT:
        return {"type": "string", "pattern": _pattern_of_options(sorted(field.option_keys()))}
    if field.type == FieldType.BOOLEAN:
        return {"type": "string", "pattern": BOOLEAN_PATTERN}
    if field.type == FieldType.INTEGER:
        return {"type": "string", "pattern": INTEGER_PATTERN}
    return {"type": "string", "pattern": NUMBER_PATTERN}


def _merged(fields: list[tuple[Category, CategoryField]]) -> tuple[CategoryField, dict[str, Any]] | None:
    """One schema for a key shared by several categories (options united); None when the types differ."""
    first = fields[0][1]
    if any(f.type != first.type for _, f in fields):
        return None
    if first.type in (FieldType.SELECT, FieldType.MULTISELECT):
        options = sorted({o for _, f in fields for o in f.option_keys()})
        if first.type == FieldType.SELECT:
            return first, {"type": "string", "enum": options}
        return first, {"type": "string", "pattern": _pattern_of_options(options)}
    return first, value_schema(first)


def _parameter(name: str, schema: dict[str, Any], description: str, example: float | None = None) -> dict[str, Any]:
    parameter: dict[str, Any] = {"name": name, "in": "query", "required": False, "schema": schema, "description": description}
    if example is not None:
        parameter["example"] = example
    return parameter


def meta_parameters() -> list[dict[str, Any]]:
    """OpenAPI parameter objects of every ``meta.<key>`` filter the categories offer, by key.

    A key that several categories share (``location``) is one parameter naming them all; a
    key whose types differ between categories is left out (it needs ``category``).
    """
    by_key: dict[str, list[tuple[Category, CategoryField]]] = {}
    for category in all_categories().values():
        for field in category.fields:
            if field.filterable:
                by_key.setdefault(field.key, []).append((category, field))
    parameters: list[dict[str, Any]] = []
    for key, fields in sorted(by_key.items()):
        merged = _merged(fields)
        if merged is None:
            continue
        field, schema = merged
        where = ", ".join(f"`{c.key}`" for c, _ in fields)
        if field.type == FieldType.LOCATION:
            for axis, limit, word in (("lat", 90, "Latitude"), ("lng", 180, "Longitude")):
                parameters.append(_parameter(
                    f"meta.{key}_{axis}", {"type": "number", "minimum": -limit, "maximum": limit},
                    f"{word} of the centre of a geo search on `{key}` (decimal degrees, WGS 84; in {where}). "
                    f"Needs meta.{key}_{'lng' if axis == 'lat' else 'lat'}; results come nearest first.",
                    52.52 if axis == "lat" else 13.405,
                ))
            continue
        verb = "contains every one of these comma-separated options" if field.type == FieldType.MULTISELECT else "equals"
        parameters.append(_parameter(f"meta.{key}", schema, f"`{field.label}` {verb} (a {field.type} field of {where})."))
        if field.type in (FieldType.NUMBER, FieldType.INTEGER):
            for bound, word in (("min", "at least"), ("max", "at most")):
                parameters.append(_parameter(f"meta.{key}_{bound}", schema, f"`{field.label}` is {word} this ({where})."))
    return parameters
