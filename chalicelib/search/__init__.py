"""The search engine (docs/search.md, "The pipeline"); it knows no domain (import contract
``search-engine`` in pyproject.toml).

The read pipeline and its index: :mod:`~chalicelib.search.analysis` (terms, the match rule,
typo keys), :mod:`~chalicelib.search.index` (the index spec a domain supplies, the
layout of its lists, the idempotent writer), :mod:`~chalicelib.search.engine` (typed query,
plan, candidate lists, exact check, scorer, collector) and :mod:`~chalicelib.search.store` (the
storage port, in memory and on DynamoDB). Listing search and profile search run on it.

Beside it: :mod:`~chalicelib.search.percolator` (the saved searches' lookup of the searches a
listing may match), :mod:`~chalicelib.search.geo` (geohash cells and distances),
:mod:`~chalicelib.search.buckets` (number buckets), :mod:`~chalicelib.search.counters` and
:mod:`~chalicelib.search.keyset` (counted pages of list GSIs).
"""
