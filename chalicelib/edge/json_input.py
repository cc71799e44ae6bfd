"""Limits every decoded JSON body and query string must respect, checked once at the HTTP edge.

* **Nesting depth** at most :data:`MAX_DEPTH` (objects and arrays): deeper documents are refused
  before any model sees them, so no validator or serializer recurses without bound.
* **Control characters.** No C0 control character (U+0000..U+001F) in any string or object key,
  except tab, line feed and carriage return in string values; single-line fields normalize
  those to spaces or strip them (their models say so), multi-line text keeps them. NUL and the
  other C0 characters have no business in text, and some stores and terminals mishandle them.
* **Unpaired surrogates.** No U+D800..U+DFFF in any string or key (a JSON escape of one half of a
  surrogate pair decodes to one): they are not Unicode scalar values, so no UTF-8 text holds them.
* **Member names.** No name twice in one object (I-JSON, RFC 7493 §2.3): a decoder keeps one of
  the values, and which one differs between decoders, so a client's intent is unclear. The
  decoder's hook (:func:`unique_members`) marks such an object and :func:`check_document`
  refuses it by its path.
* **Numbers.** Integers within +-(2**53 - 1), the range every JSON implementation represents
  exactly (RFC 8259 §6; I-JSON, RFC 7493 §2.2); numbers finite and within the same magnitude.
  Fields with tighter bounds (coordinates, page sizes, category fields) check those themselves.

Every violation is a :class:`~chalicelib.kernel.errors.RuleViolation` naming the field (dotted path,
list items by index, ``body`` for the document itself).
"""

from __future__ import annotations

import math
import re
from typing import Any

from chalicelib.kernel import errors

#: Deepest nesting of objects/arrays accepted in a body (the API's own bodies need 3).
MAX_DEPTH = 32
#: Largest integer magnitude accepted: 2**53 - 1 (exactly representable in IEEE 754 doubles).
MAX_SAFE_INTEGER = 2**53 - 1
#: Largest magnitude of a (non-integer) number.
MAX_NUMBER = float(MAX_SAFE_INTEGER)

#: Digits of the longest integer literal read as written (2**53 - 1 has 16 digits).
_MAX_INTEGER_DIGITS = len(str(MAX_SAFE_INTEGER))

_CONTROL = re.compile(r"[\x00-\x1f]")
_CONTROL_BUT_WHITESPACE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def character_issue(text: str, allow_whitespace: bool = True) -> str | None:
    """What is wrong with the characters of ``text`` (:func:`control_character`, or an unpaired
    surrogate, ``U+D800``..``U+DFFF``), as a ``details`` issue; ``None`` when nothing is."""
    if bad := control_character(text, allow_whitespace):
        return f"contains the control character {bad}"
    found = _SURROGATE.search(text)
    return None if found is None else f"contains the unpaired surrogate U+{ord(found.group()):04X}"


def control_character(text: str, allow_whitespace: bool = True) -> str | None:
    """The first forbidden control character of ``text`` as ``U+00XX``, or ``None``.

    Parameters
    ----------
    text:
        Any string from a request.
    allow_whitespace:
        Whether tab, line feed and carriage return are allowed (string values: yes; keys and ids: no).
    """
    found = (_CONTROL_BUT_WHITESPACE if allow_whitespace else _CONTROL).search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def parse_int(text: str) -> int:
    """``json.loads``' ``parse_int``: an integer literal, or just beyond :data:`MAX_SAFE_INTEGER` when longer.

    Python refuses to convert integer strings of more than 4,300 digits (``sys.int_info``,
    CVE-2020-10735) with a ``ValueError`` that names no field; and converting long ones costs
    quadratic time. A literal of more digits than :data:`MAX_SAFE_INTEGER` is out of range
    anyway, so it is read as ``+-(MAX_SAFE_INTEGER + 1)`` and :func:`check_document` refuses it
    naming its field.
    """
    digits = len(text) - (text[0] == "-")
    if digits > _MAX_INTEGER_DIGITS:
        return -(MAX_SAFE_INTEGER + 1) if text[0] == "-" else MAX_SAFE_INTEGER + 1
    return int(text)


class DuplicatedMembers(dict[str, Any]):
    """A decoded object in which the member ``name`` was given more than once (its last value
    kept); :func:`check_document` refuses it, naming the member by its path."""

    def __init__(self, pairs: list[tuple[str, Any]], name: str) -> None:
        super().__init__(pairs)
        self.name = name


def unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook``: the object of ``pairs``; a :class:`DuplicatedMembers`
    when a name occurs twice (the hook does not know the object's place in the document, so
    :func:`check_document` refuses it, where the path is known)."""
    found = dict(pairs)
    if len(found) < len(pairs):
        names = [name for name, _ in pairs]
        return DuplicatedMembers(pairs, next(name for i, name in enumerate(names) if name in names[:i]))
    return found


def _child(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def check_document(data: Any, root: str = "") -> None:
    """Apply the depth, control-character and number limits to decoded JSON ``data``.

    Parameters
    ----------
    data:
        What ``json.loads`` returned (or a query string as a dict of strings).
    root:
        Prefix of the reported field paths (``""`` for bodies, ``"query."`` style for others).

    Raises
    ------
    RuleViolation
        The first violation found, its ``details`` naming the field (``body`` for depth).
    """
    stack: list[tuple[Any, str, int]] = [(data, root.rstrip("."), 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, DuplicatedMembers):
            raise errors.RuleViolation.for_field(
                _child(path, value.name), "is given more than once in one object: send each member once"
            )
        if not isinstance(value, (dict, list)):
            _check_scalar(value, path or "body")
            continue
        if depth >= MAX_DEPTH:
            raise errors.RuleViolation.for_field(
                "body", f"nesting deeper than {MAX_DEPTH} levels", f"Request body nests deeper than {MAX_DEPTH} levels"
            )
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and (issue := character_issue(key, allow_whitespace=False)):
                raise errors.RuleViolation.for_field(_child(path, key), f"key {issue}")
            stack.append((item, _child(path, key), depth + 1))


def _check_scalar(value: Any, field: str) -> None:
    """Refuse a string with a control character, an integer beyond the safe range or a float
    that is not finite or too large, naming ``field``."""
    if isinstance(value, str):
        if issue := character_issue(value):
            raise errors.RuleViolation.for_field(field, issue)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise errors.RuleViolation.for_field(field, f"must be between {-MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER}")
    elif isinstance(value, float) and (not math.isfinite(value) or abs(value) > MAX_NUMBER):
        raise errors.RuleViolation.for_field(field, f"must be a finite number within +-{MAX_SAFE_INTEGER}")
