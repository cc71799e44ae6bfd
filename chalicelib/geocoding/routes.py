"""``GET /v1/geocode?q=``."""

from __future__ import annotations

from typing import Annotated

from chalice.app import Blueprint
from pydantic import ConfigDict, StringConstraints

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.geocoding.api import GeocodeResult, get_geocoder
from chalicelib.kernel import errors
from chalicelib.kernel.json_types import NON_BLANK
from chalicelib.kernel.model_base import Model

bp = Blueprint(__name__)
route = routes(bp, tags=("geocoding",))


class GeocodeQuery(Model):
    """Query of ``GET /v1/geocode``: the address text (1..200 characters)."""

    model_config = ConfigDict(extra="forbid")
    q: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=NON_BLANK)]


@route("/v1/geocode", "GET", query=GeocodeQuery, response=GeocodeResult, error_statuses=(404,))
def geocode(caller: Caller, query: GeocodeQuery) -> GeocodeResult:
    """Coordinates (degrees, WGS 84) of an address; 404 NOT_FOUND when nothing matches."""
    result = get_geocoder().geocode(query.q)
    if result is None:
        raise errors.NotFound(f"No place matches '{query.q}'")
    return result
