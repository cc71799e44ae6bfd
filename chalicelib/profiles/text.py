"""Profile ``q`` matching: the shared analyzer (:mod:`chalicelib.text_analysis.analyzer`) on profiles.

A ``q`` word matches a profile word (display name, headline, skills: the folded
:attr:`~chalicelib.profiles.facets.Facets.words`) when it is the same word, has the same
Snowball stem in :data:`chalicelib.profiles.index.LANGUAGE` (English: profiles have no category
to declare another) and the same first letter, or, for the last ``q`` word, starts it (search
as you type). A function word that is not the last ``q`` word (``"engineer in berlin"``) is
dropped, as in listing search (:data:`chalicelib.text_analysis.analyzer.STOP_WORDS`).

There are **no typo corrections** here (the analyzer's ``typo`` rule is switched off): listing
search finds a correction's listings through the vocabulary of its index
(:mod:`chalicelib.search.index`); profiles have no such vocabulary, and the planner may only
read lists that hold every match of a word. See docs/search.md, "Profile search".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from functools import lru_cache

from chalicelib.profiles.index import LANGUAGE
from chalicelib.text_analysis import analyzer
from chalicelib.text_analysis.analyzer import QueryTerm


def query_terms(terms: Sequence[str]) -> tuple[QueryTerm, ...]:
    """The analyzed words of a profile ``q`` (``terms``: its folded words, :func:`chalicelib.text.words`).

    Repeated words count once (the first occurrence keeps its place); the last word is the
    prefix one; ``max_typos`` is 0 for every word (see the module docstring).
    """
    return _analyzed(tuple(dict.fromkeys(terms)))


@lru_cache(maxsize=1024)
def _analyzed(terms: tuple[str, ...]) -> tuple[QueryTerm, ...]:
    """:func:`query_terms` of distinct words, cached: the matcher runs once per candidate."""
    return tuple(dataclasses.replace(term, max_typos=0) for term in analyzer.query_terms(terms, LANGUAGE))


def searched(terms: Sequence[str]) -> tuple[QueryTerm, ...]:
    """The :func:`query_terms` that restrict a search (a dropped stop word matches every profile)."""
    return tuple(term for term in query_terms(terms) if not term.ignored)


def matches_text(profile_words: Collection[str], terms: Sequence[str]) -> bool:
    """True when every ``q`` word (folded ``terms``) matches a word of ``profile_words`` (folded).

    The rule is :func:`chalicelib.text_analysis.analyzer.best_match` without corrections:
    ``exact``, ``stem`` or (last word) ``prefix``.
    """
    wanted = searched(terms)
    if not wanted:
        return True
    vocab = analyzer.vocabulary(" ".join(sorted(profile_words)), LANGUAGE)
    return all(analyzer.best_match(term, vocab) is not None for term in wanted)
