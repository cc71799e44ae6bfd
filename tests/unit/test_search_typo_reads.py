"""The typo lookup's reads (delete keys and one vocabulary range) find every term one edit away."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import DamerauLevenshtein

from chalicelib.search import analysis

LETTERS = "abcde"


def _one_edit(word: str) -> set[str]:
    """Every string at Damerau-Levenshtein distance 1 from ``word`` over :data:`LETTERS`."""
    out = set()
    for i in range(len(word) + 1):
        out |= {word[:i] + c + word[i:] for c in LETTERS}
    for i in range(len(word)):
        out.add(word[:i] + word[i + 1:])
        out |= {word[:i] + c + word[i + 1:] for c in LETTERS}
        if i + 1 < len(word):
            out.add(word[:i] + word[i + 1] + word[i] + word[i + 2:])
    return {t for t in out if t and DamerauLevenshtein.distance(t, word) == 1}


@settings(max_examples=300, deadline=None)
@given(st.text(LETTERS, min_size=1, max_size=12))
def test_every_term_one_edit_away_with_the_first_letter_is_found(stem: str) -> None:
    keys, start = analysis.typo_reads(stem)
    assert len(keys) <= analysis.TYPO_RANGE
    for term in _one_edit(stem):
        if term[:1] != stem[:1]:
            continue
        assert term.startswith(start) or keys & analysis.delete_keys(term), (stem, term)


def test_a_long_stem_reads_three_keys_and_its_first_three_letters() -> None:
    # Its first 8 letters "professi" without letter 1 or 2, and without the last (an inserted letter).
    assert analysis.typo_reads("professional") == (frozenset({"pofessi", "prfessi", "profess"}), "pro")
    assert analysis.typo_reads("sessio") == (frozenset({"sssio", "sesio", "sessio"}), "ses")
