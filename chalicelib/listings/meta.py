"""Validation and normalization of a listing's ``meta`` against its category (DESIGN §2 "Categories").

Every value is a string. Each field type has one parser that checks the value and returns
its canonical string (numbers normalized, option lists de-duplicated, HTML sanitized with
nh3). Location fields carry the address in ``meta.<key>`` and decimal-degree coordinates in
``meta.<key>_lat`` / ``meta.<key>_lng``; missing coordinates are geocoded.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Callable
from datetime import date
from decimal import Decimal

import nh3

from chalicelib.categories.models import DEFAULT_MAX_LENGTH, Category, CategoryField, FieldType
from chalicelib.geocoding.api import get_geocoder
from chalicelib.kernel import errors
from chalicelib.kernel.json_numbers import NUMBER_TEXT
from chalicelib.kernel.text import is_visible, multi_line_issue, single_line_issue
from chalicelib.kernel.urls import InvalidUrl, absolute_http_url


class InvalidValue(ValueError):
    """A meta value that does not fit its field; the message is the ``issue``."""


def _text(field: CategoryField, value: str) -> str:
    """Single-line text (text and location fields): white space runs folded to one space (a
    location's tabs only: an address keeps its spacing), and the text policy of
    :func:`chalicelib.kernel.text.single_line_issue` (no controls, format, private-use, unassigned
    or separator code points; something visible)."""
    text = " ".join(value.split()) if field.type == FieldType.TEXT else value.strip().replace("\t", " ")
    if issue := single_line_issue(text):
        raise InvalidValue(issue)
    return text


#: An image the sanitized HTML shows: an ``img`` whose ``src`` names something (the sanitizer drops a
#: ``javascript:`` one, and an ``img`` without a source shows nothing).
_IMAGE = re.compile(r"<img\b[^>]*\bsrc=\"[^\"]+\"")
#: A numeric character reference (HTML): ``&#65;``, ``&#x41;`` (the ``;`` is optional in HTML).
_REFERENCE = re.compile(r"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?")


def _reference_issue(value: str) -> str | None:
    """Why a numeric character reference of ``value`` names a refused code point, or ``None``.

    HTML decodes a reference to U+0000, a surrogate or a code point beyond U+10FFFF as U+FFFD, one
    to a C1 control as the Windows-1252 character of that byte, and drops one to a noncharacter
    (the HTML standard, "numeric character reference end state"): the text stored would not be the
    one the reference names. So a reference counts as the code point it names, and the text policy
    judges that one; a joiner's or format character's context is judged on the decoded text."""
    for match in _REFERENCE.finditer(value):
        digits = match.group(1) or match.group(2)
        code = int(digits, 16 if match.group(1) else 10) if len(digits) <= 8 else 0x110000  # more digits: beyond any
        if code > 0x10FFFF:
            return f"contains a character reference to no character ({match.group(0)[:16]})"
        if unicodedata.category(chr(code)) in ("Cc", "Cs", "Cn", "Co") and (issue := multi_line_issue(chr(code))):
            return issue
    return None


def _richtext(field: CategoryField, value: str) -> str:
    """Multi-line text (descriptions): the text policy of :func:`chalicelib.kernel.text.multi_line_issue`
    on what the client sent and on the sanitized HTML with its character references decoded (a
    reference such as ``&#x202E;`` is the character it names, which the sanitizer writes out), then
    sanitized HTML; ``""`` (missing) when the HTML shows neither visible text nor an image
    (``<p></p>``, ``<br>``, ``<p>&nbsp;</p>``)."""
    if issue := multi_line_issue(value) or _reference_issue(value):
        raise InvalidValue(issue)
    # Ammonia's default allow-list (via nh3) strips scripts, event handlers and javascript: URLs.
    cleaned = nh3.clean(value).strip()
    if issue := multi_line_issue(html.unescape(cleaned)):
        raise InvalidValue(issue)
    shown = html.unescape(nh3.clean(cleaned, tags=set()))  # the text a reader sees, without markup
    return cleaned if _IMAGE.search(cleaned) or any(is_visible(char) for char in shown) else ""


#: A number field's value as a listing's ``meta`` may send it: ASCII decimal digits, an optional minus
#: sign and fraction, leading zeros allowed (what ``Decimal()`` alone would widen with ``+``, ``_``,
#: exponents, other scripts' digits, ``nan``). It is stored without them, in the form of
#: :data:`chalicelib.kernel.json_numbers.DECIMAL_TEXT`, the form a search's number filter takes.
SENT_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def _number(field: CategoryField, value: str) -> str:
    text = value.strip()
    if not SENT_DECIMAL.fullmatch(text):
        raise InvalidValue('must be a decimal string, e.g. "85000" or "12.5"')
    number = Decimal(text) + 0  # + 0: "-0" is 0
    # Bound the magnitude before the range check: no accepted value is longer than DEFAULT_MAX_LENGTH.
    if not number.is_zero() and abs(number.adjusted()) >= DEFAULT_MAX_LENGTH:
        raise InvalidValue("is out of range")
    _check_range(field, number)
    # Always positional notation ("0.00000001", never "1E-8"): the documented encoding is a decimal string.
    return format(number.normalize(), "f")


def _check_range(field: CategoryField, number: Decimal | int) -> None:
    """Enforce the field's ``minimum``/``maximum`` (set for every number and integer field)."""
    low, high = field.minimum, field.maximum
    if (low is not None and number < Decimal(str(low))) or (high is not None and number > Decimal(str(high))):
        raise InvalidValue(f"must be between {low} and {high}")


def _integer(field: CategoryField, value: str) -> str:
    text = value.strip()
    if not text.removeprefix("-").isdigit() or not text.isascii():
        raise InvalidValue('must be a base-10 integer string, e.g. "3"')
    if len(text) > DEFAULT_MAX_LENGTH:  # before int(): Python refuses (ValueError) to convert over 4300 digits
        raise InvalidValue(f"must be at most {DEFAULT_MAX_LENGTH} characters")
    number = int(text)
    _check_range(field, number)
    return str(number)


def _boolean(field: CategoryField, value: str) -> str:
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise InvalidValue('must be "true" or "false"')
    return text


def _select(field: CategoryField, value: str) -> str:
    text = value.strip()
    if text not in field.option_keys():
        raise InvalidValue(f"must be one of: {', '.join(sorted(field.option_keys()))}")
    return text


def _multiselect(field: CategoryField, value: str) -> str:
    chosen = list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [c for c in chosen if c not in field.option_keys()]
    if unknown:
        raise InvalidValue(f"unknown option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(field.option_keys()))}")
    if not chosen:
        raise InvalidValue("must name at least one option")
    return ",".join(chosen)


#: An ISO 8601 calendar date as the field's encoding writes it: ``YYYY-MM-DD``, ASCII digits.
_CALENDAR_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _date(field: CategoryField, value: str) -> str:
    text = value.strip()
    try:
        if not _CALENDAR_DATE.fullmatch(text):  # fromisoformat also reads week dates ("2024-W09-4")
            raise ValueError
        return date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise InvalidValue("must be an ISO 8601 date, YYYY-MM-DD") from exc


def _url(field: CategoryField, value: str) -> str:
    try:
        return absolute_http_url(value)
    except InvalidUrl as exc:
        raise InvalidValue(str(exc)) from exc


_PARSERS: dict[FieldType, Callable[[CategoryField, str], str]] = {
    FieldType.TEXT: _text,
    FieldType.RICHTEXT: _richtext,
    FieldType.NUMBER: _number,
    FieldType.INTEGER: _integer,
    FieldType.BOOLEAN: _boolean,
    FieldType.SELECT: _select,
    FieldType.MULTISELECT: _multiselect,
    FieldType.DATE: _date,
    FieldType.URL: _url,
    FieldType.LOCATION: _text,
}


def parse_value(field: CategoryField, value: str) -> str:
    """Check ``value`` against ``field`` and return its canonical string.

    Raises
    ------
    InvalidValue
        The value does not fit the field's type, options or length.
    """
    result = _PARSERS[field.type](field, value)
    if len(result) > field.maxLength:
        raise InvalidValue(f"must be at most {field.maxLength} characters")
    return result


def parse_coordinate(value: str, limit: float) -> float:
    """Parse decimal degrees within ``[-limit, limit]`` (90 for latitude, 180 for longitude).

    ``value`` is a number as JSON writes it (:data:`chalicelib.kernel.json_numbers.NUMBER_TEXT`:
    ``52.52``, ``-0.1278``, ``5.252e1``), as a search's ``meta.<loc>_lat``/``_lng`` parameter is
    written; ``float()`` alone would also read ``+52``, ``052``, `` 52``, ``5_2.5``, ``nan`` and
    ``inf``. A caller that trims white space (a listing's ``meta``) does so before.

    Raises
    ------
    InvalidValue
        Not a number in that form, not finite, or out of range.
    """
    if not NUMBER_TEXT.fullmatch(value):
        raise InvalidValue("must be a number of degrees as JSON writes it (no leading zero, + or spaces), e.g. 52.52")
    number = float(value)
    if not math.isfinite(number) or abs(number) > limit:
        raise InvalidValue(f"must be between -{limit:g} and {limit:g}")
    return number


def format_coordinate(value: float) -> str:
    """Coordinates are stored with 6 decimals (about 0.1 m), trailing zeros dropped."""
    return f"{value:.6f}".rstrip("0").rstrip(".")


def validate_meta(category: Category, role_key: str, meta: dict[str, str]) -> dict[str, str]:
    """Validate a complete ``meta`` for a listing of ``role_key`` in ``category``.

    Parameters
    ----------
    category, role_key:
        The listing's category and role (the role must exist in the category).
    meta:
        Field values keyed by field key (plus ``<loc>_lat`` / ``<loc>_lng``).

    Returns
    -------
    dict
        The canonical meta: values normalized, rich text sanitized, empty optional values
        dropped, and location coordinates filled in (geocoded when not given).

    Raises
    ------
    RuleViolation
        One ``details`` item per offending key (``meta.<key>``): unknown for the role, a
        required field missing, a value not fitting its type, or an address that cannot be
        geocoded.
    """
    allowed = {f.key: f for f in category.fields if role_key in f.roles}
    result, issues = _parse_values(category, role_key, allowed, meta)

    for field in allowed.values():
        if role_key in field.requiredFor and field.key not in result and not any(i.field == f"meta.{field.key}" for i in issues):
            issues.append(errors.FieldIssue(field=f"meta.{field.key}", issue=f"required for role '{role_key}'"))

    refused = {i.field for i in issues}
    for field in (f for f in allowed.values() if f.type == FieldType.LOCATION):
        if f"meta.{field.key}" not in refused:  # a refused address: its own issue says it, not its coordinates'
            issues.extend(_locate(field, meta, result))

    if issues:
        raise errors.RuleViolation("Listing meta is invalid: " + ", ".join(i.field for i in issues), issues)
    return result


def _parse_values(category: Category, role_key: str, allowed: dict[str, CategoryField], meta: dict[str, str]
                  ) -> tuple[dict[str, str], list[errors.FieldIssue]]:
    """The canonical values of ``meta``'s fields that ``allowed`` holds (empty ones dropped; location
    coordinates left to :func:`_locate`) and an issue per unknown field or value that does not parse."""
    coordinate_keys = {f"{f.key}_{axis}" for f in allowed.values() if f.type == FieldType.LOCATION for axis in ("lat", "lng")}
    result: dict[str, str] = {}
    issues: list[errors.FieldIssue] = []
    for key, value in meta.items():
        if key in coordinate_keys:
            continue
        field = allowed.get(key)
        if field is None:
            known = "a field of another role" if category.field(key) else "not a field of this category"
            issues.append(errors.FieldIssue(field=f"meta.{key}", issue=f"unknown field for role '{role_key}' ({known})"))
            continue
        if not value.strip():
            continue  # empty optional values are dropped; required ones are reported by validate_meta
        try:
            parsed = parse_value(field, value)
        except InvalidValue as exc:
            issues.append(errors.FieldIssue(field=f"meta.{key}", issue=str(exc)))
            continue
        if parsed:  # rich text that sanitizes to nothing counts as missing, like an empty value
            result[key] = parsed
    return result, issues


def _locate(field: CategoryField, meta: dict[str, str], result: dict[str, str]) -> list[errors.FieldIssue]:
    """Fill ``result`` with the coordinates of location ``field``; return the issues found."""
    lat_key, lng_key = f"{field.key}_lat", f"{field.key}_lng"
    given = {k: meta[k].strip() for k in (lat_key, lng_key) if meta.get(k, "").strip()}
    if field.key not in result:
        return [errors.FieldIssue(field=f"meta.{k}", issue=f"given without meta.{field.key}") for k in given]
    if len(given) == 1:
        missing = lng_key if lat_key in given else lat_key
        return [errors.FieldIssue(field=f"meta.{missing}", issue=f"give both meta.{lat_key} and meta.{lng_key}, or neither")]
    if given:
        issues = []
        for key, limit in ((lat_key, 90.0), (lng_key, 180.0)):
            try:
                result[key] = format_coordinate(parse_coordinate(given[key], limit))
            except InvalidValue as exc:
                issues.append(errors.FieldIssue(field=f"meta.{key}", issue=str(exc)))
        return issues
    found = get_geocoder().geocode(result[field.key])
    if found is None:
        return [errors.FieldIssue(field=f"meta.{field.key}", issue="address could not be geocoded; give meta.<key>_lat and _lng")]
    result[lat_key] = format_coordinate(found.latitude)
    result[lng_key] = format_coordinate(found.longitude)
    return []
