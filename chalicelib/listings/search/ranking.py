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

from collections.abc import Sequence
from functools import lru_cache

from chalicelib.categories.models import Category, FieldType
from chalicelib.categories.registry import all_categories
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search.index import newest_key
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


@lru_cache(maxsize=2048)
def _field_words(listing_id: str, version: int, texts: tuple[tuple[str, str], ...]) -> dict[str, list[str]]:
    """The folded words of each scored field (cached per listing version: pages of one query share them)."""
    return {key: analyzer.words(text) for key, text in texts}


def fields_of(listing: ListingRecord, category: Category) -> dict[str, list[str]]:
    """Field key -> the folded words of the listing's scored fields (missing fields: no words)."""
    meta = listing.get("meta") or {}
    texts = tuple((key, str(meta.get(key) or "")) for key in field_specs(category))
    return _field_words(str(listing["listingId"]), int(listing.get("version") or 0), texts)


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
    analyzed: list[tuple[ListingRecord, scorer.Scored, dict[str, scorer.FieldSpec]]] = []
    for listing in listings:
        category = categories[listing["categoryKey"]]
        query = analyzer.query_terms(terms, category.language)
        analyzed.append((listing, scorer.analyze(fields_of(listing, category), query, category.language),
                         field_specs(category)))
    averages = scorer.average_lengths([doc for _, doc, _ in analyzed])
    idfs = [scorer.idf(documents, n) for n in holding]
    scored = [(listing, doc, scorer.bm25f(doc, specs, averages, idfs)) for listing, doc, specs in analyzed]
    scored.sort(key=lambda row: newest_key(row[0]), reverse=True)  # the tie-break, kept by the stable sort below
    scored.sort(key=lambda row: scorer.rank_key(row[1], row[2]))
    return [(listing, score) for listing, _, score in scored]
