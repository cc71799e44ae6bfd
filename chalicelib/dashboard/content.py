"""A listing's content as the review page shows it: each meta field with its label, rich text as
the sanitized HTML it is, everything else as escaped text."""

from __future__ import annotations

from dataclasses import dataclass

import nh3
from markupsafe import Markup

from chalicelib.categories.models import FieldType
from chalicelib.categories.registry import get_category


@dataclass(frozen=True)
class ContentField:
    """One meta field for display: ``value`` is ``Markup`` (trusted HTML) for rich text, else ``str``."""

    key: str
    label: str
    value: str | Markup


def content_fields(category_key: str, role_key: str, meta: dict[str, str]) -> list[ContentField]:
    """The listing's meta fields in the category's order, labelled; unknown keys follow by key.

    Rich text was sanitized with nh3 on write (:mod:`chalicelib.listings.meta`); it is cleaned
    again here with the same allow-list so that the page never trusts stored HTML blindly.
    """
    category = get_category(category_key)
    shown: list[ContentField] = []
    known = set()
    for field in category.fields:
        known.add(field.key)
        if field.key not in meta or (field.roles and role_key not in field.roles):
            continue
        value = meta[field.key]
        shown.append(ContentField(field.key, field.label, Markup(nh3.clean(value)) if field.type == FieldType.RICHTEXT else value))
    shown.extend(ContentField(k, k, v) for k, v in sorted(meta.items()) if k not in known)
    return shown
