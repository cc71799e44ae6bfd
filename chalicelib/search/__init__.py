"""The search engine (docs/search.md, "The pipeline"); it knows no domain (import contract
``search-engine`` in pyproject.toml).

The read pipeline and its index: :mod:`~chalicelib.search.analysis` (terms, the match rule,
symmetric-delete keys), :mod:`~chalicelib.search.index` (the index spec a domain supplies, the
layout of its lists, the idempotent writer), :mod:`~chalicelib.search.engine` (typed query,
plan, candidate lists, exact check, scorer, collector) and :mod:`~chalicelib.search.store` (the
storage port, in memory and on DynamoDB). Listing search runs on it.

The older posting store, still used by profile search and the saved searches' percolator:
:mod:`~chalicelib.search.postings`, :mod:`~chalicelib.search.batch_writer`,
:mod:`~chalicelib.search.join`, :mod:`~chalicelib.search.planner`,
:mod:`~chalicelib.search.statistics` and :mod:`~chalicelib.search.percolator`. Shared:
:mod:`~chalicelib.search.geo`, :mod:`~chalicelib.search.buckets`,
:mod:`~chalicelib.search.counters` and :mod:`~chalicelib.search.keyset` (pages of list GSIs).
"""
