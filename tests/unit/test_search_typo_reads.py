"""The typo lookup's reads (typo keys, their partitions and one vocabulary range) find every term
the match rule accepts one or two edits away."""

from __future__ import annotations

from hypothesis import given
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


@given(st.text(LETTERS, min_size=1, max_size=12))
def test_every_term_one_edit_away_with_the_first_letter_is_found(stem: str) -> None:
    keys, start = analysis.typo_reads(stem)
    assert len(keys) <= analysis.TYPO_KEYS
    for term in _one_edit(stem):
        if term[:1] != stem[:1]:
            continue
        assert term.startswith(start) or analysis.typo_key(term) in keys, (stem, term)


@given(st.text(LETTERS, min_size=1, max_size=10))
def test_every_term_two_edits_away_that_a_long_word_accepts_is_found(stem: str) -> None:
    # The word's length decides whether it corrects twice; the distance is the stem's.
    word = analysis.Word("w" * analysis.MIN_TYPO2_WORD, stem, last=False)
    start = analysis.typo_reads(stem)[1]
    partitions = {part for part, begins in analysis.typo_lookups(word) if not begins}  # read whole
    two = {t for once in _one_edit(stem) for t in _one_edit(once)} - {stem}
    accepted = [t for t in two if analysis.kind(word, t) == analysis.Kind.TYPO2]
    for term in accepted:
        assert DamerauLevenshtein.distance(term, stem) == 2
        assert term.startswith(start) or analysis.typo_partition(analysis.typo_key(term)) in partitions, (stem, term)


def test_two_edits_are_accepted_from_nine_letters_with_the_first_three_or_the_key_partition_kept() -> None:
    word = analysis.Word("devloppers", "devlopp", last=False)
    assert analysis.kind(word, "develop") == analysis.Kind.TYPO2  # a letter inserted and one deleted past the third
    assert analysis.kind(word, "devlop") == analysis.Kind.TYPO
    assert analysis.kind(analysis.Word("devlopper", "devlopp", last=False), "develop") == analysis.Kind.TYPO2  # 9 letters
    assert analysis.kind(analysis.Word("devlopps", "devlopp", last=False), "develop") is None  # 8 letters: one edit only
    # One edit among letters 2 and 3 and one past the sixth: the term's key keeps the partition of
    # one of the word's shapes (dlop), so reading that partition whole finds it.
    assert analysis.kind(word, "dvelop") == analysis.Kind.TYPO2
    assert analysis.kind(word, "dveolp") is None  # the second edit at the fourth letter: partition dolp
    assert analysis.kind(word, "dvlopx") is None  # ... at the sixth: dopx
    assert analysis.kind(word, "dvleop") is None
    assert [k.edits for k in analysis.Kind] == [0, 0, 0, 1, 2]


def test_a_term_is_filed_under_one_key_and_a_stem_reads_four() -> None:
    # The term without letters 1 and 2, in the partition of the key's first four letters; the
    # stem's key, and those of a letter inserted or deleted near its start and of the transposition
    # of letters 2 and 3 (sessio: that one is its own key). A word of 9 letters or more reads the
    # keys' partitions whole, a shorter one only its keys' items.
    assert analysis.typo_key("professional") == "pfessional"
    assert analysis.typo_partition("pfessional") == "pfes"
    assert analysis.typo_lookups(analysis.Word("professionals", "professional", last=False)) == [
        ("pess", ""), ("pfes", ""), ("poes", ""), ("pofe", "")]
    assert analysis.typo_lookups(analysis.Word("sessions", "sessio", last=False)) == [
        ("sio", "sio|"), ("ssio", "ssio|"), ("sssi", "sssio|")]
    assert analysis.typo_reads("professional") == (frozenset({"pfessional", "pofessional", "pessional", "poessional"}), "pro")
    assert analysis.typo_reads("sessio") == (frozenset({"ssio", "sssio", "sio"}), "ses")


def test_a_misspelt_ending_the_stemmer_left_matches_the_stem_before_it_as_one_typo() -> None:
    word = analysis.query_words(["apartmnet"], "english")[0]  # "ment" misspelt: the stem keeps it
    assert word.stem == "apartmnet"
    assert analysis.kind(word, "apart") == analysis.Kind.TYPO
    assert analysis.kind(analysis.query_words(["apartmxyz"], "english")[0], "apart") is None  # no ending
    assert analysis.kind(analysis.query_words(["apsrtmnet"], "english")[0], "apart") is None  # and not a prefix
    assert analysis.kind(analysis.query_words(["leader"], "english")[0], "lead") is None  # "er": a suffix kept
    assert "apart".startswith(analysis.typo_reads(word.stem)[1])  # the vocabulary's range read finds it


def test_a_long_word_two_edits_from_a_written_form_of_a_term_matches_the_term() -> None:
    word = analysis.query_words(["restuarnats"], "english")[0]  # "restaurants" with two letters swapped twice
    assert word.stem == "restuarnat"  # 4 edits from "restaur", the stem of "restaurants"
    assert analysis.kind(word, "restaur") == analysis.Kind.TYPO2
    assert analysis.kind(analysis.query_words(["restaurnts"], "english")[0], "restaur") == analysis.Kind.TYPO  # one letter dropped
    assert analysis.kind(analysis.query_words(["restuarnxts"], "english")[0], "restaur") is None  # 3 edits
    assert analysis.kind(analysis.query_words(["rsetuarnats"], "english")[0], "restaur") is None  # the first three letters
    assert "restaur".startswith(analysis.typo_reads(word.stem)[1])  # the vocabulary's range read finds it


@given(st.text(LETTERS, min_size=4, max_size=8), st.sampled_from(analysis.INFLECTIONS), st.data())
def test_a_long_word_one_edit_from_a_written_form_matches_its_term_with_at_most_one_correction(
        term: str, ending: str, data: st.DataObject) -> None:
    written = term + ending
    edited = sorted(t for t in _one_edit(written) if t[:analysis.TYPO_RANGE] == written[:analysis.TYPO_RANGE])
    text = data.draw(st.sampled_from(edited))
    word = analysis.Word(text, analysis.stem(text, "english"), last=False)
    if len(text) < analysis.MIN_TYPO2_WORD or word.stem[:analysis.TYPO_RANGE] != term[:analysis.TYPO_RANGE]:
        return  # a short word corrects once on its stem; a stem that lost the start is looked up elsewhere
    how = analysis.kind(word, term)
    assert how is not None, (text, word.stem, term)
    assert how.edits <= 1, (text, word.stem, term, how)
    assert term.startswith(analysis.typo_reads(word.stem)[1])  # the lookup finds it
