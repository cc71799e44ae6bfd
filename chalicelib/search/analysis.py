"""Terms of the engine: a document's terms, a query's words, and the rule that matches one to the other.

A **term** is the Snowball stem of a folded word (:func:`chalicelib.text_analysis.analyzer.stem`);
a document is indexed under the distinct terms of its text fields. A query **word** matches a
term (:func:`kind`) when

* the term is the word's stem (``exact``);
* the word is the query's last word of at least :data:`MIN_PREFIX` letters (search as you type)
  and the term starts with the word, or with its stem followed by an ending the stemmer makes
  (``prefix``: a completion, ``teaching`` finds ``teacher``; ``tens``, stem ``ten``, does not
  find ``tenni``, the stem of "tennis"), or the term starts the word and the rest is the
  unfinished start of an ending the stemmer removes (``unfinished``; :data:`ENDINGS`: ``mentori``
  finds ``mentor``, the stem of ``mentoring``; ``leader`` does not find ``lead``);
* the word has at least :data:`MIN_TYPO_WORD` letters and the term is at Damerau-Levenshtein
  distance 1 from its stem with the same first letter (``typo``; the distance and the first-letter
  rule as Meilisearch and Typesense document them), or the word is the term followed by one of
  :data:`ENDINGS` with one edit, which the stemmer could not remove (``apartmnet`` finds
  ``apart``, the stem of ``apartment``; also ``typo``);
* the word has at least :data:`MIN_TYPO2_WORD` letters and the term is at distance 2 from its
  stem with the same first :data:`TYPO_RANGE` letters, or with a typo key in the partition of one
  of the word's key shapes (one edit at the second or third letter, the other past the sixth:
  ``acountnat`` finds ``account``) (``typo2``: Meilisearch's default word
  sizes for one and two typos, 5 and 9; the unchanged start is Lucene's ``FuzzyQuery``
  ``prefixLength``, which the Elasticsearch guide's "Fuzzy query" section suggests at 3 since
  most spelling errors fall toward the end of a word); such a word is also compared with the term
  followed by each of :data:`INFLECTIONS` (the words as written, which Meilisearch and Typesense
  correct): one edit from one of these forms is ``typo``, two are ``typo2`` (``restuarnats``, whose
  stem is 4 edits from ``restaur``, is 2 from "restaurants"); as the last word, it also matches
  at that distance a term that completes a correction (a start of the term at distance 2 or less,
  followed by an ending the stemmer makes: ``photogrpaer`` finds ``photographi``, "photography").

The vocabulary finds every term a word matches without reading the index's terms one by one:
prefix terms by a range read of the sorted term dictionary, typo terms (Damerau-Levenshtein
distance 1, same first letter) in two parts. A term whose edit lies at or past letter
:data:`TYPO_RANGE` starts with the word's first :data:`TYPO_RANGE` letters and comes from a range
read of the sorted vocabulary. The others are found under **one typo key** per term
(:func:`typo_key`, filed in the partition of its first :data:`TYPO_PARTITION` letters,
:func:`typo_partition`): the term without its second and third letters, a single deletion
neighbourhood of positions 1 and 2 (after Wolf Garbe's symmetric delete, SymSpell, 2012, which
files every deletion). A substitution or transposition among letters 1 and 2 leaves that key
unchanged; a letter inserted at 1 or 2 shifts the rest by one, a letter deleted there by one
the other way, and the transposition of letters 2 and 3 moves letter 2 into the key, so the
word reads the keys of those four shapes (:func:`typo_reads`) and the lookup misses no term
:func:`kind` accepts. One key per term instead of one per deleted letter: a term new to the
vocabulary costs one write for its typo lookup, not eight. A term at distance 2 keeps the word's
first :data:`TYPO_RANGE` letters, so the same range read finds it, or its key keeps the partition
of one of the word's shapes, which a word correcting twice reads whole (:func:`typo_lookups`):
distance 2 reads no more keys.
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
#: Endings the Snowball English stemmer removes (steps 1 to 4 of Porter 2, alone or with a plural
#: ``s``: https://snowballstem.org/algorithms/english/stemmer.html): a term followed by one is a
#: form of it as written (:func:`_inflected_distance`), and a term that is a stem followed by one
#: is a form of that stem (:func:`_derived`). Wider than :data:`ENDINGS` (``er`` too): a written
#: form counts only for a word of :data:`MIN_TYPO2_WORD` letters and with an edit.
INFLECTIONS = ("s", "es", "ed", "ing", "ly", *(ending + plural for ending in (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate", "ity", "ous",
    "ive", "ize", "ion", "ation", "ful", "ness", "ative") for plural in ("", "s")))
#: Fewest letters of a misspelt ending after a term (:func:`kind`).
MIN_MISSPELT_ENDING = 3
#: Shortest query word corrected at distance 1 (letters; Meilisearch's ``minWordSizeForTypos.oneTypo``).
MIN_TYPO_WORD = 5
#: Shortest query word corrected at distance 2 (letters; Meilisearch's ``minWordSizeForTypos.twoTypos``).
MIN_TYPO2_WORD = 9
#: Leading letters a typo term shares with the word when its edit lies at or past them: such terms
#: come from one range read of the vocabulary; edits before them from the typo keys
#: (:func:`typo_reads`). 3 keeps the range to the few terms of one three-letter start.
TYPO_RANGE = 3
#: Typo keys a word reads at most (:func:`typo_reads`).
TYPO_KEYS = 4
#: Letters of a typo key that name the partition it is filed in (:func:`typo_partition`): the
#: term's first and its fourth to sixth, so that the four partitions a long word reads whole hold
#: few terms as the vocabulary grows (docs/benchmarks.md, "Two typos, one of them early").
TYPO_PARTITION = 4


class Kind(IntEnum):
    """How a word matched a term, best first; the value orders them."""

    EXACT = 0
    PREFIX = 1
    UNFINISHED = 2
    TYPO = 3
    TYPO2 = 4

    @property
    def edits(self) -> int:
        """The corrections (Damerau-Levenshtein edits) the match makes: 1 for ``TYPO``, 2 for ``TYPO2``."""
        return {Kind.TYPO: 1, Kind.TYPO2: 2}.get(self, 0)


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

    @property
    def corrects_twice(self) -> bool:
        """True when the word also matches terms two typos away (that keep its first letters)."""
        return len(self.text) >= MIN_TYPO2_WORD


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
    if word.completes:
        if term.startswith(word.text) or (term.startswith(word.stem) and _derived(term[len(word.stem):])):
            return Kind.PREFIX
        if len(term) >= MIN_TERM_PREFIX and word.text.startswith(term) and _unfinished(word.text[len(term):]):
            return Kind.UNFINISHED
    if word.corrects and term[:1] == word.stem[:1]:
        return _correction(word, term)
    return None


def _correction(word: Word, term: str) -> Kind | None:
    """``TYPO``, ``TYPO2`` or ``None`` for a correcting ``word`` and a ``term`` with its first letter
    (the typo rules of the module docstring)."""
    twice = word.corrects_twice and (term[:TYPO_RANGE] == word.stem[:TYPO_RANGE]
                                     or typo_partition(typo_key(term)) in _shape_partitions(word.stem))
    distance = DamerauLevenshtein.distance(term, word.stem, score_cutoff=2 if twice else 1)
    if twice and distance > 1:
        distance = min(distance, _inflected_distance(word, term))
    if twice and distance > 1 and word.completes:
        distance = min(distance, _completed_distance(word, term, 2))
    if distance == 1 or _misspelt_ending(word, term):
        return Kind.TYPO
    return Kind.TYPO2 if twice and distance == 2 else None


def _misspelt_ending(word: Word, term: str) -> bool:
    """True when ``word`` is ``term`` followed by one of :data:`ENDINGS` with one edit, in at least
    :data:`MIN_MISSPELT_ENDING` letters (``apartmnet``: ``apart`` + ``mnet`` for ``ment``). The
    stemmer cannot remove a misspelt ending, so the word's stem (``apartmnet``) lies further from
    the term than the one edit. A shorter rest is too often a suffix the stemmer keeps (``leader``
    is not ``lead`` + ``ed`` misspelt)."""
    rest = word.text[len(term):]
    return (len(term) >= MIN_TERM_PREFIX and len(rest) >= MIN_MISSPELT_ENDING and word.text.startswith(term)
            and term[:TYPO_RANGE] == word.stem[:TYPO_RANGE]
            and any(DamerauLevenshtein.distance(rest, ending, score_cutoff=1) <= 1 for ending in ENDINGS))


def _inflected_distance(word: Word, term: str) -> int:
    """The fewest edits (1 or more; 3 for more than 2) between ``word`` as written and ``term``
    followed by one of :data:`INFLECTIONS`: the word's distance to a written form of the term. A
    misspelling whose stem the stemmer does not reduce as it reduces the word (``restuarnats``:
    stem ``restuarnat``, 4 edits from ``restaur``) is 2 edits from the word written
    (``restaurants``), as Meilisearch and Typesense, which index the words written, count them.
    A form the word is exactly (0 edits) is not a correction: the stemmer kept that ending."""
    distances = (DamerauLevenshtein.distance(word.text, term + ending, score_cutoff=2) for ending in INFLECTIONS
                 if abs(len(word.text) - len(term) - len(ending)) <= 2)
    return min((d for d in distances if d > 0), default=3)


def _completed_distance(word: Word, term: str, cutoff: int) -> int:
    """The fewest edits (at most ``cutoff``; ``cutoff + 1`` for more) between the word's stem and a
    start of ``term`` that ``term`` continues with an ending (:func:`_derived`): ``term`` completes
    a correction of the word (``photogrpa``, the stem of ``photogrpaer``, is 2 edits from
    ``photograph``, which ``photographi``, "photography", continues with ``i``), as a misspelt
    last word completes in Meilisearch, whose prefix automaton counts typos too."""
    return min((DamerauLevenshtein.distance(term[:end], word.stem, score_cutoff=cutoff)
                for end in range(max(TYPO_RANGE, len(word.stem) - cutoff), len(term))
                if _derived(term[end:])), default=cutoff + 1)


def _derived(rest: str) -> bool:
    """True when ``rest``, what a term holds past a word's stem, makes the term a form of that stem:
    ``rest`` is one of :data:`INFLECTIONS` or its start, or begins with one of 2 letters or more
    (``teach`` + ``er``, ``electr`` + ``ician``, ``photograph`` + ``i``). A term that only happens to
    start with the stem is another word (``ten``, the stem of ``tens``, + ``ni``, ``tennis``): as a
    completion it would rank above every correction of a misspelt word."""
    return any(ending.startswith(rest) or (len(ending) >= 2 and rest.startswith(ending)) for ending in INFLECTIONS)


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


def typo_key(term: str) -> str:
    """The typo key of a term or stem: the term without its second and third letters (the
    positions :data:`TYPO_RANGE` leaves to the keys)."""
    return term[:1] + term[TYPO_RANGE:]


def typo_partition(key: str) -> str:
    """The partition a typo key is filed in: its first :data:`TYPO_PARTITION` letters (the term's
    first, fourth, fifth and sixth). A term's typo item is ``(typo_partition(key), key + "|" + term)``."""
    return key[:TYPO_PARTITION]


