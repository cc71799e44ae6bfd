"""Terms of the engine: a document's terms, a query's words, and the rule that matches one to the other.

A **term** is the Snowball stem of a folded word (:func:`chalicelib.text_analysis.analyzer.stem`);
a document is indexed under the distinct terms of its text fields. A query **word** matches a
term (:func:`kind`) when

* the term is the word's stem (``exact``);
* the word is the query's last word of at least :data:`MIN_PREFIX` letters (search as you type)
  and the term starts with the word or its stem, or the term starts the word and the rest is
  the unfinished start of an ending the stemmer removes (:data:`ENDINGS`: ``mentori`` finds
  ``mentor``, the stem of ``mentoring``; ``leader`` does not find ``lead``) (``prefix``);
* the word has at least :data:`MIN_TYPO_WORD` letters and the term is at Damerau-Levenshtein
  distance 1 from its stem with the same first letter (``typo``; the distance and the first-letter
  rule as Meilisearch and Typesense document them).

The vocabulary finds every term a word matches without reading the index's terms one by one:
prefix terms by a range read of the sorted term dictionary, typo terms through **symmetric
delete** keys (Wolf Garbe, SymSpell, 2012): a term is filed under its first :data:`DELETE_PREFIX`
characters and under each string made by deleting one of them but the first
(:func:`delete_keys`). Two strings of equal first letter at distance 1 always share a key (a
substitution or transposition: delete the same position or its neighbour in both; an insertion:
delete it from the longer; an edit past the prefix: the prefixes are equal). A search reads only
the keys its edits near the start need (:func:`typo_reads`): a term whose edit lies at or past
letter :data:`TYPO_RANGE` starts with the word's first :data:`TYPO_RANGE` letters and is found by
a range read of the sorted vocabulary, so the lookup misses no term :func:`kind` accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache

from rapidfuzz.distance import DamerauLevenshtein

from chalicelib.kernel.text import words as folded_words
from chalicelib.text_analysis.analyzer import is_stop_word, stem

#: Shortest last word that also matches the terms it starts (letters); shorter ones match exactly.
MIN_PREFIX = 2
#: Shortest term that matches a longer last word it starts (``mentor`` for ``mentori``).
MIN_TERM_PREFIX = 4
#: Endings the Snowball English stemmer removes whose unfinished start may follow a stem in a
#: word being typed (``mentori`` -> ``mentor`` + the start of ``ing``).
ENDINGS = ("ing", "ings", "ed", "ation", "ations", "ies", "ied", "ness", "ment", "ments", "ity", "ities", "ization")
#: Shortest query word corrected at distance 1 (letters).
MIN_TYPO_WORD = 5
#: Characters of a term its delete keys are made of (SymSpell's prefix length).
DELETE_PREFIX = 8
#: Leading letters a typo term shares with the word when its edit lies at or past them: such terms
#: come from one range read of the vocabulary; edits before them from :data:`TYPO_RANGE` delete
#: keys (:func:`typo_reads`). 3 keeps the range to the few terms of one three-letter start.
TYPO_RANGE = 3


class Kind(IntEnum):
    """How a word matched a term, best first; the value orders them."""

    EXACT = 0
    PREFIX = 1
    TYPO = 2


@dataclass(frozen=True)
class Word:
    """One query word: the folded ``text``, its ``stem``, whether it is the query's ``last`` word."""

    text: str
    stem: str
    last: bool

    @property
    def completes(self) -> bool:
        """True when the word also matches the terms it starts."""
        return self.last and len(self.text) >= MIN_PREFIX

    @property
    def corrects(self) -> bool:
        """True when the word matches terms one typo away."""
        return len(self.text) >= MIN_TYPO_WORD


def terms_of(text: str, language: str) -> list[str]:
    """The terms of ``text`` in order, repeats kept (one per word occurrence)."""
    return [stem(w, language) for w in folded_words(text)]


