"""Turn free-text place queries into coordinates; :mod:`chalicelib.geocoding.api` chooses the backend."""
