"""The one text analyzer of search: folding, words, Snowball stems, stop words, query terms.

Analysis (docs/search.md, "The match rule and the score"):

1. **Folding**: NFKD, combining marks dropped, ``str.casefold`` (:func:`chalicelib.text.fold`),
   HTML tags removed, words are runs of Unicode word characters (:func:`chalicelib.text.words`).
2. **Stemming**: the Snowball stemmer of the document's language (Porter 2 for English; M. F.
   Porter, "Snowball: A language for stemming algorithms", 2001) through PyStemmer, the C build
   of the Snowball project's stemmers. The same stemmer runs at index and query time.
3. **Exact words are kept** next to the stems: a query word equal to a document word counts
   more than one that only shares its stem (:func:`occurrence_weight`).
4. **Stop words**: only a query's function words that are not its last word are dropped
   (:data:`STOP_WORDS`; "mentoring in zurich" asks for mentoring and Zürich). Documents keep
   every word, and the last query word is kept even when it is a stop word, because it may be
   the start of a longer word being typed ("the" -> "theatre").
5. **Prefixes**: the last query word also matches the words it starts (search as you type).

A query word matches a document word (:func:`match_kind`) when they are equal (``exact``),
have the same stem and the same first letter (``stem``), the query word is the last one and
starts the document word (``prefix``), or the query word is within the typo distance of the
word or of its stem (``typo``; :mod:`chalicelib.text_analysis.typos`). Every rule keeps the first letter, which is
what lets the saved-search percolator file a query under its first letter.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import Stemmer

from chalicelib.text import fold, words
from chalicelib.text_analysis import typos
from chalicelib.text_analysis.languages import DEFAULT_LANGUAGE, LANGUAGES

__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "fold", "words"]

#: Function words dropped from a query when they are not its last word. Deliberately short:
#: words such as "not", "without", "no" or "remote" change a query's meaning and are kept.
#: English from the Snowball English stop list (its articles, prepositions and conjunctions).
STOP_WORDS: dict[str, frozenset[str]] = {
    "english": frozenset({
        "a", "an", "and", "the", "of", "for", "in", "on", "at", "to", "by", "with", "from", "or", "as", "into",
        "onto", "per", "via", "is", "are", "be",
    }),
}

MatchKind = Literal["exact", "stem", "prefix", "typo"]
#: Weight of one occurrence by how it matched: an exact word counts fully, a stem or prefix
#: match by how close its length is (see :func:`occurrence_weight`), a corrected one least.
TYPO_WEIGHT = 0.3

_local = threading.local()


def _stemmer(language: str) -> Stemmer.Stemmer:
    """The thread's stemmer of ``language`` (PyStemmer objects are not thread-safe)."""
    stemmers: dict[str, Stemmer.Stemmer] = _local.__dict__.setdefault("stemmers", {})
    if language not in stemmers:
        stemmers[language] = Stemmer.Stemmer(language)
    return stemmers[language]


@lru_cache(maxsize=200_000)
def stem(word: str, language: str = DEFAULT_LANGUAGE) -> str:
    """The Snowball stem of a folded ``word`` in ``language`` (e.g. ``engineers`` -> ``engin``).

    Raises
    ------
    KeyError
        ``language`` is not one of :data:`LANGUAGES`.
    """
    if language not in LANGUAGES:
        raise KeyError(f"no stemmer for language {language!r}")
    return str(_stemmer(language).stemWord(word))


def stems(text_words: Iterable[str], language: str = DEFAULT_LANGUAGE) -> set[str]:
    """The distinct stems of folded words (the terms a document is indexed under)."""
    return {stem(w, language) for w in text_words}


def is_stop_word(word: str, language: str = DEFAULT_LANGUAGE) -> bool:
    """True when ``word`` (folded) is one of the language's :data:`STOP_WORDS`."""
    return word in STOP_WORDS.get(language, frozenset())


def any_stop_word(word: str) -> bool:
    """True when ``word`` is a stop word of any language (for callers that span languages)."""
    return any(word in stop for stop in STOP_WORDS.values())


@dataclass(frozen=True)
class QueryTerm:
    """One analyzed query word."""

    #: The folded word as typed.
    word: str
    #: Its stem in the document language.
    stem: str
    #: True for the last query word: it also matches the words it starts.
    prefix: bool
    #: Damerau-Levenshtein distance tolerated (:func:`chalicelib.text_analysis.typos.max_typos`).
    max_typos: int
    #: A stop word that is not the last word: it matches every document and adds no score.
    ignored: bool = False


