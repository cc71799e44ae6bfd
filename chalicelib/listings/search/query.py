"""Parsing ``GET /v1/listings/search`` parameters (DESIGN §2 "Search").

Parameters: ``q``, ``category``, ``role``, ``meta.<key>`` (select equals, multiselect
contains every given option, number/integer/boolean equals), ``meta.<key>_min`` /
``meta.<key>_max`` (number and integer), ``meta.<loc>_lat`` + ``meta.<loc>_lng`` (geo),
``radiusKm``, ``page``, ``pageSize``, ``cursor``. Unknown parameters are a VALIDATION_ERROR naming them,
so a typo never silently widens a search.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from pydantic import ValidationError as PydanticValidationError

from chalicelib.categories.models import Category, CategoryField, FieldType
from chalicelib.categories.registry import all_categories
from chalicelib.kernel import errors
from chalicelib.kernel.pagination import PageQuery
from chalicelib.kernel.text import words
from chalicelib.listings.meta import InvalidValue, parse_coordinate, parse_value
from chalicelib.listings.search.parameters import MAX_RADIUS_KM, ListingSearchQuery, value_schema
from chalicelib.text_analysis.analyzer import DEFAULT_LANGUAGE

__all__ = ["MAX_RADIUS_KM", "GeoFilter", "MetaFilter", "SearchQuery", "parse_search"]
_RANGE_TYPES = {FieldType.NUMBER, FieldType.INTEGER}
_PAGING = ("page", "pageSize", "cursor")
#: The parameters that page through results instead of selecting them (a saved search has none).
PAGING_PARAMETERS = _PAGING


@dataclass
class MetaFilter:
    """One ``meta.<key>`` filter: ``op`` is ``eq``, ``contains``, ``min`` or ``max``."""

    key: str
    type: FieldType
    op: str
    value: str

    def matches(self, meta: Mapping[str, str]) -> bool:
        """True when the listing's ``meta`` passes this filter."""
        stored = meta.get(self.key)
        if stored is None:
            return False
        if self.op == "contains":
            return set(self.value.split(",")) <= set(stored.split(","))
        if self.type in _RANGE_TYPES:
            number = Decimal(stored)
            if self.op == "min":
                return number >= self.bound
            if self.op == "max":
                return number <= self.bound
            return number == self.bound
        return stored == self.value

    @functools.cached_property
    def bound(self) -> Decimal:
        """``value`` as a number (a range or number filter's bound), parsed once per query."""
        return Decimal(self.value)


@dataclass
class GeoFilter:
    """A geo filter on location field ``key``: center in degrees, optional radius in km."""

    key: str
    lat: float
    lng: float
    radius_km: float | None


@dataclass
class SearchQuery:
    """A parsed, validated search."""

    page: PageQuery
    terms: list[str] = field(default_factory=list)
    category: Category | None = None
    role: str | None = None
    filters: list[MetaFilter] = field(default_factory=list)
    geo: GeoFilter | None = None
    #: Canonical text of every parameter but the paging ones: what a cursor is bound to.
    scope: str = ""
    #: ``relevance`` or ``newest`` (the ``sort`` parameter; relevance by default when ``q`` has terms).
    sort: str = "newest"

    @property
    def ranked(self) -> bool:
        """True when the results are ordered by relevance (``q`` terms, no geo filter, not ``sort=newest``)."""
        return self.sort == "relevance" and bool(self.terms) and self.geo is None


def language_of(category_key: str) -> str:
    """The analysis language of a category (the analyzer's default for an unknown one)."""
    category = all_categories().get(category_key)
    return category.language if category else DEFAULT_LANGUAGE


def _invalid_parameter(parameter: str, issue: str) -> errors.RuleViolation:
    return errors.RuleViolation.for_field(parameter, issue, f"Invalid search parameter {parameter}: {issue}")


def _field_for(key: str, category: Category | None, parameter: str) -> CategoryField:
    """The field ``key`` of the category, or (without one) of any category, with consistent type."""
    candidates = [category] if category else list(all_categories().values())
    fields = [f for c in candidates if (f := c.field(key)) is not None]
    if not fields:
        where = f"category '{category.key}'" if category else "any category"
        raise _invalid_parameter(parameter, f"'{key}' is not a field of {where}")
    first = fields[0]
    if not first.filterable:
        raise _invalid_parameter(parameter, f"field '{key}' ({first.type}) is not filterable")
    if any(f.type != first.type for f in fields):
        raise _invalid_parameter(parameter, f"field '{key}' differs between categories; give category")
    return first


