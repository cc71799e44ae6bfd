"""The text analyzer and the typo rules (pure; chalicelib/text_analysis)."""

from __future__ import annotations

import pytest

from chalicelib.text_analysis import analyzer, typos
from chalicelib.text_analysis.analyzer import best_match, query_terms, stem, vocabulary

# --- analyzer: folding, stems, prefixes, stop words --------------------------------------------------


def test_words_are_folded_and_tags_removed() -> None:
    assert analyzer.words("<p>Café owner in ZÜRICH</p>") == ["cafe", "owner", "in", "zurich"]


@pytest.mark.parametrize(("word", "expected"), [
    ("engineers", "engin"), ("engineering", "engin"), ("engineer", "engin"), ("mentoring", "mentor"),
    ("mentors", "mentor"), ("developers", "develop"), ("development", "develop"), ("apartments", "apart"),
])
def test_english_stems_are_snowball_porter2(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_the_stemmer_follows_the_language() -> None:
    assert stem("wohnungen", "german") == "wohnung"
    with pytest.raises(KeyError):
        stem("word", "klingon")


def _match(q: str, text: str) -> list[str | None]:
    vocab = vocabulary(" ".join(analyzer.words(text)))
    return [best_match(t, vocab) for t in query_terms(analyzer.words(q))]


def test_exact_words_stems_and_accents_match() -> None:
    assert _match("engineers", "Senior Python engineers wanted") == ["exact"]
    assert _match("engineering", "Senior Python engineers wanted") == ["stem"]
    assert _match("zurich cafe", "Café owner mentoring in Zürich") == ["exact", "exact"]


def test_only_the_last_word_is_a_prefix() -> None:
    assert _match("pyth", "Python developer") == ["prefix"]
    assert _match("pyth developer", "Python developer") == [None, "exact"]  # not the last word: a whole word
    assert _match("developer pyth", "Python developer") == ["exact", "prefix"]


def test_stop_words_are_ignored_unless_last() -> None:
    terms = query_terms(["mentoring", "in", "zurich"])
    assert [t.ignored for t in terms] == [False, True, False]
    assert not query_terms(["mentor", "the"])[-1].ignored  # the last word may be a word being typed ("the" -> "theatre")
    assert _match("theat", "Theatre tickets") == ["prefix"]


def test_occurrence_weights_prefer_exact_then_the_closer_form() -> None:
    term = query_terms(["engineer"])[0]
    exact = analyzer.occurrence_weight(term, "engineer", "exact")
    plural = analyzer.occurrence_weight(term, "engineers", "stem")
    derived = analyzer.occurrence_weight(term, "engineering", "stem")
    typo = analyzer.occurrence_weight(term, "enginer", "typo")
    assert exact > plural > derived > typo


# --- typos -------------------------------------------------------------------------------------------


def test_typo_budget_by_length() -> None:
    assert [typos.max_typos("x" * n) for n in (1, 4, 5, 8, 9, 20)] == [0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize(("term", "word", "expected"), [
    ("pyhton", "python", True),            # transposition, 6 letters: 1 typo
    ("enginer", "engineer", True),         # insertion
    ("nures", "nurse", True),              # 5 letters: 1 typo
    ("rsut", "rust", False),               # 4 letters: none
    ("devloppers", "developers", True),    # 10 letters: 2 typos
    ("enginre", "engineers", False),       # 7 letters: 1 typo only, this is 3
    ("bython", "python", False),           # never on the first letter
    ("python", "python", False),           # equal is not a correction
])
def test_typo_candidates(term: str, word: str, expected: bool) -> None:
    assert typos.is_typo(term, word) is expected


def test_corrections_to_a_stem_cut_an_inflection() -> None:
    assert typos.is_stem_typo("desinger", "design")           # "desing" + "er" ~ design
    assert typos.is_stem_typo("devloppers", "develop")        # 2 typos in a long word
    assert not typos.is_stem_typo("desinger", "desk")         # too far
    assert not typos.is_stem_typo("teahcer", "team")          # stems under 5 letters are never corrections
    assert not typos.is_stem_typo("desinger", "design"[1:])   # first letter


def test_corrections_come_closest_first_from_the_right_buckets() -> None:
    vocab = ["python", "pythons", "pylon", "piston", "java"]
    assert typos.corrections("pyhton", vocab) == ["python"]  # "pythons" is 2 away: too far for 6 letters
    buckets = typos.buckets_of("pyhton")
    assert buckets == [("p", n) for n in range(4, 8)]
    assert all(typos.bucket(w) in buckets for w in typos.corrections("pyhton", vocab))
    assert typos.buckets_of("rust") == []  # no typos, no reads
    assert len(typos.buckets_of("engineering")) == 2 * 2 + 1 + typos.MAX_SUFFIX


