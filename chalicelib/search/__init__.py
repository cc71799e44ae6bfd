"""The search engine: one home for every search of the service (docs/search.md, "The engine").

Domain-free: it knows posting lists, counters, sorted keys and geohash cells, never a listing,
a profile or a saved search (import contract ``search-engine`` in pyproject.toml). A domain
plugs in with two functions of its own: the posting keys of one of its items
(:class:`~chalicelib.search.postings.PostingKey` sets, filed by
:func:`~chalicelib.search.batch_writer.apply_batch`; with the covering projection derived from
them, :func:`~chalicelib.search.postings.register_projection`) and its matcher (does this item satisfy
this query), with which it verifies the candidates the engine returns. The engine reads
candidates and returns item ids; the domain services re-read and render them.

Modules:

* :mod:`~chalicelib.search.postings`: the posting store (entries, exact list sizes, per-item
  state; version-checked, idempotent application), and order-preserving number keys;
* :mod:`~chalicelib.search.counters`: exact counters of list indexes;
* :mod:`~chalicelib.search.keyset`: keyset pages of GSI lists;
* :mod:`~chalicelib.search.merge`: lazy newest-first k-way merge of sorted runs (unions);
* :mod:`~chalicelib.search.join`: zigzag (leapfrog) merge join of sorted lists (conjunctions),
  and the one-list read whose entries are checked on their covering projection;
* :mod:`~chalicelib.search.planner`: which list drives a conjunction over covering entries;
* :mod:`~chalicelib.search.buckets`: bucketed postings of number ranges;
* :mod:`~chalicelib.search.geo`: geohash coverings and distance bounds (nearest-first walks);
* :mod:`~chalicelib.search.batch_writer`: a stream batch of posting changes in a few calls.
"""