def parse_search(params: dict[str, str], validated: ListingSearchQuery | None = None) -> SearchQuery:
    """Validate the query string of a search.

    Parameters
    ----------
    params:
        The raw query string parameters (the ``meta.*`` filters are read from them).
    validated:
        The fixed parameters as the route already validated them (``None``: validated here),
        so that a request's query is validated once.

    Raises
    ------
    RuleViolation
        Naming the offending parameter: unknown category or role, unknown or
        non-filterable meta field, bad value, non-numeric or out-of-range coordinates,
        half a coordinate pair, ``radiusKm`` without coordinates, bad paging.
    """
    try:  # not http.parse_model: this module stays importable without the HTTP layer and its stores
        fixed = validated if validated is not None else ListingSearchQuery.model_validate(params)
    except PydanticValidationError as exc:
        raise errors.from_pydantic(exc) from exc
    # The paging part as given (fields not set keep PageQuery's defaults), without validating again.
    page = PageQuery.model_construct(**{k: getattr(fixed, k) for k in _PAGING if k in fixed.model_fields_set})
    # JSON, not "k=v&...": a value holding "&" or "=" must not read as two parameters (the cursor
    # of `q=a&role=b` would continue `q="a&role=b"`).
    scope = json.dumps({k: v for k, v in params.items() if k not in _PAGING}, sort_keys=True, separators=(",", ":"))
    query = SearchQuery(page=page, scope=f"listings.search|{scope}")
    _scope(query, fixed)
    query.terms = list(dict.fromkeys(words(params.get("q", ""))))
    query.sort = fixed.sort or ("relevance" if query.terms else "newest")

    coordinates: dict[str, dict[str, float]] = {}
    for name, raw in params.items():
        if name in (*_PAGING, "category", "role", "q", "radiusKm", "sort"):
            continue
        if not name.startswith("meta.") or len(name) <= 5:
            raise _invalid_parameter(name, "unknown parameter")
        base, _, suffix = name[5:].rpartition("_")
        if suffix in ("lat", "lng") and base:
            _coordinate(coordinates, base, suffix, query.category, name, raw)
        else:
            query.filters.append(_meta_filter(name, raw, query.category))

    query.geo = _parse_geo(coordinates, fixed.radiusKm)
    return query


def _scope(query: SearchQuery, fixed: ListingSearchQuery) -> None:
    """Set the query's category and role, both checked against the category data."""
    if fixed.category is not None:
        query.category = all_categories().get(fixed.category)
        if query.category is None:
            raise _invalid_parameter("category", f"unknown category; use one of {', '.join(all_categories())}")
    if fixed.role is not None:
        roles = {r.key for c in ([query.category] if query.category else all_categories().values()) for r in c.roles}
        if fixed.role not in roles:
            raise _invalid_parameter("role", f"unknown role; use one of {', '.join(sorted(roles))}")
        query.role = fixed.role


def _coordinate(coordinates: dict[str, dict[str, float]], base: str, axis: str, category: Category | None,
                parameter: str, raw: str) -> None:
    """Add ``meta.<base>_<axis>`` (degrees) to ``coordinates`` (location field -> axis -> value)."""
    field_ = _field_for(base, category, parameter)
    if field_.type != FieldType.LOCATION:
        raise _invalid_parameter(parameter, f"'{base}' is not a location field")
    try:
        coordinates.setdefault(base, {})[axis] = parse_coordinate(raw, 90.0 if axis == "lat" else 180.0)
    except InvalidValue as exc:
        raise _invalid_parameter(parameter, str(exc)) from exc


def _meta_filter(parameter: str, raw: str, category: Category | None) -> MetaFilter:
    """The filter of ``meta.<key>`` (equality, ``contains`` for a multiselect) or of
    ``meta.<key>_min`` / ``_max`` (a number range bound)."""
    key = parameter[5:]
    base, _, suffix = key.rpartition("_")
    op = "eq"
    if suffix in ("min", "max") and base and _is_meta_field(base, category):
        key, op = base, suffix
    field_ = _field_for(key, category, parameter)
    if field_.type == FieldType.LOCATION:
        raise _invalid_parameter(parameter, f"filter a location with meta.{key}_lat and meta.{key}_lng (and radiusKm)")
    if op in ("min", "max") and field_.type not in _RANGE_TYPES:
        raise _invalid_parameter(parameter, f"_{op} applies to number and integer fields only")
    _check_documented(parameter, field_, raw)
    try:
        value = parse_value(field_, raw)
    except InvalidValue as exc:
        raise _invalid_parameter(parameter, str(exc)) from exc
    if field_.type == FieldType.MULTISELECT:
        op = "contains"
    return MetaFilter(key=key, type=field_.type, op=op, value=value)


def _check_documented(parameter: str, field_: CategoryField, raw: str) -> None:
    """The value must fit the parameter's documented schema (:func:`value_schema`), so that the
    OpenAPI document and the server accept exactly the same filter values (``fullmatch``: Python's
    ``$`` would also match before a final line feed, ECMA-262's does not)."""
    schema = value_schema(field_)
    if "enum" in schema and raw not in schema["enum"]:
        raise _invalid_parameter(parameter, f"must be one of: {', '.join(schema['enum'])}")
    if "pattern" in schema and not re.fullmatch(schema["pattern"], raw):
        raise _invalid_parameter(parameter, f"must match {schema['pattern']}")


def _is_meta_field(key: str, category: Category | None) -> bool:
    candidates = [category] if category else list(all_categories().values())
    return any(c.field(key) is not None for c in candidates)


def _parse_geo(coordinates: dict[str, dict[str, float]], radius_km: float | None) -> GeoFilter | None:
    if len(coordinates) > 1:
        raise _invalid_parameter("meta", "at most one geo filter per search")
    if not coordinates:
        if radius_km is not None:
            raise _invalid_parameter("radiusKm", "needs a geo filter: meta.<key>_lat and meta.<key>_lng")
        return None
    key, pair = next(iter(coordinates.items()))
    for axis in ("lat", "lng"):
        if axis not in pair:
            raise _invalid_parameter(f"meta.{key}_{axis}", "required together with the other coordinate")
    return GeoFilter(key=key, lat=pair["lat"], lng=pair["lng"], radius_km=radius_km)
