"""Profile documents of the search engine (chalicelib.profiles.spec) and the profile matching rule
(chalicelib.profiles.search.matches: the engine's analyzer on profiles)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from chalicelib.kernel.text import words
from chalicelib.profiles import spec
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.profiles.search import matches
from chalicelib.search import analysis, engine, index
from chalicelib.users.records import UserRecord, record


def person(name: str = "Ana Lopez", headline: str | None = None, skills: tuple[str, ...] = (), level: int = 0,
           updated: str = "2026-01-01T00:00:00.000Z", user_id: str = "usr_1", **recruiting: Any) -> UserRecord:
    """A Users item with a display name, headline and skills (and the ``recruiting`` values given)."""
    item: dict[str, Any] = {
        "userId": user_id, "displayName": name, "verifiedLevel": level, "socialLinks": {},
        "recruiting": {"headline": headline, "skills": list(skills), **recruiting}, "requestPolicy": {}, "searchShard": "S0",
        "channels": {}, "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": updated, "version": 1,
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
    assert not found(person(headline="Mentor"), "mentor in")  # the last word is kept: it may be a word being typed


def test_one_typo_is_corrected_as_in_listing_search() -> None:
    assert found(person(headline="Python engineer"), "pyhton")
    assert found(person(headline="Python engineer"), "enginer python")
    assert not found(person(headline="Python engineer"), "pxhtxn")


def test_a_word_whose_stem_does_not_start_it_is_found_by_its_stem() -> None:
    company = person(headline="Happy company")
    assert found(company, "compani")
    assert found(company, "companies")
    assert found(company, "happi")


def test_the_document_files_every_filter_value() -> None:
    user = person(headline="Rust engineer", skills=("rust", "go"), level=2, country="de", openToWork=True,
                  seniority="senior", remote=False)
    user["country"] = "de"
    doc = spec.document(user)
    assert (doc.id, doc.scope, doc.version) == ("usr_1", spec.SCOPE, 1)
    assert doc.keywords == {"open": ("true",), "country": ("de",), "seniority": ("senior",), "remote": ("false",),
                            "skill": ("go", "rust")}
    assert doc.numbers == {"level": Decimal(2)}
    assert doc.text == {"displayName": "Ana Lopez", "headline": "Rust engineer", "skills": "go rust"}


def test_unset_values_file_nothing_and_a_missing_open_to_work_is_false() -> None:
    doc = spec.document(person(headline=None))
    assert doc.keywords == {"open": ("false",)}
    assert doc.text == {"displayName": "Ana Lopez"}


def test_recency_orders_by_level_then_most_recently_updated_then_user_id() -> None:
    users = [
        person(level=0, updated="2026-06-01T00:00:00.000Z", user_id="usr_a"),
        person(level=1, updated="2026-01-01T00:00:00.000Z", user_id="usr_b"),
        person(level=1, updated="2026-01-01T00:00:00.001Z", user_id="usr_c"),
        person(level=1, updated="2026-01-01T00:00:00.001Z", user_id="usr_d"),
        person(level=3, updated="2025-01-01T00:00:00.000Z", user_id="usr_e"),
    ]
    docs = [spec.document(u) for u in users]
    ordered = sorted(docs, key=lambda d: index.age_key(d.newest, d.id))
    assert [d.id for d in ordered] == ["usr_e", "usr_c", "usr_d", "usr_b", "usr_a"]
    assert max(d.newest for d in docs) < index.MAX_NEWEST


def test_the_engine_query_of_every_filter() -> None:
    query = ProfileSearchQuery.model_validate({
        "q": "rust", "country": "de", "minVerifiedLevel": 2, "skills": "Rust,go,rust", "openToWork": "false",
        "seniority": "senior", "remote": "true", "channel": "discord",
    })
    built = spec.engine_query(query, words(query.q or ""))
    assert built.order == "relevance"
    assert built.words == ("rust",)
    assert set(built.keywords) == {("country", query.country), ("open", "false"), ("seniority", "senior"),
                                   ("remote", "true"), ("channel", "discord"), ("skill", "rust"), ("skill", "go")}
    assert built.ranges == (engine.NumberRange("level", Decimal(2), Decimal(3)),)
    assert spec.engine_query(ProfileSearchQuery.model_validate({}), []).order == "newest"


def test_the_match_rule_is_the_engines_on_the_document() -> None:
    """Every word :func:`matches` accepts matches a term the document files (the index can find it)."""
    user = person(headline="Engineering mentors", skills=("data-science",))
    doc = spec.document(user)
    held = index.impacts(index.term_frequencies(spec.spec(), doc))
    for q in ("engineers", "mentoring", "mentor", "sciences", "enginering", "dat"):
        assert found(user, q)
        assert all(analysis.best(word, held) for word in analysis.query_words(words(q), spec.LANGUAGE))