@lru_cache(maxsize=4096)
def _query_words(text: tuple[str, ...], language: str) -> tuple[Word, ...]:
    last = len(text) - 1
    kept = [(i, w) for i, w in enumerate(text) if i == last or not is_stop_word(w, language)]
    return tuple(Word(w, stem(w, language), i == last) for i, w in kept)


def query_words(words: Sequence[str], language: str) -> tuple[Word, ...]:
    """The query's folded, distinct ``words`` (in query order) as :class:`Word`; stop words are
    dropped unless last (the last may be the start of a longer word)."""
    return _query_words(tuple(dict.fromkeys(words)), language)


def kind(word: Word, term: str) -> Kind | None:
    """How ``word`` matches the document term ``term`` (module docstring), or ``None``."""
    if term == word.stem:
        return Kind.EXACT
    if word.completes and (
        term.startswith(word.text) or term.startswith(word.stem)
        or (len(term) >= MIN_TERM_PREFIX and word.text.startswith(term) and _unfinished(word.text[len(term):]))
    ):
        return Kind.PREFIX
    if word.corrects and term[:1] == word.stem[:1] and DamerauLevenshtein.distance(term, word.stem, score_cutoff=1) == 1:
        return Kind.TYPO
    return None


def _unfinished(rest: str) -> bool:
    """True when ``rest`` is the start, not the whole, of one of :data:`ENDINGS`."""
    return any(len(rest) < len(ending) and ending.startswith(rest) for ending in ENDINGS)


def best(word: Word, terms: Mapping[str, int]) -> list[tuple[str, Kind]]:
    """Every term of a document (``terms``: term -> impact) that ``word`` matches, with how."""
    found = []
    for term in terms:
        how = kind(word, term)
        if how is not None:
            found.append((term, how))
    return found


def delete_keys(term: str) -> frozenset[str]:
    """The symmetric-delete keys of a term or word stem: its first :data:`DELETE_PREFIX`
    characters and each string made by deleting one of them but the first."""
    head = term[:DELETE_PREFIX]
    return frozenset({head, *(head[:i] + head[i + 1:] for i in range(1, len(head)))})


def typo_reads(stem: str) -> tuple[frozenset[str], str]:
    """What finds every vocabulary term at distance 1 from ``stem`` with its first letter: the delete
    keys to read (terms filed under them, :func:`delete_keys`) and the start of a range read of the
    sorted vocabulary.

    An edit at position ``i`` (0-based, ``1 <= i < TYPO_RANGE``) is found under a key: a substitution,
    a letter missing from the term or a transposition of ``i`` and ``i + 1`` under the stem's first
    :data:`DELETE_PREFIX` letters without letter ``i`` (the term's own key, or its key without the
    same or the next letter); a letter inserted into the term under the stem's key without any
    deletion (the term without the inserted letter), which for a stem of :data:`DELETE_PREFIX`
    letters or more is cut to ``DELETE_PREFIX - 1`` letters (the term's first ``DELETE_PREFIX`` letters
    without the inserted one). Any edit at ``i >= TYPO_RANGE`` leaves the first :data:`TYPO_RANGE`
    letters, which the range read covers.

    Returns
    -------
    tuple of (frozenset of str, str)
        The keys (at most :data:`TYPO_RANGE`) and the range's start (the stem's first
        :data:`TYPO_RANGE` letters).
    """
    head = stem[:DELETE_PREFIX]
    inserted = head if len(head) < DELETE_PREFIX else head[:-1]
    return frozenset({inserted, *(head[:i] + head[i + 1:] for i in range(1, min(TYPO_RANGE, len(head))))}), stem[:TYPO_RANGE]


def prefixes_of(word: Word) -> tuple[str, ...]:
    """The beginnings of ``word`` that are terms it matches as a prefix (``mentor`` of ``mentori``)."""
    if not word.completes:
        return ()
    return tuple(word.text[:n] for n in range(MIN_TERM_PREFIX, len(word.text)) if _unfinished(word.text[n:]))
