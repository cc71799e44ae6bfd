"""BM25F relevance: a document's score for a query, and the order of ranked results.

Score (S. Robertson, H. Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
Foundations and Trends in IR 3(4), 2009, section 3.6, the "simple BM25F"):

* per term t and field f, the weighted term frequency ``tf_f`` is the sum of the term's
  matching occurrences in f, each weighted by how it matched
  (:func:`chalicelib.text_analysis.analyzer.occurrence_weight`: an exact word 1, a stem or prefix
  less, a correction least);
* ``tf~ = sum_f w_f x tf_f / (1 - b_f + b_f x len_f / avglen_f)``, ``w_f`` the field's boost;
* ``score = sum_t idf(t) x tf~ / (k1 + tf~)``, ``idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))``
  with N the documents searched and n_t those holding the term;
* ``k1`` = :data:`K1` (1.2) and ``b`` = 0.75, the paper's usual starting points.

Order (:func:`rank_key`): more matched query words first, then fewer corrected (typo) words,
then the higher score, then the caller's tie-break (newest first). Putting matched words and
typos before the score is Meilisearch's ranking-rules order ("words", "typo", then relevance)
and is what guarantees that a document missing a query word never ranks above one holding all
of them, and a corrected match never above an exact one, whatever the term frequencies.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chalicelib.text_analysis.analyzer import MatchKind, QueryTerm, match_kind, occurrence_weight, stem

#: Term-frequency saturation (Robertson & Zaragoza 2009).
K1 = 1.2
#: Length normalisation per field when a field spec gives none.
B = 0.75


@dataclass(frozen=True)
class FieldSpec:
    """One scored field: its boost ``weight`` and its length normalisation ``b`` (0..1)."""

    weight: float
    b: float = B


@dataclass(frozen=True)
class Scored:
    """A document analyzed for one query."""

    #: Words per field.
    lengths: Mapping[str, int]
    #: Per query term (query order): field -> weighted term frequency.
    tf: Sequence[Mapping[str, float]]
    #: Per query term: its best match in the document (``None``: not matched).
    kinds: Sequence[MatchKind | None]

    @property
    def matched(self) -> int:
        """Query terms the document matches."""
        return sum(kind is not None for kind in self.kinds)

    @property
    def typos(self) -> int:
        """Query terms the document matches only through a correction."""
        return sum(kind == "typo" for kind in self.kinds)


_RANK = {"exact": 0, "stem": 1, "prefix": 2, "typo": 3}


def analyze(fields: Mapping[str, Sequence[str]], terms: Sequence[QueryTerm], language: str) -> Scored:
    """Term frequencies of ``terms`` in a document's ``fields`` (field -> its folded words in order).

    Ignored terms (stop words) count as matched with no frequency.
    """
    tf: list[dict[str, float]] = [{} for _ in terms]
    kinds: list[MatchKind | None] = [None] * len(terms)
    active = [(i, term, term.word[:1]) for i, term in enumerate(terms) if not term.ignored]
    for name, field_words in fields.items():
        for word, count in Counter(field_words).items():
            first = word[:1]
            for i, term, term_first in active:
                if term_first != first:  # every way of matching keeps the first letter: the cheap test first
                    continue
                kind = match_kind(term, word, stem(word, language))
                if kind is None:
                    continue
                tf[i][name] = tf[i].get(name, 0.0) + count * occurrence_weight(term, word, kind)
                best = kinds[i]
                if best is None or _RANK[kind] < _RANK[best]:
                    kinds[i] = kind
    for i, term in enumerate(terms):
        if term.ignored:
            kinds[i] = "exact"
    return Scored({name: len(ws) for name, ws in fields.items()}, tf, kinds)


def idf(documents: int, holding: int) -> float:
    """BM25's idf, ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (never negative); ``holding`` is capped at N."""
    holding = min(max(holding, 0), max(documents, 0))
    return math.log(1.0 + (documents - holding + 0.5) / (holding + 0.5))


def average_lengths(documents: Sequence[Scored]) -> dict[str, float]:
    """Mean words per field over ``documents`` (at least 1 word, so an empty field never divides by 0)."""
    totals: dict[str, float] = {}
    for doc in documents:
        for name, length in doc.lengths.items():
            totals[name] = totals.get(name, 0.0) + length
    return {name: max(1.0, total / max(1, len(documents))) for name, total in totals.items()}


def bm25f(doc: Scored, specs: Mapping[str, FieldSpec], avg_lengths: Mapping[str, float], idfs: Sequence[float],
          k1: float = K1) -> float:
    """The BM25F score of ``doc`` (see the module docstring); ``idfs`` per query term, in query order."""
    total = 0.0
    for term_tf, term_idf in zip(doc.tf, idfs, strict=True):
        pseudo = 0.0
        for name, frequency in term_tf.items():
            spec = specs.get(name)
            if spec is None:
                continue
            norm = 1.0 - spec.b + spec.b * doc.lengths.get(name, 0) / avg_lengths.get(name, 1.0)
            pseudo += spec.weight * frequency / norm
        total += term_idf * pseudo / (k1 + pseudo)
    return total


def rank_key(doc: Scored, score: float) -> tuple[int, int, float]:
    """Sort key, ascending = better: ``(-matched words, typos, -score)``; callers append their tie-break."""
    return (-doc.matched, doc.typos, -score)
