"""The search engine: one home for every search of the service (issue 20; docs/search.md, "The engine").

Domain-free: it knows posting lists, counters, sorted keys and geohash cells, never a listing,
a profile or a saved search (import contract ``search-engine`` in pyproject.toml). A domain
plugs in through :mod:`chalicelib.search.spec`: an :class:`~chalicelib.search.spec.IndexSpec`
(the posting keys of one of its items, and how a list sorts) and a
:class:`~chalicelib.search.spec.Matcher` (does this item satisfy this query). The engine
reads candidates and returns item ids / records; the domain services render them.

Modules:

* :mod:`~chalicelib.search.postings`: the posting store (entries, exact list sizes, per-item
  state; version-checked, idempotent application), and order-preserving number keys;
* :mod:`~chalicelib.search.counters`: exact counters of list indexes;
* :mod:`~chalicelib.search.keyset`: keyset pages of GSI lists;
* :mod:`~chalicelib.search.merge`: lazy newest-first k-way merge of sorted runs (unions);
* :mod:`~chalicelib.search.join`: zigzag (leapfrog) merge join of sorted lists (conjunctions);
* :mod:`~chalicelib.search.buckets`: bucketed postings of number ranges;
* :mod:`~chalicelib.search.geo`: geohash coverings and distance bounds (nearest-first walks).
"""
