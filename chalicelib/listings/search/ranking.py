"""Relevance ranking of listing search results (pure; the BM25F scorer applied to listings).

Scored fields and their boosts (BM25F ``w_f``; docs/search.md, "Relevance"): the ``title``
3.0, every other ``text`` field 1.5, ``richtext`` fields (the description) 1.0, ``location``
fields (the place's name) 0.5; ``b`` = 0.75 for all. The title weighs most because it is the
listing's own summary: a word there says more about what it is than one in its description.

Statistics: ``N`` is the number of ACTIVE listings in the searched categories (the counters),
``n_t`` the size of the term's stem list (the posting-list sizes the planner read), and the
average field lengths are those of the listings scored (the score window: they approximate
the category's, and need no counters kept per field).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from chalicelib.categories.models import Category, FieldType
from chalicelib.categories.registry import all_categories
from chalicelib.listings.index import newest_key
from chalicelib.listings.records import ListingRecord
from chalicelib.text_analysis import analyzer, scorer

#: Boost of the ``title`` field and of each field type.
TITLE_WEIGHT = 3.0
TYPE_WEIGHTS = {FieldType.TEXT: 1.5, FieldType.RICHTEXT: 1.0, FieldType.LOCATION: 0.5}


def field_specs(category: Category) -> dict[str, scorer.FieldSpec]:
    """The scored fields of a category and their :class:`~chalicelib.text_analysis.scorer.FieldSpec`."""
    specs: dict[str, scorer.FieldSpec] = {}
    for f in category.fields:
        if f.type in TYPE_WEIGHTS:
            specs[f.key] = scorer.FieldSpec(TITLE_WEIGHT if f.key == "title" else TYPE_WEIGHTS[f.type])
    return specs


def fields_of(listing: ListingRecord, category: Category) -> dict[str, list[str]]:
    """Field key -> the folded words of the listing's scored fields (missing fields: no words)."""
    meta = listing.get("meta") or {}
    return {key: analyzer.words(str(meta.get(key) or "")) for key in field_specs(category)}


#: Analyses kept per process: (listingId, version, terms) -> Scored (the pages of one query, and a
#: warm Lambda's repeated queries, analyze each listing version once).
CACHE_SIZE = 4096
_cache: OrderedDict[tuple[str, int, tuple[str, ...]], scorer.Scored] = OrderedDict()
_lock = threading.Lock()  # the local stack serves requests on threads


def analyzed(listing: ListingRecord, terms: list[str], category: Category) -> scorer.Scored:
    """:func:`chalicelib.text_analysis.scorer.analyze` of a listing for ``terms`` (cached per listing
    version and query: a version's fields never change)."""
    key = (str(listing["listingId"]), int(listing.get("version") or 0), tuple(terms))
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    query = analyzer.query_terms(terms, category.language)
    found = scorer.analyze(fields_of(listing, category), query, category.language)
    with _lock:
        _cache[key] = found
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return found


def rank(
    terms: list[str], listings: Sequence[ListingRecord], documents: int, holding: Sequence[int],
) -> list[tuple[ListingRecord, float]]:
    """``listings`` (each matching the query) ordered by relevance, each with its BM25F score.

    Parameters
    ----------
    terms:
        The query's folded ``q`` terms, in query order.
    listings:
        The listings to rank (the score window).
    documents:
        N: ACTIVE listings in the searched categories.
    holding:
        n_t per term (query order): listings holding the term's stem.

    Returns
    -------
    list of (listing, score)
        Best first: more matched words, fewer corrected words, higher score, then newest first.
    """
    categories = all_categories()
    docs: list[tuple[ListingRecord, scorer.Scored, dict[str, scorer.FieldSpec]]] = []
    for listing in listings:
        category = categories[listing["categoryKey"]]
        docs.append((listing, analyzed(listing, terms, category), field_specs(category)))
    averages = scorer.average_lengths([doc for _, doc, _ in docs])
    idfs = [scorer.idf(documents, n) for n in holding]
    scored = [(listing, doc, scorer.bm25f(doc, specs, averages, idfs)) for listing, doc, specs in docs]
    scored.sort(key=lambda row: newest_key(row[0]), reverse=True)  # the tie-break, kept by the stable sort below
    scored.sort(key=lambda row: scorer.rank_key(row[1], row[2]))
    return [(listing, score) for listing, _, score in scored]
