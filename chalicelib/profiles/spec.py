"""Profiles as documents of the search engine: the index spec and the typed engine query of a search.

Every user is a profile document (:func:`document`), in one scope (:data:`SCOPE`): recency =
verification level first, then ``updatedAt`` (:func:`rank_of`), so "newest first" is the
profile order (level highest first, then the most recently updated, then ``userId``); text =
the display name (BM25F boost 2.0), the headline (1.0) and the skills (1.5); keywords = the
country, ``openToWork`` (``open``, a missing value is ``false``), the seniority, ``remote``
(when set), each skill (``skill``) and each connected channel (``channel``); numbers = the
verification level (``level``, for ``minVerifiedLevel``). Lists live under :data:`NAMESPACE`
in the SearchIndex table; the Users-table stream keeps them (:mod:`chalicelib.profiles.handlers`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.profiles.facets import facets
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.search import engine
from chalicelib.search.index import Document, IndexSpec, projection
from chalicelib.search.store import DynamoStore, search_index
from chalicelib.text_analysis.analyzer import DEFAULT_LANGUAGE
from chalicelib.users import api as users
from chalicelib.users.models import MAX_VERIFIED_LEVEL
from chalicelib.users.records import UserRecord

#: The namespace of the profile lists (a new one is filed by ``scripts/search_backfill.py``).
NAMESPACE = "profiles.v8"
#: The one scope of profiles (they have no category).
SCOPE = "all"
#: The analysis language of every profile: the analyzer's default (English, Snowball's Porter 2).
LANGUAGE = DEFAULT_LANGUAGE
#: BM25F boost and average length in words of each searched field (short profile fields).
BOOSTS = {"displayName": 2.0, "headline": 1.0, "skills": 1.5}
LENGTHS = {"displayName": 2.0, "headline": 8.0, "skills": 5.0}
#: Recency units per verification level: more than any ``updatedAt`` in microseconds (year 2286),
#: so the level orders first.
LEVEL_RANK = 10**16


def rank_of(level: int, updated_at: str) -> int:
    """The document recency of a profile: ``level x LEVEL_RANK + updatedAt`` in microseconds since
    the epoch (``updated_at``: ISO 8601 UTC)."""
    moment = datetime.fromisoformat(updated_at.replace("Z", "+00:00"))
    return level * LEVEL_RANK + int(moment.timestamp()) * 1_000_000 + moment.microsecond


def searchable(user: Mapping[str, Any]) -> bool:
    """Whether the user's profile is in profile search: every user's is, but a suspended user's
    while the suspension stands (``suspendedAt``; the suspension and the reinstatement each move
    the user's ``version``, so the Users stream files the profile out and in again)."""
    return not users.is_suspended(user)


def document(user: Mapping[str, Any]) -> Document:
    """The profile document of a Users item (filed while :func:`searchable`)."""
    profile = facets(user)  # type: ignore[arg-type]
    recruiting = user.get("recruiting") or {}
    keywords: dict[str, tuple[str, ...]] = {"open": (str(profile.open_to_work).lower(),)}
    if profile.country is not None:
        keywords["country"] = (profile.country,)
    if profile.seniority is not None:
        keywords["seniority"] = (profile.seniority,)
    if profile.remote is not None:
        keywords["remote"] = (str(profile.remote).lower(),)
    if profile.skills:
        keywords["skill"] = tuple(sorted(profile.skills))
    if profile.channels:
        keywords["channel"] = tuple(sorted(profile.channels))
    text = {"displayName": str(user.get("displayName") or ""), "headline": str(recruiting.get("headline") or ""),
            "skills": " ".join(sorted(profile.skills))}
    return Document(
        id=profile.user_id, version=users.version_of(user),  # type: ignore[arg-type]
        scope=SCOPE, newest=rank_of(profile.level, profile.updated_at),
        text={k: v for k, v in text.items() if v}, keywords=keywords, numbers={"level": Decimal(profile.level)},
    )


def load(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, UserRecord]:
    """The users of ``entries`` (id -> entry projection), one BatchGetItem, each kept only while
    its current profile is searchable and the one its entry was filed from (a page never shows a profile at a
    place or with values it has left; the stream files it anew about a second later)."""
    found = users.get_users(list(entries))
    current: dict[str, UserRecord] = {}
    for user_id, user in found.items():
        if not searchable(user):  # suspended after its entries were filed
            continue
        filed = projection(document(user))
        entry = entries[user_id]
        if all(entry.get(name) == value for name, value in filed.items()):
            current[user_id] = user
    return current


def _language(_scope: str) -> str:
    return LANGUAGE


def spec() -> IndexSpec:
    """The profile index spec."""
    return IndexSpec(namespace=NAMESPACE, boosts=BOOSTS, lengths=LENGTHS, language=_language, document=document, load=load)


def store() -> DynamoStore:
    """The SearchIndex table as the engine's store."""
    return search_index()


def engine_query(query: ProfileSearchQuery, words: Sequence[str]) -> engine.Query:
    """The engine's typed query of a profile search (``words``: the folded words of ``q``):
    relevance order with words, else the profile order (newest first)."""
    keywords: list[tuple[str, str]] = []
    if query.country is not None:
        keywords.append(("country", query.country))
    if query.openToWork is not None:
        keywords.append(("open", str(query.openToWork).lower()))
    if query.seniority is not None:
        keywords.append(("seniority", query.seniority))
    if query.remote is not None:
        keywords.append(("remote", str(query.remote).lower()))
    if query.channel is not None:
        keywords.append(("channel", query.channel.value))
    keywords += [("skill", skill) for skill in dict.fromkeys(query.skills or ())]
    # Bounded above by the highest level, so the range reads the buckets of the levels only.
    ranges = (engine.NumberRange("level", Decimal(query.minVerifiedLevel), Decimal(MAX_VERIFIED_LEVEL)),) \
        if query.minVerifiedLevel else ()
    order: engine.Order = "relevance" if words else "newest"
    return engine.Query((SCOPE,), tuple(words), tuple(keywords), ranges, None, order)
