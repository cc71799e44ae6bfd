"""What profile search can filter on, read out of a user item in one place.

Both the matching rule (:func:`chalicelib.profiles.search.matches`) and the index document of a
profile (:func:`chalicelib.profiles.spec.document`) read a user through :func:`facets`, so a filter and
its index list cannot disagree on what a field means (a missing ``openToWork`` is ``False``,
a missing ``remote`` is neither ``true`` nor ``false``, a missing level is 0, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.kernel.text import words
from chalicelib.users.records import UserRecord
from chalicelib.users.service import active_channels


@dataclass(frozen=True)
class Facets:
    """The searchable values of one profile.

    Attributes
    ----------
    user_id:
        The user's id.
    level:
        Verification level, 0..3 (:data:`chalicelib.users.models.MAX_VERIFIED_LEVEL`).
    updated_at:
        ISO 8601 UTC with milliseconds (fixed width, :func:`chalicelib.kernel.clock.iso`).
    country:
        ISO 3166-1 alpha-2 as stored, or ``None``.
    skills:
        The skills as stored (lower case).
    open_to_work:
        ``recruiting.openToWork``; a missing value is ``False``.
    seniority:
        ``recruiting.seniority`` or ``None``.
    remote:
        ``recruiting.remote``: ``True``, ``False`` or ``None`` (unset: matches neither filter value).
    channels:
        Keys of the connected channels.
    words:
        The folded words (:func:`chalicelib.kernel.text.words`) of the display name, the headline and
        the skills.
    """

    user_id: str
    level: int
    updated_at: str
    country: str | None
    skills: frozenset[str]
    open_to_work: bool
    seniority: str | None
    remote: bool | None
    channels: frozenset[str]
    words: frozenset[str]


def facets(user: UserRecord) -> Facets:
    """The :class:`Facets` of a Users item (:class:`~chalicelib.users.records.UserRecord`)."""
    recruiting = user.get("recruiting") or {}
    skills = list(recruiting.get("skills") or [])
    text = " ".join([user.get("displayName", ""), recruiting.get("headline") or "", *skills])
    remote = recruiting.get("remote")
    return Facets(
        user_id=user["userId"],
        level=int(user.get("verifiedLevel", 0)),
        updated_at=user["updatedAt"],
        country=user.get("country"),
        skills=frozenset(skills),
        open_to_work=bool(recruiting.get("openToWork", False)),
        seniority=recruiting.get("seniority"),
        remote=remote if isinstance(remote, bool) else None,
        channels=frozenset(active_channels(user)),
        words=frozenset(words(text)),
    )
