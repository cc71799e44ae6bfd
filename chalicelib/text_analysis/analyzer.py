"""Text analysis of search: folding, words, Snowball stems, stop words.

Analysis (docs/search.md, "The match rule and the score"; the match rule itself is
:mod:`chalicelib.search.analysis`):

1. **Folding**: NFKD, combining marks dropped, ``str.casefold`` (:func:`chalicelib.kernel.text.fold`),
   HTML tags removed, words are runs of Unicode word characters (:func:`chalicelib.kernel.text.words`).
2. **Stemming**: the Snowball stemmer of the document's language (Porter 2 for English; M. F.
   Porter, "Snowball: A language for stemming algorithms", 2001) through PyStemmer, the C build
   of the Snowball project's stemmers. The same stemmer runs at index and query time.
3. **Stop words**: only a query's function words that are not its last word are dropped
   (:data:`STOP_WORDS`; "mentoring in zurich" asks for mentoring and Zürich). Documents keep
   every word, and the last query word is kept even when it is a stop word, because it may be
   the start of a longer word being typed ("the" -> "theatre").
"""

from __future__ import annotations

import threading
from functools import lru_cache

import Stemmer

from chalicelib.kernel.text import fold, words
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


def is_stop_word(word: str, language: str = DEFAULT_LANGUAGE) -> bool:
    """True when ``word`` (folded) is one of the language's :data:`STOP_WORDS`."""
    return word in STOP_WORDS.get(language, frozenset())


def any_stop_word(word: str) -> bool:
    """True when ``word`` is a stop word of any language (for callers that span languages)."""
    return any(word in stop for stop in STOP_WORDS.values())
