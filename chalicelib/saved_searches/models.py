"""Saved-search request and response models."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, StrictFloat, StrictInt, StringConstraints

from chalicelib.kernel.json_types import SINGLE_LINE
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import Envelope, SearchEnvelope
from chalicelib.listings.models import Listing

#: A search parameter's value: text as in a query string; numbers are accepted and kept as text (a boolean is refused).
QueryValue = Annotated[str, StringConstraints(max_length=512)] | StrictInt | StrictFloat  # strict: true is not 1


class SavedSearchCreate(Model):
    """Body of ``POST /v1/saved-searches``.

    ``query`` holds exactly the parameters of ``GET /v1/listings/search`` (``q``,
    ``category``, ``role``, ``meta.<key>``, ``meta.<key>_min``/``_max``,
    ``meta.<loc>_lat``/``_lng``, ``radiusKm``), without paging; with ``alerts`` a geo filter
    needs ``radiusKm``. ``name`` defaults to the query in query-string form.
    """

    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), SINGLE_LINE] | None = None
    query: dict[Annotated[str, StringConstraints(min_length=1, max_length=80)], QueryValue] = Field(max_length=40)
    alerts: bool = True


class SavedSearch(Model):
    """A saved search as the API returns it (``query`` values as text)."""

    savedSearchId: str
    name: str
    query: dict[str, str]
    alerts: bool
    createdAt: str


class SavedSearchPage(Envelope):
    """``GET /v1/saved-searches`` envelope, newest first."""

    savedSearches: list[SavedSearch]


class SavedSearchMatch(Model):
    """One listing that matched a saved search: the listing now, the km from the search's geo
    center (null without a geo filter) and when it matched (ISO 8601 UTC)."""

    listing: Listing
    distanceKm: float | None = None
    matchedAt: str


class SavedSearchMatchPage(SearchEnvelope):
    """``GET /v1/saved-searches/{id}/matches`` envelope: still-ACTIVE matches, newest first.

    ``total`` counts the still-ACTIVE matches found up to one page past this one: exact
    (``totalRelation: "eq"``) when the list ended there, else a lower bound (``"gte"``).
    """

    matches: list[SavedSearchMatch]
