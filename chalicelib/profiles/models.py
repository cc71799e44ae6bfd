"""Models of profile detail and profile search (spec §2 "Profile", DESIGN §2)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, field_validator

from chalicelib.kernel.channels import ChannelKey
from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import PageQuery, SearchEnvelope
from chalicelib.users.models import Country, Recruiting, Seniority, SocialLinks, VerifiedLevel

#: Most skills one search may require.
MAX_SEARCH_SKILLS = 20


class PublicProfile(Model):
    """What every authenticated user may see of a profile (search items)."""

    userId: str
    displayName: str
    verifiedLevel: int
    country: str | None
    socialLinks: SocialLinks
    recruiting: Recruiting
    activeChannels: list[str]
    createdAt: Timestamp
    updatedAt: Timestamp


class ProfilePage(SearchEnvelope):
    """Search envelope ``{profiles, total, totalRelation, page, pageSize, nextCursor}``."""

    profiles: list[PublicProfile]


class ProfileSearchQuery(PageQuery):
    """Sourcing filters of ``GET /v1/profiles/search``; all given filters must hold.

    ``q``: every word must match a word of the display name, headline or skills (case and
    accents ignored): a word of the same Snowball stem (English), for the last word a word it
    starts, or a word one typo away; results then come in relevance order
    (:mod:`chalicelib.profiles.search`).
    ``skills``: comma-separated, the profile must list all of them.
    ``channel``: the profile has that channel connected.
    """

    q: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = Field(default=None, description=(
        "Free-text search over the display name, headline and skills: every word must match (a word of the same "
        "English stem, e.g. `engineers` finds `engineering`; the last word also matches the words it starts; a word "
        "one typo away matches too, ranked after exact matches; case and accents ignored; function words such as `in` "
        "or `the` are ignored unless last). With `q` the order is relevance (BM25F; ties by verification level, then "
        "most recently updated), as in listing search"
    ))
    country: Country | None = None
    minVerifiedLevel: VerifiedLevel | None = None
    skills: list[str] | None = Field(default=None, max_length=MAX_SEARCH_SKILLS)
    openToWork: bool | None = None
    seniority: Seniority | None = None
    remote: bool | None = None
    channel: ChannelKey | None = None

    @field_validator("skills", mode="before")
    @classmethod
    def _split_skills(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip().lower() for part in value.split(",") if part.strip()]
        return value