def typo_lookups(word: Word) -> list[tuple[str, str]]:
    """The typo-key reads of ``word``, as ``(partition, begins)`` pairs of :func:`typo_partition`
    and sort-key start: each typo key's own items (``key|``) for one typo, and for a word of
    :data:`MIN_TYPO2_WORD` letters or more the whole partition of each key, which also holds the
    terms with a second edit past their sixth letter (:func:`kind`, ``twice``)."""
    if word.corrects_twice:
        return [(part, "") for part in sorted(_shape_partitions(word.stem))]
    return [(typo_partition(k), f"{k}|") for k in sorted(typo_reads(word.stem)[0])]


def typo_term(sort_key: str) -> str:
    """The term of a typo item's sort key (``key|term``); a vocabulary item's sort key is the term."""
    return sort_key.rpartition("|")[2]


@lru_cache(maxsize=4096)
def _shape_partitions(stem: str) -> frozenset[str]:
    """The partitions of the typo keys of ``stem``'s shapes (:func:`typo_reads`)."""
    return frozenset(typo_partition(k) for k in typo_reads(stem)[0])


def typo_reads(stem: str) -> tuple[frozenset[str], str]:
    """What finds every vocabulary term at distance 1 from ``stem`` with its first letter: the typo
    keys to read (terms filed under them, :func:`typo_key`) and the start of a range read of the
    sorted vocabulary.

    With ``s = stem``, a term ``t`` whose edit lies at letter 1 or 2 (0-based) has the key
    (``t[0] + t[3:]``)

    * ``s[0] + s[3:]`` after a substitution at 1 or 2 or the transposition of 1 and 2 (the
      letters the key drops);
    * ``s[0] + s[2:]`` after a letter inserted at 1 or 2 (``t[3:] == s[2:]``);
    * ``s[0] + s[4:]`` after the deletion of letter 1 or 2 (``t[3:] == s[4:]``);
    * ``s[0] + s[2] + s[4:]`` after the transposition of letters 2 and 3.

    Any edit at letter :data:`TYPO_RANGE` or later leaves the first :data:`TYPO_RANGE` letters,
    which the range read covers; so does every term at distance 2 (:func:`kind` asks it to keep them).

    Returns
    -------
    tuple of (frozenset of str, str)
        The keys (at most :data:`TYPO_KEYS`) and the range's start (the stem's first
        :data:`TYPO_RANGE` letters).
    """
    first = stem[:1]
    keys = {first + stem[3:], first + stem[2:], first + stem[4:]}
    if len(stem) >= 4:
        keys.add(first + stem[2] + stem[4:])
    return frozenset(keys), stem[:TYPO_RANGE]


def prefixes_of(word: Word) -> tuple[str, ...]:
    """The beginnings of ``word`` that are terms it matches as a prefix (``mentor`` of ``mentori``)."""
    if not word.completes:
        return ()
    return tuple(word.text[:n] for n in range(MIN_TERM_PREFIX, len(word.text)) if _unfinished(word.text[n:]))
