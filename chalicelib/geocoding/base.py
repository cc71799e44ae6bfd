"""The geocoding contract: the :class:`GeocodeResult` model and the :class:`Geocoder` protocol.

Every backend (:mod:`chalicelib.geocoding.gazetteer`,
:mod:`chalicelib.geocoding.amazon_location`) turns a free-text place query such as
``"Berlin"`` or ``"Paris, FR"`` into one :class:`GeocodeResult`, or ``None`` when
nothing matches. Callers obtain the configured backend with
:func:`chalicelib.geocoding.api.get_geocoder`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import ConfigDict, Field, field_validator

from chalicelib.kernel.model_base import Model


class GeocodeResult(Model):
    """The best match for a place query.

    Attributes
    ----------
    query:
        The query as the caller gave it, with surrounding whitespace stripped.
    latitude:
        Latitude in degrees (WGS 84), in ``[-90, 90]``.
    longitude:
        Longitude in degrees (WGS 84), in ``[-180, 180]``.
    displayName:
        Human-readable name of the match, e.g. ``"Berlin, Germany"``.
    countryCode:
        ISO 3166-1 alpha-2 country code, upper case, e.g. ``"DE"``. Lower-case
        input is upper-cased on validation.

    Raises
    ------
    pydantic.ValidationError
        On construction, when a coordinate is out of range or ``countryCode`` is
        not two ASCII letters.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str
    latitude: float = Field(ge=-90.0, le=90.0)
    longitude: float = Field(ge=-180.0, le=180.0)
    displayName: str
    countryCode: str = Field(pattern=r"^[A-Z]{2}$")

    @field_validator("countryCode", mode="before")
    @classmethod
    def _upper_country_code(cls, value: object) -> object:
        """Strip and upper-case the country code before the pattern check."""
        return value.strip().upper() if isinstance(value, str) else value


@runtime_checkable
class Geocoder(Protocol):
    """Anything that turns a free-text place query into coordinates."""

    def geocode(self, query: str) -> GeocodeResult | None:
        """Return the best match for ``query``.

        Parameters
        ----------
        query:
            Free text naming a place, e.g. ``"Zürich"``, ``"Paris, FR"`` or
            ``"Paris, France"``. Surrounding whitespace is ignored; an empty or
            blank query matches nothing.

        Returns
        -------
        GeocodeResult or None
            The best match (coordinates in degrees, WGS 84), or ``None`` when
            nothing matches.
        """
        ...
