"""Geocoding with Amazon Location Service (the ``geo-places`` API, operation ``Geocode``).

Selected with ``GEOCODER=amazon-location``. The Lambda role needs
``geo-places:Geocode`` and the region must offer Amazon Location Service v2 (places).
Each call is billed by AWS; results come from AWS's data providers, not GeoNames.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from chalicelib.geocoding.base import GeocodeResult

__all__ = ["MAX_QUERY_LENGTH", "AmazonLocationGeocoder", "GeoPlacesClient"]

MAX_QUERY_LENGTH: Final = 200
"""Longest ``QueryText`` the Geocode API accepts, in characters."""


class GeoPlacesClient(Protocol):
    """The part of a boto3 ``geo-places`` client this module uses."""

    def geocode(self, **kwargs: Any) -> dict[str, Any]:
        """Call the ``Geocode`` operation and return its response dict."""
        ...


class AmazonLocationGeocoder:
    """:class:`~chalicelib.geocoding.base.Geocoder` backed by Amazon Location Service.

    Parameters
    ----------
    client:
        A boto3 ``geo-places`` client; by default the process-wide one of
        :func:`chalicelib.persistence.storage.client` (standard retries; region and credentials from the
        environment, i.e. the Lambda role).
    language:
        Optional BCP 47 tag (e.g. ``"en"``) sent as ``Language`` so names come back
        in that language; by default the service's choice (usually local names).

    Raises
    ------
    botocore.exceptions.NoRegionError
        When ``client`` is omitted and no AWS region is configured.
    """

    def __init__(
        self, client: GeoPlacesClient | None = None, *, language: str | None = None
    ) -> None:
        if client is None:
            from chalicelib.persistence import storage  # imported here: the gazetteer path never loads boto3

            client = storage.client("geo-places")
        self._client: GeoPlacesClient = client
        self._language = language

    def geocode(self, query: str) -> GeocodeResult | None:
        """Geocode ``query`` with one ``Geocode`` call (``MaxResults=1``).

        Parameters
        ----------
        query:
            Free text naming a place or address, e.g. ``"Berlin"``. Surrounding
            whitespace is stripped before sending.

        Returns
        -------
        GeocodeResult or None
            The top result: ``Position`` (``[longitude, latitude]`` in degrees,
            WGS 84) mapped to ``latitude``/``longitude``, ``Title`` (or
            ``Address.Label``) to ``displayName`` and ``Address.Country.Code2`` to
            ``countryCode``. ``None`` without calling AWS when the query is blank or
            longer than :data:`MAX_QUERY_LENGTH`; ``None`` when the service returns no
            item, or an item without a position or country code.

        Raises
        ------
        botocore.exceptions.ClientError
            On service errors (access denied, throttling, validation, ...).
        chalicelib.kernel.errors.DependencyUnavailable
            Amazon Location timed out or refused the connection (the client is :func:`chalicelib.persistence.storage.client`'s).
        botocore.exceptions.BotoCoreError
            On credential problems.
        """
        stripped = query.strip()
        if not stripped or len(stripped) > MAX_QUERY_LENGTH:
            return None
        params: dict[str, Any] = {"QueryText": stripped, "MaxResults": 1}
        if self._language:
            params["Language"] = self._language
        response = self._client.geocode(**params)
        items = response.get("ResultItems") or []
        if not items:
            return None
        item = items[0]
        position = item.get("Position") or []
        address = item.get("Address") or {}
        country_code = (address.get("Country") or {}).get("Code2")
        if len(position) != 2 or not country_code:
            return None
        longitude, latitude = position
        return GeocodeResult(
            query=stripped,
            latitude=latitude,
            longitude=longitude,
            displayName=item.get("Title") or address.get("Label") or stripped,
            countryCode=country_code,
        )
