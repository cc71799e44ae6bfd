"""Profile sourcing search (``GET /v1/profiles/search``) on the search engine.

A parsed :class:`~chalicelib.profiles.models.ProfileSearchQuery` becomes the engine's typed query
(:func:`chalicelib.profiles.spec.engine_query`) over the profile index
(:mod:`chalicelib.profiles.spec`) and is answered by :func:`chalicelib.search.engine.search`,
the pipeline listing search runs on (docs/search.md).

Orders: with ``q``, relevance (BM25F over the display name, headline and skills; fewer typo
corrections first, ties in the profile order); without, the profile order: verification level
(highest first), then the most recently updated profile, then ``userId``. ``nextCursor``
carries the engine's position of the page's last profile. The index follows profile changes
through the Users table's stream (:mod:`chalicelib.profiles.handlers`), about a second behind;
a profile that changed since it was filed is left out until it is filed again.
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.blocks import api as blocks
from chalicelib.kernel import errors
from chalicelib.kernel.text import words
from chalicelib.profiles import spec
from chalicelib.profiles.facets import facets
from chalicelib.profiles.models import ProfilePage, ProfileSearchQuery
from chalicelib.profiles.service import public_profile_fields
from chalicelib.search import analysis, engine
from chalicelib.users.records import UserRecord


def matches(user: UserRecord, query: ProfileSearchQuery, terms: Sequence[str]) -> bool:
    """True when ``user`` is searchable (:func:`chalicelib.profiles.spec.searchable`) and passes
    every filter of ``query`` (``terms``: the folded words of ``q``).

    The engine's rule on one profile: each ``q`` word matches a term of the display name,
    headline or skills (:func:`chalicelib.search.analysis.kind`: its stem, for the last word a
    term it starts or that starts it, or a term one typo from its stem, two for a long word; a
    stop word that is not last is ignored), ``skills`` are all listed, the other filters are
    equal (``minVerifiedLevel``: at least).
    """
    profile = facets(user)
    checks = (
        spec.searchable(user),
        query.country is None or profile.country == query.country,
        query.minVerifiedLevel is None or profile.level >= query.minVerifiedLevel,
        not query.skills or set(query.skills) <= profile.skills,
        query.openToWork is None or profile.open_to_work == query.openToWork,
        query.seniority is None or profile.seniority == query.seniority,
        query.remote is None or profile.remote == query.remote,
        query.channel is None or query.channel.value in profile.channels,
    )
    if not all(checks):
        return False
    if not terms:
        return True
    held = {t for text in spec.document(user).text.values() for t in analysis.terms_of(text, spec.LANGUAGE)}
    return all(any(analysis.kind(word, term) is not None for term in held)
               for word in analysis.query_words(terms, spec.LANGUAGE))


def search_profiles(query: ProfileSearchQuery, viewer_id: str | None = None) -> ProfilePage:
    """One page of the profiles matching ``query``, in the documented order.

    ``viewer_id``'s blocks (users they block or are blocked by, one Query read while the search
    runs) are left out of the page after it is read: a page may then hold fewer profiles than
    ``pageSize``, and ``total`` counts them (the index is shared by every viewer).

    Returns
    -------
    ProfilePage
        ``{profiles, total, totalRelation, page, pageSize, nextCursor}``.

    Raises
    ------
    RuleViolation
        The cursor is malformed, edited or belongs to another query (field ``cursor``), or
        ``page`` contradicts it (field ``page``).
    """
    position = query.position_in("profiles.search", "")
    hidden = blocks.hidden_from_later(viewer_id)
    try:
        result = engine.search(
            spec.spec(), spec.store(), spec.engine_query(query, words(query.q or "")), position.page_size,
            offset=0 if position.key else position.offset, after=position.key,
            skipped=position.offset if position.key else 0,
        )
    except engine.InvalidPosition as exc:
        raise errors.RuleViolation.for_field("cursor", "is not a cursor of this search", "Invalid cursor") from exc
    excluded = hidden()
    shown = [hit.record for hit in result.hits if hit.id not in excluded]
    last = result.hits[-1].key if result.hits else None
    return ProfilePage.model_validate({  # one validation for the page, not one per profile
        "profiles": [public_profile_fields(u) for u in shown], "total": result.total,  # type: ignore[arg-type]
        "totalRelation": result.relation, "page": position.page, "pageSize": position.page_size,
        "nextCursor": position.next_cursor(result.more, last),
    })
