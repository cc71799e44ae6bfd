"""The text analyzer, the typo rules and the BM25F scorer (pure; chalicelib/text_analysis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.text_analysis import analyzer, scorer, typos
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


# --- scorer ------------------------------------------------------------------------------------------

SPECS = {"title": scorer.FieldSpec(3.0), "description": scorer.FieldSpec(1.0)}


def test_bm25f_prefers_the_title_and_the_rarer_term() -> None:
    terms = query_terms(["python"])
    in_title = scorer.analyze({"title": ["python", "jobs"], "description": ["we", "hire", "people"]}, terms, "english")
    in_body = scorer.analyze({"title": ["great", "jobs"], "description": ["we", "hire", "python"]}, terms, "english")
    averages = scorer.average_lengths([in_title, in_body])
    idfs = [scorer.idf(100, 5)]
    assert scorer.bm25f(in_title, SPECS, averages, idfs) > scorer.bm25f(in_body, SPECS, averages, idfs) > 0
    assert scorer.idf(100, 5) > scorer.idf(100, 50) > 0
    assert scorer.idf(10, 50) > 0  # never negative, also with a stale count


def test_exact_matches_rank_above_corrected_ones() -> None:
    terms = query_terms(["python"])
    exact = scorer.analyze({"title": ["python"]}, terms, "english")
    corrected = scorer.analyze({"title": ["pythno", "pythno", "pythno"]}, terms, "english")
    assert (exact.typos, corrected.typos) == (0, 1)
    assert scorer.rank_key(exact, 0.1) < scorer.rank_key(corrected, 9.9)


WORDS = ["python", "rust", "mentor", "engineer", "zurich", "data", "design", "cafe"]
FILLER = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


@st.composite
def _case(draw: st.DrawFn) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """Query words, a document with all of them and one missing at least one, with equal fields
    (the same field names and lengths)."""
    query = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=4, unique=True))
    missing = draw(st.lists(st.sampled_from(query), min_size=1, max_size=len(query), unique=True))
    present = [w for w in query if w not in missing]
    full: dict[str, list[str]] = {}
    partial: dict[str, list[str]] = {}
    for name in ("title", "description"):
        length = draw(st.integers(len(query) * 3, 12))
        base = [draw(st.sampled_from(FILLER)) for _ in range(length)]
        full_words = [*query, *draw(st.lists(st.sampled_from([*query, *FILLER]), max_size=length - len(query)))]
        repeated = [draw(st.sampled_from(present))] * (length - len(present)) if present else []
        partial_words = [*present, *repeated] if present else base
        full[name] = [*full_words, *base][:length]
        partial[name] = (partial_words + base)[:length]
    return query, full, partial


@given(_case(), st.integers(1, 10_000), st.lists(st.integers(0, 10_000), min_size=4, max_size=4))
@settings(max_examples=300)
def test_fewer_matched_words_never_rank_above_all_of_them(
    case: tuple[list[str], dict[str, list[str]], dict[str, list[str]]], documents: int, holding: list[int],
) -> None:
    query, full, partial = case
    terms = query_terms(query)
    a = scorer.analyze(full, terms, "english")
    b = scorer.analyze(partial, terms, "english")
    assert a.matched == len(query) > b.matched
    averages = scorer.average_lengths([a, b])
    idfs = [scorer.idf(documents, n) for n in holding[: len(query)]]
    assert scorer.rank_key(a, scorer.bm25f(a, SPECS, averages, idfs)) < scorer.rank_key(b, scorer.bm25f(b, SPECS, averages, idfs))
