"""The posting lists of a profile: which lists a user is in, and where in each.

A posting list holds the users that have one searchable value: a ``q`` word's stem or prefix,
a skill, a country, ... (:func:`posting_lists`). Every member of every list is filed under the same
sort key, the user's :func:`sort_key`, which is the search's result order: verification
level (highest first), then the most recently updated profile, then ``userId``. Reading any
list ascending therefore yields its users in result order, so a page can be read from one
list and stop as soon as it is full, and a cursor is the last sort key of a page.

Lists (ids in the SearchIndex table, :func:`chalicelib.search.postings.list_id` under ``<ns>`` =
:data:`NAMESPACE`: ``profiles.v2`` since stems joined the prefixes, so that
``scripts/profile_backfill.py`` files every user afresh; the ``profiles#...`` lists of before
are no longer read):

============================  ================================================================
``<ns>#level#<0..3>``         every user, by verification level (their union is everyone)
``<ns>#stem#<stem>``          the Snowball stem (:data:`LANGUAGE`) of a folded word of the
                              display name, headline or skills (``q``: the same word or a
                              word of the same stem; :mod:`chalicelib.text_analysis.analyzer`)
``<ns>#stem-x#<stem>``        a stem of such a word that does not start the word
                              (``company`` -> ``compani``): the exceptions that keep a
                              prefix list exact for a word that is its own stem
``<ns>#word#<prefix>``        a prefix of 1..:data:`MAX_PREFIX` characters of such a word
                              (``q``'s last word: search as you type)
``<ns>#skill#<skill>``        a skill
``<ns>#skills#["a","b"]``     two skills (a < b) of a user with at most
                              :data:`MAX_PAIRED_SKILLS` skills (``skills=a,b,...``)
``<ns>#many-skills#<skill>``  a skill of a user with more than :data:`MAX_PAIRED_SKILLS`
                              (the pairs of such a user would be too many)
``<ns>#country#<CC>``         the country
``<ns>#seniority#<value>``    the seniority, when set
``<ns>#open#<true|false>``    ``openToWork`` (missing is ``false``)
``<ns>#remote#<true|false>``  ``remote``, when set
``<ns>#channel#<key>``        a connected channel
============================  ================================================================

The lists, their sizes and their maintenance (idempotent, version-checked) are
:mod:`chalicelib.search.postings`'; :func:`posting_keys` is what a user is filed under.

Stem lists are the stemmed terms of an inverted index (one list per stem, as listing search's
``listings.v2#<category>#s#<stem>``); word prefixes are the edge n-grams of full-text engines
(Elasticsearch's ``edge_ngram`` tokenizer); pair lists are the two-term "phrase"/conjunction postings of inverted indexes
(Manning, Raghavan, Schütze, *Introduction to Information Retrieval*, §2.4), bounded per user.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import combinations

from chalicelib.profiles.facets import Facets
from chalicelib.search.postings import PostingKey, list_id, register_projection
from chalicelib.text_analysis.analyzer import DEFAULT_LANGUAGE, stem
from chalicelib.users.models import MAX_VERIFIED_LEVEL

#: Namespace of the profile posting lists and of the users' posting states (``v2``: stem lists;
#: ``v3``: entries carry the covering projection of :func:`projection`).
NAMESPACE = "profiles.v3"
#: The analysis language of every profile: profiles have no category to declare one, so the
#: analyzer's default (English, Snowball's Porter 2).
LANGUAGE = DEFAULT_LANGUAGE
#: Longest word prefix with its own list; a longer ``q`` word reads the list of its first
#: :data:`MAX_PREFIX` characters and is verified on each candidate.
MAX_PREFIX = 10
#: Users with at most this many skills are filed under every pair of their skills
#: (at most 45 pair lists); users with more under :func:`many_skills_list` instead.
MAX_PAIRED_SKILLS = 10

_INVERT_DIGITS = str.maketrans("0123456789", "9876543210")


def sort_key(profile: Facets) -> str:
    """The user's position in every list: ``<3 - level>#<updatedAt, digits inverted>#<userId>``.

    Ascending string order is the result order (level descending, ``updatedAt`` descending,
    ``userId`` ascending): ``updatedAt`` is fixed-width ISO 8601 (:func:`chalicelib.clock.iso`),
    so replacing every digit ``d`` by ``9 - d`` reverses its order.
    """
    inverted = profile.updated_at.translate(_INVERT_DIGITS)
    return f"{MAX_VERIFIED_LEVEL - profile.level}#{inverted}#{profile.user_id}"


def level_bound(min_level: int) -> str:
    """An inclusive upper bound of the sort keys of the users at ``min_level`` or above.

    Their keys start with ``<3 - level>#``; ``$`` sorts right after ``#``, so every key of a
    lower level (a larger first digit) is above the bound.
    """
    return f"{MAX_VERIFIED_LEVEL - min_level}$"


def level_list(level: int) -> str:
    """The list of the users at verification ``level`` (0..3)."""
    return list_id(NAMESPACE, "level", str(level))


def word_list(term: str) -> str:
    """The list of the users with a word starting with ``term``'s first :data:`MAX_PREFIX` characters."""
    return list_id(NAMESPACE, "word", term[:MAX_PREFIX])


