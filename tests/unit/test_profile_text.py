"""Profile ``q`` matching with the shared analyzer (chalicelib.profiles.text, chalicelib.profiles.search.matches)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.profiles import index
from chalicelib.profiles.facets import facets
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.profiles.search import matches
from chalicelib.profiles.text import matches_text, query_terms, searched
from chalicelib.text import words
from chalicelib.users.records import UserRecord, record


def person(name: str = "Ana Lopez", headline: str | None = None, skills: tuple[str, ...] = ()) -> UserRecord:
    """A Users item with a display name, headline and skills (nothing else set)."""
    item: dict[str, Any] = {
        "userId": "usr_1", "displayName": name, "verifiedLevel": 0, "socialLinks": {},
        "recruiting": {"headline": headline, "skills": list(skills)}, "requestPolicy": {}, "searchShard": "S0",
        "channels": {}, "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z", "version": 1,
    }
    return record(item)


def found(user: UserRecord, q: str) -> bool:
    return matches(user, ProfileSearchQuery.model_validate({"q": q}), words(q))


@pytest.mark.parametrize("q", ["engineers", "engineering", "engineer", "ENGINEERS", "engin"])
def test_a_word_finds_a_profile_with_a_word_of_the_same_stem(q: str) -> None:
    assert found(person(headline="Engineering mentor"), q)
    assert found(person(headline="Mentor", skills=("engineering",)), q)


def test_stems_work_both_ways_and_for_every_word_of_the_query() -> None:
    senior = person(headline="Senior Python engineers wanted")
    assert found(senior, "engineering python")
    assert found(senior, "pythons engineering")
    assert not found(senior, "engineering rust")


def test_only_the_last_word_matches_as_a_prefix() -> None:
    ana = person(headline="Python developer")
    assert found(ana, "developer pyth")
    assert not found(ana, "pyth developer")


def test_folding_is_kept() -> None:
    assert found(person(name="Ángel Zürich"), "angel zurich")


def test_function_words_that_are_not_last_are_dropped() -> None:
    mentor = person(headline="Engineering mentor Berlin")
    assert found(mentor, "mentor in berlin")
    assert searched(["mentor", "in", "berlin"]) == tuple(t for t in query_terms(["mentor", "in", "berlin"]) if t.word != "in")
    assert not found(person(headline="Mentor"), "mentor in")  # the last word is kept: it may be a word being typed


def test_no_typo_corrections_for_profiles() -> None:
    assert all(term.max_typos == 0 for term in query_terms(["enginer", "pyhton"]))
    assert not found(person(headline="Python engineer"), "pyhton")
    assert not matches_text({"engineer"}, ["enginer", "x"])


def test_the_stem_list_holds_every_profile_a_non_last_word_matches() -> None:
    """The planner reads only a non-last word's stem list: each profile it matches must be filed there."""
    user = person(headline="Engineering mentors", skills=("data-science",))
    filed = index.posting_lists(facets(user))
    for q in ("engineers x", "mentoring x", "mentor x", "sciences x"):
        term = query_terms(words(q))[0]
        assert found(user, q.replace(" x", ""))
        assert index.stem_list(term.stem) in filed


def test_a_word_whose_stem_does_not_start_it_is_found_by_its_stem() -> None:
    company = person(headline="Happy company")
    assert found(company, "compani")
    assert found(company, "companies")
    assert found(company, "happi")
