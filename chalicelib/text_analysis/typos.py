"""Typo tolerance: how many typos a query word may carry, and which words are its corrections.

Rules (docs/search.md, "Typo tolerance"), as Meilisearch and Typesense document theirs:

* a word of fewer than 5 characters is never corrected; 5 to 8 characters match at
  Damerau-Levenshtein distance 1, 9 or more at 2 (:func:`max_typos`);
* the first letter is never a typo (short words and long ones alike: a rule stricter than the
  issue's "never on the first letter for short words", and what lets the
  saved-search percolator be partitioned by first letter);
* an exact (or stem) match always ranks above a corrected one (the scorer's sort key);
* a query word also corrects to a **stem** (:func:`is_stem_typo`): when a beginning of it, cut
  at most :data:`MAX_SUFFIX` characters before its end, is within the distance of a stem of at
  least :data:`MIN_STEM` (5) characters ("desinger" -> "design", so "designers" and "design" match
  as "designer" does; "devloppers" -> "develop"). This is the correction a stemming engine
  needs: the word a seeker meant is often not in the listings in that form.

Distance: true Damerau-Levenshtein (insertions, deletions, substitutions and transpositions of
adjacent characters; F. J. Damerau, "A technique for computer detection and correction of
spelling errors", CACM 1964) from ``rapidfuzz.distance.DamerauLevenshtein`` (imported on first use).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

#: Shortest word corrected at distance 1, and at distance 2 (characters).
ONE_TYPO_FROM = 5
TWO_TYPOS_FROM = 9
#: Longest ending cut off a query word before comparing it with a stem (an inflection: -ers, -ing).
MAX_SUFFIX = 4
#: Shortest stem a query word may be corrected to (shorter ones would match too much).
MIN_STEM = 5
#: Shortest vocabulary entry worth keeping: the shortest correction of a 5-letter word.
SHORTEST_CORRECTION = ONE_TYPO_FROM - 1


@cache
def _distance() -> Any:
    """rapidfuzz's Damerau-Levenshtein, imported on first use (it costs tens of ms at a cold start)."""
    from rapidfuzz.distance import DamerauLevenshtein

    return DamerauLevenshtein


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
    return bool(_distance().distance(term, word, score_cutoff=limit) <= limit)


def is_stem_typo(term: str, stem: str) -> bool:
    """True when a beginning of ``term`` (all of it but at most :data:`MAX_SUFFIX` characters) is
    within :func:`max_typos` of ``stem`` (at least :data:`MIN_STEM` characters, same first letter)."""
    limit = max_typos(term)
    if not limit or len(stem) < MIN_STEM or stem[:1] != term[:1]:
        return False
    for length in range(max(len(stem) - limit, len(term) - MAX_SUFFIX, 1), min(len(stem) + limit, len(term)) + 1):
        if _distance().distance(term[:length], stem, score_cutoff=limit) <= limit:
            return True
    return False


def corrections(term: str, vocabulary: Iterable[str]) -> list[str]:
    """The entries of ``vocabulary`` (words and stems) that correct ``term`` (:func:`is_typo` or
    :func:`is_stem_typo`), closest first, then alphabetical."""
    found = [w for w in set(vocabulary) if is_typo(term, w) or is_stem_typo(term, w)]
    return sorted(found, key=lambda w: (_distance().distance(term, w), w))


def bucket(word: str) -> tuple[str, int]:
    """The dictionary bucket of a vocabulary word: (first letter, length)."""
    return word[:1], len(word)


def buckets_of(term: str) -> list[tuple[str, int]]:
    """The buckets holding every possible correction of ``term`` (empty when it takes no typos):
    its first letter and the lengths ``len - max_typos - MAX_SUFFIX`` to ``len + max_typos``
    (at least :data:`SHORTEST_CORRECTION`): 6 to 8 buckets for 5-8 characters, 9 from 9 characters."""
    limit = max_typos(term)
    if not limit:
        return []
    shortest = max(SHORTEST_CORRECTION, len(term) - limit - MAX_SUFFIX)
    return [(term[:1], n) for n in range(shortest, len(term) + limit + 1)]