@lru_cache(maxsize=4096)
def _query_terms(terms: tuple[str, ...], language: str) -> tuple[QueryTerm, ...]:
    last = len(terms) - 1
    return tuple(
        QueryTerm(
            word=t, stem=stem(t, language), prefix=i == last, max_typos=typos.max_typos(t),
            ignored=i != last and is_stop_word(t, language),
        )
        for i, t in enumerate(terms)
    )


def query_terms(terms: Sequence[str], language: str = DEFAULT_LANGUAGE) -> tuple[QueryTerm, ...]:
    """Analyze a query's folded, de-duplicated words (in query order) for ``language``."""
    return _query_terms(tuple(terms), language)


@dataclass(frozen=True)
class Vocabulary:
    """A document's distinct folded words and their stems, prepared for matching."""

    #: The distinct words.
    words: frozenset[str]
    #: Stem -> the words with that stem.
    by_stem: dict[str, tuple[str, ...]]
    #: First letter -> the words starting with it (the only ones a correction may be).
    by_first: dict[str, tuple[str, ...]]
    #: First letter -> the stems starting with it (for corrections to a stem).
    stems_by_first: dict[str, tuple[str, ...]]
    #: ``" " + words joined by " "``: a prefix test is one substring search.
    haystack: str


@lru_cache(maxsize=4096)
def vocabulary(text: str, language: str = DEFAULT_LANGUAGE) -> Vocabulary:
    """The :class:`Vocabulary` of a space-separated string of folded words (cached by text)."""
    distinct = frozenset(text.split())
    by_stem: dict[str, list[str]] = {}
    by_first: dict[str, list[str]] = {}
    for w in distinct:
        by_stem.setdefault(stem(w, language), []).append(w)
        by_first.setdefault(w[:1], []).append(w)
    stems_by_first: dict[str, list[str]] = {}
    for s in by_stem:
        stems_by_first.setdefault(s[:1], []).append(s)
    return Vocabulary(
        distinct, {s: tuple(ws) for s, ws in by_stem.items()}, {f: tuple(ws) for f, ws in by_first.items()},
        {f: tuple(ss) for f, ss in stems_by_first.items()}, " " + " ".join(sorted(distinct)),
    )


def match_kind(term: QueryTerm, word: str, word_stem: str) -> MatchKind | None:
    """How query ``term`` matches one document ``word`` (folded; ``word_stem`` its stem), if at all.

    Rules, best first: ``exact`` (equal), ``stem`` (equal stems and first letters), ``prefix``
    (the last query word starts the word), ``typo`` (:func:`chalicelib.text_analysis.typos.is_typo`
    of the word or :func:`~chalicelib.text_analysis.typos.is_stem_typo` of its stem).
    """
    if word == term.word:
        return "exact"
    if word_stem == term.stem and word[:1] == term.word[:1]:
        return "stem"
    if term.prefix and word.startswith(term.word):
        return "prefix"
    if term.max_typos and (typos.is_typo(term.word, word) or typos.is_stem_typo(term.word, word_stem)):
        return "typo"
    return None


def best_match(term: QueryTerm, vocab: Vocabulary) -> MatchKind | None:
    """The best way ``term`` matches any word of ``vocab`` (``exact`` > ``stem`` > ``prefix`` > ``typo``)."""
    if term.word in vocab.words:
        return "exact"
    if any(w[:1] == term.word[:1] for w in vocab.by_stem.get(term.stem, ())):
        return "stem"
    if term.prefix and f" {term.word}" in vocab.haystack:
        return "prefix"
    first = term.word[:1]
    if term.max_typos and (any(typos.is_typo(term.word, w) for w in vocab.by_first.get(first, ()))
                           or any(typos.is_stem_typo(term.word, s) for s in vocab.stems_by_first.get(first, ()))):
        return "typo"
    return None


def occurrence_weight(term: QueryTerm, word: str, kind: MatchKind) -> float:
    """The weight of one matching occurrence in a field's term frequency (0..1).

    ``exact`` 1; ``stem`` and ``prefix`` ``0.5 + 0.5 x shorter / longer`` length (so
    "engineers" answers "engineer" better than "engineering" does); ``typo``
    :data:`TYPO_WEIGHT` for a corrected word, half of it for a word whose stem is a correction.
    Exact words thereby weigh more than stems, as the issue asks
    ("index stems and keep the exact words for exact-match boosts").
    """
    if kind == "exact":
        return 1.0
    if kind == "typo":  # a corrected word counts more than a word whose stem is a correction
        return TYPO_WEIGHT if typos.is_typo(term.word, word) else TYPO_WEIGHT / 2
    short, long_ = sorted((len(term.word), len(word)))
    return 0.5 + 0.5 * short / long_
