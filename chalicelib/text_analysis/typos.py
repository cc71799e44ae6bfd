"""Typo tolerance: how many typos a query word may carry, and which words are its corrections.

Rules (docs/search.md, "Typo tolerance"), as Meilisearch and Typesense document theirs:

* a word of fewer than 5 characters is never corrected; 5 to 8 characters match at
  Damerau-Levenshtein distance 1, 9 or more at 2 (:func:`max_typos`);
* the first letter is never a typo (short words and long ones alike: a rule stricter than the
  issue's "never on the first letter for short words", and what lets a typo dictionary and the
  saved-search percolator be partitioned by first letter);
* an exact (or stem) match always ranks above a corrected one (the scorer's sort key).

Distance: true Damerau-Levenshtein (insertions, deletions, substitutions and transpositions of
adjacent characters; F. J. Damerau, "A technique for computer detection and correction of
spelling errors", CACM 1964) from ``rapidfuzz.distance.DamerauLevenshtein``.

The typo dictionary (:mod:`chalicelib.typo_dictionary`) keeps a category's vocabulary in
buckets of (first letter, length) (:func:`bucket`); a query word's candidates lie in the
buckets of its first letter and of the lengths within its distance (:func:`buckets_of`):
``2 x max_typos + 1`` buckets, so 3 item reads for a word of 5-8 characters and 5 for a longer one.
"""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz.distance import DamerauLevenshtein

#: Shortest word corrected at distance 1, and at distance 2 (characters).
ONE_TYPO_FROM = 5
TWO_TYPOS_FROM = 9
#: Shortest vocabulary word worth keeping: the shortest correction of a 5-letter word.
SHORTEST_CORRECTION = ONE_TYPO_FROM - 1


def max_typos(word: str) -> int:
    """Typos tolerated in a folded query ``word``: 0 (< 5 characters), 1 (5-8) or 2 (9 or more)."""
    if len(word) >= TWO_TYPOS_FROM:
        return 2
    return 1 if len(word) >= ONE_TYPO_FROM else 0


def is_typo(term: str, word: str) -> bool:
    """True when ``word`` is a correction of ``term``: not equal, same first letter, and within
    :func:`max_typos` of ``term`` by Damerau-Levenshtein distance."""
    limit = max_typos(term)
    if not limit or word == term or word[:1] != term[:1] or abs(len(word) - len(term)) > limit:
        return False
    return bool(DamerauLevenshtein.distance(term, word, score_cutoff=limit) <= limit)


def corrections(term: str, vocabulary: Iterable[str]) -> list[str]:
    """The words of ``vocabulary`` that correct ``term`` (:func:`is_typo`), closest first, then alphabetical."""
    found = [w for w in set(vocabulary) if is_typo(term, w)]
    return sorted(found, key=lambda w: (DamerauLevenshtein.distance(term, w), w))


def bucket(word: str) -> tuple[str, int]:
    """The dictionary bucket of a vocabulary word: (first letter, length)."""
    return word[:1], len(word)


def buckets_of(term: str) -> list[tuple[str, int]]:
    """The buckets holding every possible correction of ``term`` (empty when it takes no typos)."""
    limit = max_typos(term)
    if not limit:
        return []
    return [(term[:1], n) for n in range(len(term) - limit, len(term) + limit + 1)]
