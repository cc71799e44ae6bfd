"""Fifty real cities (GeoNames coordinates, rounded) for demo data and benchmarks."""

from __future__ import annotations

CITIES: list[tuple[str, str, float, float]] = [
    ("Berlin", "DE", 52.5244, 13.4105), ("Munich", "DE", 48.1374, 11.5755), ("Hamburg", "DE", 53.5507, 9.9930),
    ("Cologne", "DE", 50.9333, 6.9500), ("Frankfurt am Main", "DE", 50.1155, 8.6842), ("Paris", "FR", 48.8534, 2.3488),
    ("Lyon", "FR", 45.7485, 4.8467), ("Marseille", "FR", 43.2970, 5.3811), ("London", "GB", 51.5085, -0.1257),
    ("Manchester", "GB", 53.4809, -2.2374), ("Edinburgh", "GB", 55.9521, -3.1965), ("Dublin", "IE", 53.3331, -6.2489),
    ("Amsterdam", "NL", 52.3740, 4.8897), ("Rotterdam", "NL", 51.9225, 4.4792), ("Brussels", "BE", 50.8505, 4.3488),
    ("Zurich", "CH", 47.3667, 8.5500), ("Geneva", "CH", 46.2022, 6.1457), ("Vienna", "AT", 48.2085, 16.3721),
    ("Prague", "CZ", 50.0880, 14.4208), ("Warsaw", "PL", 52.2298, 21.0118), ("Krakow", "PL", 50.0614, 19.9366),
    ("Budapest", "HU", 47.4980, 19.0399), ("Copenhagen", "DK", 55.6759, 12.5655), ("Stockholm", "SE", 59.3294, 18.0687),
    ("Oslo", "NO", 59.9127, 10.7461), ("Helsinki", "FI", 60.1695, 24.9354), ("Madrid", "ES", 40.4165, -3.7026),
    ("Barcelona", "ES", 41.3888, 2.1590), ("Valencia", "ES", 39.4698, -0.3774), ("Lisbon", "PT", 38.7167, -9.1333),
    ("Porto", "PT", 41.1496, -8.6110), ("Rome", "IT", 41.8919, 12.5113), ("Milan", "IT", 45.4643, 9.1895),
    ("Athens", "GR", 37.9838, 23.7278), ("Istanbul", "TR", 41.0138, 28.9497), ("New York City", "US", 40.7143, -74.0060),
    ("San Francisco", "US", 37.7749, -122.4194), ("Los Angeles", "US", 34.0522, -118.2437), ("Chicago", "US", 41.8500, -87.6500),
    ("Austin", "US", 30.2672, -97.7431), ("Seattle", "US", 47.6062, -122.3321), ("Boston", "US", 42.3584, -71.0598),
    ("Toronto", "CA", 43.7001, -79.4163), ("Vancouver", "CA", 49.2497, -123.1193), ("Mexico City", "MX", 19.4285, -99.1277),
    ("Sao Paulo", "BR", -23.5475, -46.6361), ("Buenos Aires", "AR", -34.6132, -58.3772), ("Tokyo", "JP", 35.6895, 139.6917),
    ("Singapore", "SG", 1.2897, 103.8501), ("Sydney", "AU", -33.8679, 151.2073),
]
