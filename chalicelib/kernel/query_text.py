"""Query parameter values in the one text form their schema type has.

A query string is text, and pydantic's lax mode reads many texts as a number or a boolean
(``5.0``, ``+5``, `` 5`` and ``5_0`` as integers, ``yes``, ``on`` and ``1`` as ``true``, ``nan`` and
``inf`` as numbers). A client that sends ``openToWork=yes`` then gets an answer instead of an error,
and another server reading the same OpenAPI document would refuse it. Before a query model
validates, each value of an ``integer``, ``number`` or ``boolean`` parameter must therefore be
written as JSON writes that type: an integer or number in the grammar of
:mod:`chalicelib.kernel.json_numbers` (no leading zeros, no ``+``, no white space around it);
``true`` and ``false`` in any case, as the ``meta.*`` boolean filters take them
(:data:`chalicelib.listings.search.parameters.BOOLEAN_PATTERN`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from pydantic import BaseModel

from chalicelib.kernel import errors
from chalicelib.kernel.json_numbers import INTEGER_TEXT, NUMBER_TEXT

#: A ``boolean`` parameter, in any case.
BOOLEAN_TEXT = re.compile(r"(?i:true|false)")

#: Per JSON Schema type: its text form and what the error says of a value not in it.
_FORMS: dict[str, tuple[re.Pattern[str], str]] = {
    "integer": (INTEGER_TEXT, "must be an integer as JSON writes it (no leading zero, + or spaces), e.g. 20"),
    "number": (NUMBER_TEXT, "must be a number as JSON writes it (no leading zero, + or spaces), e.g. 52.52"),
    "boolean": (BOOLEAN_TEXT, "must be true or false"),
}


@functools.cache
def _types(model: type[BaseModel]) -> dict[str, frozenset[str]]:
    """The JSON Schema types of ``model``'s parameters, by name (``null`` and ``$ref`` left out)."""
    types: dict[str, frozenset[str]] = {}
    for name, schema in model.model_json_schema().get("properties", {}).items():
        options = schema.get("anyOf", [schema])
        types[name] = frozenset(str(o["type"]) for o in options if "type" in o) - {"null"}
    return types


def check(model: type[BaseModel], params: Mapping[str, str]) -> None:
    """Refuse a value of an ``integer``, ``number`` or ``boolean`` parameter of ``model`` that is not
    written in that type's text form (module docstring); other parameters pass unread.

    Parameters
    ----------
    model:
        The route's query model (its JSON Schema gives each parameter's type).
    params:
        The query string, parameter name -> its text.

    Raises
    ------
    RuleViolation
        One ``details`` item per value not in its form, ``field`` the parameter's name.
    """
    types = _types(model)
    issues: list[errors.FieldIssue] = []
    for name, text in params.items():
        kinds = types.get(name, frozenset())
        if len(kinds) != 1 or (form := _FORMS.get(next(iter(kinds)))) is None:
            continue
        pattern, issue = form
        if not pattern.fullmatch(text):
            issues.append(errors.FieldIssue(field=name, issue=issue))
    if issues:
        raise errors.RuleViolation(f"Request validation failed: {', '.join(i.field for i in issues)}", issues)

