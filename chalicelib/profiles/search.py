"""Profile sourcing search (``GET /v1/profiles/search``), without a Scan.

Candidates come from one index Query: ``byCountry`` when ``country`` is given, else the eight
``bySearchShard`` partitions ``S0``..``S7`` queried concurrently (every user is in exactly one
shard). The other filters, ``q`` and the order run in memory, so ``total`` is exact. The read
cost grows with the users of the country (or all users, without one); a search engine
(OpenSearch via DynamoDB zero-ETL) is the next step at scale, as for listings.

Order: verification level (highest first), then the most recently updated profile, then
``userId``, so pages are stable.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from chalicelib.profiles.models import ProfilePage, ProfileSearchQuery
from chalicelib.profiles.service import public_profile
from chalicelib.text import words
from chalicelib.users import repository as users
from chalicelib.users.records import UserRecord
from chalicelib.users.service import active_channels


def candidates(country: str | None) -> list[UserRecord]:
    """The user items a search must look at: one country, or all shards concurrently."""
    if country is not None:
        return users.query_country(country)
    shards = [f"S{i}" for i in range(users.SEARCH_SHARDS)]
    with ThreadPoolExecutor(max_workers=len(shards)) as pool:
        batches = list(pool.map(users.query_shard, shards))
    return [user for batch in batches for user in batch]


def _searchable_words(user: UserRecord) -> set[str]:
    recruiting = user.get("recruiting") or {}
    text = " ".join([user.get("displayName", ""), recruiting.get("headline") or "", *(recruiting.get("skills") or [])])
    return set(words(text))


def matches(user: UserRecord, query: ProfileSearchQuery, terms: list[str]) -> bool:
    """True when ``user`` passes every filter of ``query`` (``terms``: the folded words of ``q``)."""
    recruiting = user.get("recruiting") or {}
    checks = (
        query.country is None or user.get("country") == query.country,
        query.minVerifiedLevel is None or int(user.get("verifiedLevel", 0)) >= query.minVerifiedLevel,
        not query.skills or set(query.skills) <= set(recruiting.get("skills") or []),
        query.openToWork is None or bool(recruiting.get("openToWork", False)) == query.openToWork,
        query.seniority is None or recruiting.get("seniority") == query.seniority,
        query.remote is None or recruiting.get("remote") == query.remote,
        query.channel is None or query.channel.value in active_channels(user),
    )
    if not all(checks):
        return False
    if not terms:
        return True
    vocabulary = _searchable_words(user)
    return all(any(word.startswith(term) for word in vocabulary) for term in terms)


def search_profiles(query: ProfileSearchQuery) -> ProfilePage:
    """One page of the profiles matching ``query``, in the documented order."""
    terms = words(query.q or "")
    found = [u for u in candidates(query.country) if matches(u, query, terms)]
    found.sort(key=lambda u: u["userId"])
    found.sort(key=lambda u: (int(u.get("verifiedLevel", 0)), u.get("updatedAt", "")), reverse=True)
    position = query.position_in("profiles.search", "")
    return ProfilePage(
        profiles=[public_profile(u) for u in position.slice(found)], total=len(found), page=position.page,
        pageSize=position.page_size, nextCursor=position.next_cursor(position.after(len(found))),
    )