def stem_list(stem: str) -> str:
    """The list of the users with a word whose :data:`LANGUAGE` stem is ``stem``."""
    return list_id(NAMESPACE, "stem", stem)


def stem_exception_list(stem: str) -> str:
    """The list of the users with a word whose :data:`LANGUAGE` stem is ``stem`` but which does not
    start with ``stem`` (``happy`` -> ``happi``; Snowball's ``y`` -> ``i`` and suffix rewrites).

    Every other word of that stem starts with it, so a ``q`` word that starts the stem finds
    all its stem matches in its prefix list and this one (:mod:`chalicelib.profiles.planner`).
    """
    return list_id(NAMESPACE, "stem-x", stem)


def skill_list(skill: str) -> str:
    """The list of the users with ``skill``."""
    return list_id(NAMESPACE, "skill", skill)


def skill_pair_list(first: str, second: str) -> str:
    """The list of the users (with at most :data:`MAX_PAIRED_SKILLS` skills) having both skills."""
    return list_id(NAMESPACE, "skills", json.dumps(sorted((first, second)), separators=(",", ":"), ensure_ascii=False))


def many_skills_list(skill: str) -> str:
    """The list of the users with more than :data:`MAX_PAIRED_SKILLS` skills, ``skill`` among them."""
    return list_id(NAMESPACE, "many-skills", skill)


def country_list(country: str) -> str:
    """The list of the users of ``country``."""
    return list_id(NAMESPACE, "country", country)


def seniority_list(seniority: str) -> str:
    """The list of the users of ``seniority``."""
    return list_id(NAMESPACE, "seniority", seniority)


def open_list(open_to_work: bool) -> str:
    """The list of the users whose ``openToWork`` is ``open_to_work``."""
    return list_id(NAMESPACE, "open", str(open_to_work).lower())


def remote_list(remote: bool) -> str:
    """The list of the users whose ``remote`` is ``remote``."""
    return list_id(NAMESPACE, "remote", str(remote).lower())


def channel_list(channel: str) -> str:
    """The list of the users with ``channel`` connected."""
    return list_id(NAMESPACE, "channel", channel)


def prefixes(word: str) -> list[str]:
    """The prefixes of ``word`` with a list: lengths 1..:data:`MAX_PREFIX`."""
    return [word[:length] for length in range(1, min(len(word), MAX_PREFIX) + 1)]


def posting_lists(profile: Facets) -> frozenset[str]:
    """Every list the profile is a member of (see the module docstring)."""
    lists = {level_list(profile.level), open_list(profile.open_to_work)}
    lists.update(word_list(prefix) for word in profile.words for prefix in prefixes(word))
    for word in profile.words:
        word_stem = stem(word, LANGUAGE)
        lists.add(stem_list(word_stem))
        if not word.startswith(word_stem):
            lists.add(stem_exception_list(word_stem))
    lists.update(skill_list(skill) for skill in profile.skills)
    if len(profile.skills) <= MAX_PAIRED_SKILLS:
        lists.update(skill_pair_list(a, b) for a, b in combinations(sorted(profile.skills), 2))
    else:
        lists.update(many_skills_list(skill) for skill in profile.skills)
    if profile.country is not None:
        lists.add(country_list(profile.country))
    if profile.seniority is not None:
        lists.add(seniority_list(profile.seniority))
    if profile.remote is not None:
        lists.add(remote_list(profile.remote))
    lists.update(channel_list(channel) for channel in profile.channels)
    return frozenset(lists)


def posting_keys(profile: Facets) -> set[PostingKey]:
    """Where the profile is filed: each of its :func:`posting_lists` at its :func:`sort_key`."""
    position = sort_key(profile)
    return {PostingKey(name, position) for name in posting_lists(profile)}


#: Lists whose value a profile's entries carry (:func:`projection`), by the list kind of their id.
PROJECTED = {"country": "country", "open": "open", "skill": "skills", "seniority": "seniority", "remote": "remote",
             "channel": "channels"}
#: Separates the values of a many-valued projection (skills, channels): never part of one.
VALUES_SEPARATOR = "\n"


def projection(keys: Iterable[PostingKey]) -> dict[str, str]:
    """The covering projection of a profile filed under ``keys``: its country, openToWork, skills,
    seniority, remote and channels, read back from its lists (so equal keys mean an equal
    projection). Stored in every entry of the profile
    (:func:`chalicelib.search.postings.register_projection`): a search checks its filters on the
    entry of the one list it reads (:func:`chalicelib.profiles.search.entry_matches`)."""
    found: dict[str, set[str]] = {}
    prefix = f"{NAMESPACE}#"
    for key in keys:
        if not key.list_id.startswith(prefix):
            continue
        kind, _, value = key.list_id[len(prefix):].partition("#")
        if kind in PROJECTED:
            found.setdefault(PROJECTED[kind], set()).add(value)
    return {name: VALUES_SEPARATOR.join(sorted(values)) for name, values in found.items()}


register_projection(NAMESPACE, projection)
