"""Listings: create, read, update, pause/resume; meta validated against the category; listing search.

Deleting a listing also rejects its requests, so it is a workflow (:mod:`chalicelib.workflows`).

The package owns the Listings table. Other packages reach its data only through :mod:`chalicelib.listings.api`
(or :mod:`chalicelib.listings.service`), never through its repository or the table's name
(``docs/architecture.md``, "Table ownership"; the import contract ``listings-own-their-tables``).
The package itself holds no code, so importing ``chalicelib.listings.records`` loads no storage
code (``bench/cold_start.py``).
"""
