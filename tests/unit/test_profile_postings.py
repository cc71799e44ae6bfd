"""Profile posting keys (chalicelib.profiles.index) and the planner's choice (chalicelib.profiles.planner)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.profiles import index, planner
from chalicelib.profiles.facets import facets
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.search.postings import PostingKey
from chalicelib.text import words
from chalicelib.users.records import UserRecord, record


def user(user_id: str = "usr_1", level: int = 0, updated: str = "2026-01-01T00:00:00.000Z", **recruiting: Any) -> UserRecord:
    """A Users item with the given recruiting fields (others empty)."""
    item: dict[str, Any] = {
        "userId": user_id, "displayName": recruiting.pop("name", "Ana Lopez"), "verifiedLevel": level,
        "socialLinks": {}, "recruiting": recruiting, "requestPolicy": {}, "searchShard": "S0",
        "channels": {c: {"handle": "h", "connectedAt": updated} for c in recruiting.pop("channels", ["telegram"])},
        "createdAt": updated, "updatedAt": updated, "version": 1,
    }
    if "country" in recruiting:
        item["country"] = recruiting.pop("country")
    return record(item)


def lists(profile: UserRecord) -> set[str]:
    return {name.removeprefix(f"{index.NAMESPACE}#") for name in index.posting_lists(facets(profile))}


# --- posting keys of a user -------------------------------------------------------------


def test_a_profile_is_filed_under_each_searchable_value() -> None:
    ana = user(level=2, country="ES", openToWork=True, headline="ML engineer", skills=["python", "go"], seniority="senior",
               remote=False, channels=["telegram", "email"])
    found = lists(ana)
    assert {"level#2", "country#ES", "open#true", "seniority#senior", "remote#false", "channel#telegram",
            "channel#email", "skill#python", "skill#go", 'skills#["go","python"]'} <= found
    assert {"word#a", "word#an", "word#ana", "word#l", "word#lopez", "word#ml", "word#e", "word#engineer", "word#py",
            "word#python", "word#g", "word#go"} <= found
    assert {"stem#ana", "stem#lopez", "stem#ml", "stem#engin", "stem#python", "stem#go"} <= found  # Snowball English stems
    assert not any(name.startswith("many-skills#") for name in found)


def test_unset_values_file_nothing_and_a_missing_open_to_work_is_false() -> None:
    found = lists(user(channels=[]))
    assert "open#false" in found
    assert not any(name.split("#")[0] in ("country", "seniority", "remote", "channel", "skill", "skills") for name in found)


def test_word_prefixes_stop_at_max_prefix_and_words_are_folded() -> None:
    found = lists(user(name="Ŝtéfan", headline="Internationalization"))
    assert "word#stefan" in found
    assert "word#ŝtéfan" not in found
    longest = "internationalization"[: index.MAX_PREFIX]
    assert f"word#{longest}" in found
    assert not any(name.startswith("word#") and len(name) > len("word#") + index.MAX_PREFIX for name in found)


def test_skill_pairs_up_to_the_limit_then_many_skills_lists() -> None:
    few = [f"s{i:02d}" for i in range(index.MAX_PAIRED_SKILLS)]
    paired = lists(user(skills=few))
    assert sum(name.startswith("skills#") for name in paired) == len(few) * (len(few) - 1) // 2
    many = lists(user(skills=[*few, "extra"]))
    assert not any(name.startswith("skills#") for name in many)
    assert {f"many-skills#{skill}" for skill in [*few, "extra"]} <= many


def test_every_key_of_a_user_has_its_sort_key() -> None:
    ana = facets(user(skills=["go"]))
    keys = index.posting_keys(ana)
    assert {key.sort for key in keys} == {index.sort_key(ana)}
    assert {key.list_id for key in keys} == index.posting_lists(ana)
    assert all(isinstance(key, PostingKey) for key in keys)


def test_sort_keys_order_by_level_then_newest_then_user_id() -> None:
    ordered = [
        user("usr_b", level=3, updated="2026-01-01T00:00:00.000Z"),
        user("usr_a", level=2, updated="2026-03-01T10:00:00.000Z"),
        user("usr_a2", level=2, updated="2026-02-28T23:59:59.999Z"),
        user("usr_c", level=2, updated="2026-02-28T23:59:59.999Z"),
        user("usr_0", level=0, updated="2027-01-01T00:00:00.000Z"),
    ]
    keys = [index.sort_key(facets(u)) for u in ordered]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_level_bound_keeps_exactly_the_levels_at_or_above(level: int) -> None:
    bound = index.level_bound(level)
    for other in range(4):
        key = index.sort_key(facets(user(level=other)))
        assert (key <= bound) == (other >= level)


# --- planner ----------------------------------------------------------------------------


def plan(params: dict[str, Any], sizes: dict[str, int]) -> planner.Plan:
    query = ProfileSearchQuery.model_validate(params)
    terms = words(query.q or "")
    options = planner.sources(query, terms)
    full = {f"{index.NAMESPACE}#{name}": n for name, n in sizes.items()}
    return planner.choose(query, terms, options, full)


def test_no_filter_reads_the_level_lists_in_order_and_counts_them() -> None:
    chosen = plan({}, {"level#3": 5, "level#2": 10, "level#1": 20, "level#0": 65})
    assert chosen.source.lists == tuple(f"{index.NAMESPACE}#level#{n}" for n in (3, 2, 1, 0))
    assert chosen.source.concatenated
    assert (chosen.size, chosen.verify, chosen.min_level) == (100, False, 0)


def test_min_verified_level_alone_is_exact_from_the_level_lists() -> None:
    chosen = plan({"minVerifiedLevel": 2}, {"level#3": 5, "level#2": 10, "level#1": 20})
    assert chosen.source.lists == (index.level_list(3), index.level_list(2))
    assert (chosen.size, chosen.verify, chosen.min_level) == (15, False, 2)


def test_the_rarest_filter_is_read_and_the_others_verified() -> None:
    chosen = plan({"country": "FR", "openToWork": "true", "q": "grace"},
                  {"country#fr": 700, "open#true": 3000, "word#grace": 2000})
    assert (chosen.source.name, chosen.size, chosen.verify) == ("country=fr", 700, True)


def test_a_single_exact_filter_needs_no_verification() -> None:
    assert not plan({"skills": "rust"}, {"skill#rust": 10}).verify
    assert not plan({"remote": "false"}, {"remote#false": 10}).verify


def test_a_q_word_reads_its_stem_list_and_the_last_one_its_prefix_list_too() -> None:
    chosen = plan({"q": "engineers"}, {"stem#engin": 30, "word#engineers": 12})
    assert chosen.source.lists == (index.stem_list("engin"), index.word_list("engineers"))
    assert (chosen.size, chosen.source.exact, chosen.verify) == (42, False, True)  # the union of stem and prefix matches
    both = plan({"q": "engineers rust"}, {"stem#engin": 30, "word#engineers": 12, "stem#rust": 50, "word#rust": 50})
    assert both.source.lists == (index.stem_list("engin"),)  # a word that is not the last has no prefix list
    assert planner.conditions(ProfileSearchQuery.model_validate({"q": "mentor in the berlin"}), ["mentor", "in", "the", "berlin"]) == 2


def test_a_last_word_that_starts_its_stem_reads_its_prefix_list_alone_when_no_stem_is_an_exception() -> None:
    chosen = plan({"q": "grace"}, {"stem#grace": 2000, "word#grace": 2000})
    assert chosen.source.lists == (index.word_list("grace"),)
    assert (chosen.size, chosen.source.exact, chosen.verify) == (2000, True, False)  # total from the list's size
    mixed = plan({"q": "compani"}, {"stem#compani": 30, "word#compani": 20, "stem-x#compani": 25})
    assert mixed.source.lists == (index.word_list("compani"), index.stem_exception_list("compani"))
    assert (mixed.size, mixed.source.exact, mixed.verify) == (45, False, True)


def test_stems_that_do_not_start_their_word_are_filed_as_exceptions() -> None:
    found = lists(user(name="Happy Company", headline="engineers"))
    assert {"stem#happi", "stem-x#happi", "stem#compani", "stem-x#compani", "stem#engin"} <= found
    assert "stem-x#engin" not in found


def test_a_word_longer_than_the_prefix_lists_is_verified() -> None:
    term = "internationalization"
    chosen = plan({"q": term}, {f"word#{term[: index.MAX_PREFIX]}": 3})
    assert not chosen.source.exact
    assert chosen.verify


def test_two_skills_read_their_pair_list_with_the_smaller_many_skills_list() -> None:
    chosen = plan({"skills": "rust,go", "openToWork": "true"},
                  {"skill#rust": 1250, "skill#go": 1250, 'skills#["go","rust"]': 130, "many-skills#rust": 9,
                   "many-skills#go": 4, "open#true": 3000})
    assert chosen.source.lists == (index.skill_pair_list("go", "rust"), index.many_skills_list("go"))
    assert (chosen.size, chosen.verify) == (134, True)


def test_an_empty_list_wins_and_ties_prefer_an_exact_source() -> None:
    assert plan({"country": "FR", "channel": "discord"}, {"country#fr": 10}).source.name == "channel=discord"
    chosen = plan({"skills": "a,b"}, {"skill#a": 2, "skill#b": 5, 'skills#["a","b"]': 2})
    assert chosen.source.name == "skills=a"


def test_pairs_are_considered_among_the_first_skills_only() -> None:
    query = ProfileSearchQuery.model_validate({"skills": ",".join(f"s{i}" for i in range(8))})
    names = planner.size_lists(planner.sources(query, []))
    pairs = [name for name in names if name.startswith(f"{index.NAMESPACE}#skills#")]
    assert len(pairs) == planner.PAIR_CANDIDATES * (planner.PAIR_CANDIDATES - 1) // 2
    assert len(names) == len(set(names))
