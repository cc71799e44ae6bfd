"""The text analyzer: folding, stems and stop words (pure; chalicelib/text_analysis)."""

from __future__ import annotations

import pytest

from chalicelib.text_analysis import analyzer
from chalicelib.text_analysis.analyzer import stem

# --- analyzer: folding, stems, stop words ------------------------------------------------------------


def test_words_are_folded_and_tags_removed() -> None:
    assert analyzer.words("<p>Café owner in ZÜRICH</p>") == ["cafe", "owner", "in", "zurich"]


def test_character_references_of_rich_text_are_decoded_not_indexed_as_words() -> None:
    assert analyzer.words("<p>Sales &amp; Marketing, R&amp;D, 5 &lt; 6, text&nbsp;here, caf&eacute;</p>") == [
        "sales", "marketing", "r", "d", "5", "6", "text", "here", "cafe",
    ]


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


def test_stop_words_are_the_languages_function_words() -> None:
    assert analyzer.is_stop_word("in")
    assert analyzer.is_stop_word("the")
    assert not analyzer.is_stop_word("not")  # changes a query's meaning: kept
    assert not analyzer.is_stop_word("in", "german")  # no German list: nothing dropped
    assert analyzer.any_stop_word("with")
    assert not analyzer.any_stop_word("mentor")
