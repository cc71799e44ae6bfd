"""A listing's content as the review page shows it: each meta field with its label, rich text as
the sanitized HTML it is, options by their labels, booleans as Yes/No, everything else as escaped text; internal fields (the coordinates
``<location>_lat``/``_lng`` stored beside a location's place name) hidden; and what changed
since the last approved version."""

from __future__ import annotations

from dataclasses import dataclass

import nh3
from markupsafe import Markup

from chalicelib.categories.models import CategoryField, FieldType
from chalicelib.categories.registry import get_category


@dataclass(frozen=True)
class ContentField:
    """One meta field for display: ``value`` is ``Markup`` (trusted HTML) for rich text, else ``str``."""

    key: str
    label: str
    value: str | Markup

    @property
    def rich(self) -> bool:
        """Whether ``value`` is sanitized HTML (rich text), shown as HTML."""
        return isinstance(self.value, Markup)


def content_fields(category_key: str, role_key: str, meta: dict[str, str]) -> list[ContentField]:
    """The listing's meta fields in the category's order, labelled; unknown keys follow by key.

    Rich text was sanitized with nh3 on write (:mod:`chalicelib.listings.meta`); it is cleaned
    again here with the same allow-list so that the page never trusts stored HTML blindly.
    """
    category = get_category(category_key)
    shown: list[ContentField] = []
    known = internal_keys(category_key)
    for field in category.fields:
        known.add(field.key)
        if field.key not in meta or (field.roles and role_key not in field.roles):
            continue
        value = meta[field.key]
        shown.append(ContentField(field.key, field.label, Markup(nh3.clean(value)) if field.type == FieldType.RICHTEXT
                                  else readable(field, value)))
    shown.extend(ContentField(k, k, v) for k, v in sorted(meta.items()) if k not in known)
    return shown


def readable(field: CategoryField, value: str) -> str:
    """A stored value as a person reads it: option keys as their labels (a multiselect's joined
    by commas), ``true``/``false`` as Yes/No, anything else (and an unknown key) as stored."""
    if field.type == FieldType.BOOLEAN:
        return {"true": "Yes", "false": "No"}.get(value, value)
    if field.type in (FieldType.SELECT, FieldType.MULTISELECT):
        labels = {o.key: o.label for o in field.options or []}
        return ", ".join(labels.get(key, key) for key in value.split(",") if key)
    return value


def kind_name(category_key: str, role_key: str) -> str:
    """"Category — Role" as the category record names them (the keys when unknown)."""
    category = get_category(category_key)
    role = next((r.name for r in category.roles if r.key == role_key), role_key)
    return f"{category.name} — {role}"


def internal_keys(category_key: str) -> set[str]:
    """Meta keys that are not content: the coordinates geocoding stores beside each location field
    (``<key>_lat``, ``<key>_lng``, :mod:`chalicelib.listings.meta`); the place name stands for them."""
    return {f"{f.key}_{axis}" for f in get_category(category_key).location_fields() for axis in ("lat", "lng")}


@dataclass(frozen=True)
class ChangedField:
    """A content field that differs from the last approved version.

    ``old``/``new`` are ``None`` when the field was added / removed; values as in :class:`ContentField`.
    """

    key: str
    label: str
    old: str | Markup | None
    new: str | Markup | None


def changed_fields(category_key: str, role_key: str, meta: dict[str, str], approved: dict[str, str]) -> list[ChangedField]:
    """The content fields of ``meta`` that differ from ``approved`` (the last approved meta), in the
    category's order; internal fields are compared through their place name only."""
    new = {f.key: f for f in content_fields(category_key, role_key, meta)}
    old = {f.key: f for f in content_fields(category_key, role_key, approved)}
    order = list(new) + [k for k in old if k not in new]
    changes = []
    for key in order:
        before, after = old.get(key), new.get(key)
        if before is None or after is None or str(before.value) != str(after.value):
            label = (after or before).label  # type: ignore[union-attr]  # one of them exists
            changes.append(ChangedField(key, label, before.value if before else None, after.value if after else None))
    return changes
