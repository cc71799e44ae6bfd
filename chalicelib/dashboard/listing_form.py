"""The Dashboard's listing form, generated from a category's fields.

Each field of the chosen role becomes a control by its type (text, textarea for rich text,
number, date, url, a select for select and boolean, checkboxes for multiselect; a location is
its address text, geocoded on save by the listings service). Required flags (``requiredFor``)
become ``required``; the hint is the field's description or a plain-words note of its type
(:data:`HINTS`, never the API's encoding), and options show their labels from the category. The form posts ``meta.<key>``
values; :func:`meta_from_form` turns them back into the API's ``meta`` strings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from chalicelib.categories.models import DEFAULT_MAX_LENGTH, Category, FieldType

#: Form control per field type (``input`` types, or ``textarea``/``select``/``checkboxes``).
CONTROLS: dict[FieldType, str] = {
    FieldType.TEXT: "text", FieldType.RICHTEXT: "textarea", FieldType.NUMBER: "number", FieldType.INTEGER: "number",
    FieldType.BOOLEAN: "select", FieldType.SELECT: "select", FieldType.MULTISELECT: "checkboxes",
    FieldType.DATE: "date", FieldType.URL: "url", FieldType.LOCATION: "text",
}
_BOOLEAN_OPTIONS = [("true", "Yes"), ("false", "No")]
#: The hint under a control, in plain words, when the field has no description of its own (the API's
#: ``encoding`` describes the string a client sends; a person uses the control, which does that).
HINTS: dict[FieldType, str] = {
    FieldType.TEXT: "", FieldType.BOOLEAN: "", FieldType.DATE: "", FieldType.SELECT: "",
    FieldType.RICHTEXT: "Paragraphs, bold, italic, lists and links are kept; other formatting is removed.",
    FieldType.NUMBER: "A number, such as 85000 or 12.5.",
    FieldType.INTEGER: "A whole number.",
    FieldType.MULTISELECT: "Pick any.",
    FieldType.URL: "A web address starting with https:// or http://.",
    FieldType.LOCATION: "Address or place name; its coordinates are looked up when you save.",
}


#: The form's words for the issues :mod:`chalicelib.listings.meta` (and the channels' list rule)
#: words for API clients (encodings, parameter names a person filling the form never sees), by the
#: issue's beginning; any other issue (a length or a range) is shown as the API words it, capitalized.
PLAIN_ISSUES: tuple[tuple[str, str], ...] = (
    ("required for role", "Fill this in: it is required for this kind of listing."),
    ("must be a decimal string", "Enter a number, such as 85000 or 12.5."),
    ("is out of range", "Enter a smaller number."),
    ("must be a base-10 integer string", "Enter a whole number, such as 3."),
    ('must be "true" or "false"', "Choose Yes or No."),
    ("must be one of:", "Choose one of the options."),
    ("unknown option(s)", "Choose among the options shown."),
    ("must name at least one option", "Pick at least one option."),
    ("must be an ISO 8601 date", "Enter a date."),
    ("must be an absolute http(s) URL", "Enter a web address starting with https:// or http://."),
    ("address could not be geocoded", "This place could not be found: enter a city, or a street address with its city."),
    ("List should have at least 1 item", "Choose at least one."),  # channels: none ticked
)


def plain_issue(issue: str) -> str:
    """The form's words for an issue the listings service found in a ``meta`` value or the channels
    (:data:`PLAIN_ISSUES`).

    Parameters
    ----------
    issue:
        A ``details[].issue`` of the API's error body, e.g. ``must be a decimal string, e.g. "85000" or "12.5"``.

    Returns
    -------
    str
        A sentence for the person filling the form, e.g. ``Enter a number, such as 85000 or 12.5.``
    """
    plain = next((words for start, words in PLAIN_ISSUES if issue.startswith(start)), None)
    if plain is not None:
        return plain
    return f"{issue[:1].upper()}{issue[1:]}{'' if issue.endswith('.') else '.'}"


@dataclass(frozen=True)
class FormField:
    """One control of the listing form.

    Attributes
    ----------
    key, label:
        The meta key (the control's name is ``meta.<key>``) and its label.
    control:
        A :data:`CONTROLS` value.
    required:
        Required for the role (``requiredFor``).
    hint:
        The field's description, or what to enter in plain words (:data:`HINTS`; empty: the control says it).
    options:
        ``(value, label)`` pairs of a select or checkboxes control.
    value:
        The current value (a multiselect's comma-separated keys).
    step:
        ``any`` for decimal numbers, ``1`` for integers, else empty.
    """

    key: str
    label: str
    control: str
    required: bool
    hint: str
    options: list[tuple[str, str]] = field(default_factory=list)
    value: str = ""
    step: str = ""

    @property
    def selected(self) -> set[str]:
        """The chosen option keys of a multiselect."""
        return {v for v in self.value.split(",") if v}


def form_fields(category: Category, role_key: str, meta: Mapping[str, str]) -> list[FormField]:
    """The controls for ``role_key`` of ``category`` in the category's order, filled from ``meta``."""
    shown = []
    for f in category.fields:
        if f.roles and role_key not in f.roles:
            continue
        options = _BOOLEAN_OPTIONS if f.type == FieldType.BOOLEAN else [(o.key, o.label) for o in f.options or []]
        hint = HINTS[f.type] if f.type == FieldType.LOCATION else f.description or HINTS[f.type]
        step = {FieldType.NUMBER: "any", FieldType.INTEGER: "1"}.get(f.type, "")
        shown.append(FormField(f.key, f.label, CONTROLS[f.type], role_key in f.requiredFor, hint, options,
                               meta.get(f.key, ""), step))
    return shown


#: A number control's value as browsers write it (HTML's "valid floating-point number", with the
#: leading ``.`` Chromium also accepts): ``.5``, ``1e5``, ``2.0``.
_BROWSER_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def api_number(field_type: FieldType, text: str) -> str:
    """A number control's value ``text`` as the API writes it: ``.5`` -> ``0.5``, ``1e5`` ->
    ``100000``, and for an integer field ``2.0`` -> ``2``. Anything else (not a browser's number,
    a fraction for an integer field, an exponent past what any accepted value holds) goes on as
    typed, for the service to refuse in its words."""
    if not _BROWSER_NUMBER.fullmatch(text):
        return text
    number = Decimal(text)
    if not number.is_zero() and abs(number.adjusted()) >= DEFAULT_MAX_LENGTH:
        return text
    if field_type == FieldType.INTEGER:
        return str(int(number)) if number == number.to_integral_value() else text
    return format(number.normalize(), "f")


def meta_from_form(category: Category, role_key: str, form: Mapping[str, list[str]]) -> dict[str, str]:
    """The non-empty ``meta`` values posted for ``role_key``'s fields (a multiselect's boxes joined
    by commas, in the category's option order; a number as :func:`api_number` writes it); blank
    fields are left out."""
    meta = {}
    for f in category.fields:
        if f.roles and role_key not in f.roles:
            continue
        posted = [v.strip() for v in form.get(f"meta.{f.key}", []) if v.strip()]
        if f.type == FieldType.MULTISELECT:
            value = ",".join(o.key for o in f.options or [] if o.key in posted)
            value = value or ",".join(posted)  # unknown keys go on, for the service to name
        else:
            value = posted[0] if posted else ""
            if value and f.type in (FieldType.NUMBER, FieldType.INTEGER):
                value = api_number(f.type, value)
        if value:
            meta[f.key] = value
    return meta


def _comparable(field_type: FieldType, value: str | None) -> object:
    return frozenset((value or "").split(",")) if field_type == FieldType.MULTISELECT and value is not None else value


def meta_patch(category: Category, role_key: str, stored: Mapping[str, str], posted: Mapping[str, str]) -> dict[str, str | None]:
    """The ``meta`` of a PATCH that makes the form's fields equal to ``posted``: changed values, and
    ``None`` for a field emptied in the form (internal keys such as coordinates are the service's).
    A multiselect is a set: the checkboxes post in option order, whatever order it was stored in."""
    patch: dict[str, str | None] = {}
    for f in category.fields:
        if f.roles and role_key not in f.roles:
            continue
        if f.key in posted and _comparable(f.type, posted[f.key]) != _comparable(f.type, stored.get(f.key)):
            patch[f.key] = posted[f.key]
        elif f.key not in posted and f.key in stored:
            patch[f.key] = None
    return patch
