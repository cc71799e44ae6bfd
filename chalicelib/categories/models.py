"""Category records (DESIGN §2 "Categories")."""

from __future__ import annotations

from enum import StrEnum

from pydantic import ConfigDict, Field, model_validator

from chalicelib.edge.json_input import MAX_SAFE_INTEGER
from chalicelib.kernel.model_base import Model
from chalicelib.text_analysis.languages import DEFAULT_LANGUAGE, LANGUAGES


class FieldType(StrEnum):
    """The value types a category field may have; values are always strings in ``meta``."""

    TEXT = "text"
    RICHTEXT = "richtext"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    SELECT = "select"
    MULTISELECT = "multiselect"
    DATE = "date"
    URL = "url"
    LOCATION = "location"


#: How each type's value is written as a string (the ``encoding`` of a field record).
ENCODINGS: dict[FieldType, str] = {
    FieldType.TEXT: "plain text string",
    FieldType.RICHTEXT: "HTML string; sanitized on write (nh3/ammonia default allow-list: p, br, strong, em, ul, ol, li, a, ...)",
    FieldType.NUMBER: 'decimal string, e.g. "85000" or "12.5"',
    FieldType.INTEGER: 'base-10 integer string, e.g. "3"',
    FieldType.BOOLEAN: '"true" or "false"',
    FieldType.SELECT: "one option key",
    FieldType.MULTISELECT: 'comma-separated option keys, e.g. "python,aws"',
    FieldType.DATE: "ISO 8601 calendar date, YYYY-MM-DD",
    FieldType.URL: "absolute http(s) URL",
    FieldType.LOCATION: (
        "address text; coordinates in meta.<key>_lat and meta.<key>_lng as decimal-degree strings "
        "(WGS 84), geocoded server-side when omitted"
    ),
}

#: Longest accepted value per type, in characters (rich text: after sanitizing); other types take
#: :data:`DEFAULT_MAX_LENGTH`, a field keyed ``title`` :data:`TITLE_MAX_LENGTH`.
MAX_LENGTH: dict[FieldType, int] = {FieldType.TEXT: 500, FieldType.RICHTEXT: 20_000, FieldType.URL: 2048, FieldType.LOCATION: 200}
TITLE_MAX_LENGTH = 140
DEFAULT_MAX_LENGTH = 100

#: Types whose values ``meta.<key>=`` filters in search.
FILTERABLE_TYPES = {FieldType.SELECT, FieldType.MULTISELECT, FieldType.NUMBER, FieldType.INTEGER, FieldType.BOOLEAN, FieldType.LOCATION}


class Role(Model):
    """A role listings of a category are published under (e.g. hiring / seeking)."""

    model_config = ConfigDict(extra="forbid")
    key: str
    name: str
    description: str


class FieldOption(Model):
    """One allowed value of a select or multiselect field."""

    model_config = ConfigDict(extra="forbid")
    key: str
    label: str


class CategoryField(Model):
    """A typed listing field (DESIGN §2 field record).

    ``roles`` lists the roles that may set the field, ``requiredFor`` those that must;
    ``encoding`` says how the string value is written; ``filterable`` whether search takes
    ``meta.<key>`` filters on it; ``minimum``/``maximum`` bound number and integer values
    (inclusive; by default +-(2**53 - 1), the integers every JSON client represents exactly);
    ``maxLength`` bounds the value's string, in characters (by default from the type:
    :data:`MAX_LENGTH`, :data:`TITLE_MAX_LENGTH`, :data:`DEFAULT_MAX_LENGTH`).
    """

    model_config = ConfigDict(extra="forbid")
    key: str
    label: str
    type: FieldType
    roles: list[str]
    requiredFor: list[str] = Field(default_factory=list)
    options: list[FieldOption] | None = None
    encoding: str = ""
    filterable: bool = False
    description: str | None = None
    minimum: int | float | None = Field(default=None, description="Smallest accepted value (number and integer fields)")
    maximum: int | float | None = Field(default=None, description="Largest accepted value (number and integer fields)")
    maxLength: int = Field(default=0, description="Longest accepted value, in characters (rich text: after sanitizing)")

    @model_validator(mode="after")
    def _derive(self) -> CategoryField:
        # Encoding and filterability follow from the type, so the data files never repeat them.
        self.encoding = self.encoding or ENCODINGS[self.type]
        if "filterable" not in self.model_fields_set:
            self.filterable = self.type in FILTERABLE_TYPES
        if "maxLength" not in self.model_fields_set:
            self.maxLength = TITLE_MAX_LENGTH if self.key == "title" else MAX_LENGTH.get(self.type, DEFAULT_MAX_LENGTH)
        if self.type in (FieldType.NUMBER, FieldType.INTEGER):
            self.minimum = -MAX_SAFE_INTEGER if self.minimum is None else self.minimum
            self.maximum = MAX_SAFE_INTEGER if self.maximum is None else self.maximum
            if self.minimum > self.maximum:
                raise ValueError(f"field {self.key}: minimum above maximum")
        elif self.minimum is not None or self.maximum is not None:
            raise ValueError(f"field {self.key}: only number and integer fields take minimum/maximum")
        if self.type in (FieldType.SELECT, FieldType.MULTISELECT) and not self.options:
            raise ValueError(f"field {self.key}: {self.type} needs options")
        if not set(self.requiredFor) <= set(self.roles):
            raise ValueError(f"field {self.key}: requiredFor must be a subset of roles")
        return self

    def option_keys(self) -> set[str]:
        """The allowed option keys (empty for non-select fields)."""
        return {o.key for o in self.options or []}


class Category(Model):
    """A category record as ``GET /v1/categories/{key}`` returns it."""

    model_config = ConfigDict(extra="forbid")
    key: str
    name: str
    description: str
    roles: list[Role]
    fields: list[CategoryField]
    #: The language of the category's listings: the Snowball stemmer search analyzes them with
    #: (docs/search.md, "The match rule and the score"); English when the record declares none.
    language: str = Field(
        default=DEFAULT_LANGUAGE, description="Language of the listings' text (a Snowball stemmer name); search stems with it"
    )

    @model_validator(mode="after")
    def _check(self) -> Category:
        if self.language not in LANGUAGES:
            raise ValueError(f"category {self.key}: language must be one of {', '.join(sorted(LANGUAGES))}")
        role_keys = {r.key for r in self.roles}
        keys = [f.key for f in self.fields]
        if len(keys) != len(set(keys)):
            raise ValueError(f"category {self.key}: duplicate field keys")
        title = self.field("title")
        if title is None or title.type != FieldType.TEXT or set(title.requiredFor) != role_keys:
            raise ValueError(f"category {self.key}: a text field 'title' required for every role is mandatory")
        for f in self.fields:
            if not set(f.roles) <= role_keys:
                raise ValueError(f"category {self.key}: field {f.key} names an unknown role")
        if len(self.location_fields()) > 1:
            # The geo index holds one position per listing (chalicelib.search.geo).
            raise ValueError(f"category {self.key}: at most one location field")
        return self

    def field(self, key: str) -> CategoryField | None:
        """The field with ``key``, or ``None``."""
        return next((f for f in self.fields if f.key == key), None)

    def role(self, key: str) -> Role | None:
        """The role with ``key``, or ``None``."""
        return next((r for r in self.roles if r.key == key), None)

    def location_fields(self) -> list[CategoryField]:
        """The category's location fields (at most one)."""
        return [f for f in self.fields if f.type == FieldType.LOCATION]


class CategoryList(Model):
    """Response of ``GET /v1/categories``."""

    categories: list[Category]
