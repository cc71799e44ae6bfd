"""Request and response models of users, profiles and channels (DESIGN §2)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator

from chalicelib.kernel.channels import ChannelKey
from chalicelib.kernel.json_types import SINGLE_LINE, Timestamp, not_nullable
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import CursorQuery
from chalicelib.kernel.profile_summary import Country, HttpUrlString, ProfileSummary, SocialLinks

__all__ = ["Country", "HttpUrlString", "ProfileSummary", "SocialLinks"]  # re-exported: they live in profile_summary

#: Verification levels: 0 none, 1 email, 2 phone or identity document, 3 organization (our scale).
MAX_VERIFIED_LEVEL = 3

DisplayName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80), SINGLE_LINE]
Handle = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), SINGLE_LINE]
VerifiedLevel = Annotated[int, Field(ge=0, le=MAX_VERIFIED_LEVEL)]


#: A skill: lower-cased, 1..50 characters, not blank.
Skill = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=50), SINGLE_LINE]

#: ``recruiting.headline``: one line of 1..200 characters, not blank (``null`` clears it).
Headline = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), SINGLE_LINE]
#: One of ``recruiting.roles``: 1..80 characters.
RoleName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80), SINGLE_LINE]
#: Values of ``recruiting.seniority``.
Seniority = Literal["intern", "junior", "mid", "senior", "lead", "principal", "executive"]


def _unique(skills: list[str]) -> list[str]:
    """``skills`` without repeats, in their first order."""
    return list(dict.fromkeys(skills))


class Recruiting(Model):
    """Recruiting information on a profile (DESIGN §2: openToWork, headline, skills, seniority, roles, remote)."""

    model_config = ConfigDict(extra="forbid")
    openToWork: bool = False
    headline: Headline | None = None
    skills: list[Skill] = Field(
        default_factory=list, max_length=50
    )
    seniority: Seniority | None = None
    roles: list[RoleName] = Field(default_factory=list, max_length=20)
    remote: bool | None = None

    @field_validator("skills")
    @classmethod
    def _unique_skills(cls, value: list[str]) -> list[str]:
        return _unique(value)


class RequestPolicy(Model):
    """Who may send this user profile requests."""

    model_config = ConfigDict(extra="forbid")
    acceptingRequests: bool = True
    minVerifiedLevel: VerifiedLevel = 0


class RecruitingPatch(Model):
    """``recruiting`` of ``PATCH /v1/me/profile``: the keys to change; ``null`` resets a key to
    its default (``openToWork`` false, ``skills`` and ``roles`` empty, the others unset)."""

    model_config = ConfigDict(extra="forbid")
    openToWork: bool | None = None
    headline: Headline | None = None
    skills: list[Skill] | None = Field(default=None, max_length=50)
    seniority: Seniority | None = None
    roles: list[RoleName] | None = Field(default=None, max_length=20)
    remote: bool | None = None

    @field_validator("skills")
    @classmethod
    def _unique_skills(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _unique(value)


class RequestPolicyPatch(Model):
    """``requestPolicy`` of ``PATCH /v1/me/profile``: the keys to change; ``null`` resets a key
    to its default (``acceptingRequests`` true, ``minVerifiedLevel`` 0)."""

    model_config = ConfigDict(extra="forbid")
    acceptingRequests: bool | None = None
    minVerifiedLevel: VerifiedLevel | None = None


class Profile(ProfileSummary):
    """A user's own profile as ``GET /v1/me`` returns it."""

    userId: str
    recruiting: Recruiting
    requestPolicy: RequestPolicy
    activeChannels: list[str]
    createdAt: Timestamp
    updatedAt: Timestamp


class ProfilePatch(Model):
    """Body of ``PATCH /v1/me/profile``: any subset of the fields.

    ``country: null`` clears the country and ``socialLinks: null`` every link; the objects
    ``socialLinks``, ``recruiting`` and ``requestPolicy`` are merged key by key (a ``null``
    inside clears that key). ``displayName``, ``recruiting`` and ``requestPolicy`` cannot be
    null.
    """

    model_config = ConfigDict(extra="forbid")
    # null is refused for these three (``_not_null``), so their schema does not offer it.
    displayName: DisplayName | None = Field(default=None, json_schema_extra=not_nullable)
    country: Country | None = None
    socialLinks: SocialLinks | None = None
    recruiting: RecruitingPatch | None = Field(default=None, json_schema_extra=not_nullable)
    requestPolicy: RequestPolicyPatch | None = Field(default=None, json_schema_extra=not_nullable)

    @field_validator("displayName", "recruiting", "requestPolicy", mode="before")
    @classmethod
    def _not_null(cls, value: object) -> object:
        if value is None:
            raise ValueError("may not be null")
        return value


class Channel(Model):
    """A connected channel."""

    key: ChannelKey
    handle: str
    connectedAt: Timestamp


class ChannelList(Model):
    """Response of ``GET /v1/me/channels``."""

    channels: list[Channel]


class ChannelConnect(Model):
    """Body of ``PUT /v1/me/channels/{key}``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"handle": "@ada"}]})
    handle: Handle


class AdminUserCreate(Model):
    """Body of ``POST /v1/admin/users``; ``admin`` gives the new key the admin scope."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"displayName": "Ada Lovelace", "country": "gb", "verifiedLevel": 1, "channels": {"telegram": "@ada"}},
    ]})
    displayName: DisplayName
    country: Country | None = None
    verifiedLevel: VerifiedLevel = 0
    channels: dict[ChannelKey, Handle] = Field(default_factory=dict)
    admin: bool = False


class AdminUserPatch(Model):
    """Body of ``PATCH /v1/admin/users/{userId}`` (DESIGN: ``{verifiedLevel?}``; ``{}`` changes nothing)."""

    model_config = ConfigDict(extra="forbid")
    verifiedLevel: VerifiedLevel | None = None


class CreatedUser(Model):
    """Response of ``POST /v1/admin/users``: the API key is shown only here."""

    userId: str
    apiKey: str
    profile: Profile


class AdminUserQuery(CursorQuery):
    """Query of ``GET /v1/admin/users``: users by display name (case and accents folded, then id).

    ``q`` keeps the display names starting with it; ``id`` is one exact user id; ``country`` and
    ``verifiedLevel`` filter; any combination. ``pageSize`` 1..100 (default 20) and the opaque
    ``cursor`` of the previous page (signed, bound to the filters, the administrator and ``pageSize``).
    """

    q: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80), SINGLE_LINE] | None = None
    id: Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$")] | None = None
    country: Country | None = None
    verifiedLevel: VerifiedLevel | None = None


class ErasureProgress(Model):
    """Where a running account erasure stands (``DELETE /v1/me``; the whole record:
    ``GET /v1/admin/erasures/{userId}``)."""

    status: Literal["in_progress"] = "in_progress"
    step: str = Field(description="The step running now (keys, listings, webhooks, saved_searches, requests, "
                      "conversations, blocks, profile).")
    requestedAt: Timestamp


class AdminUser(Profile):
    """A user as administrators list them: the profile, while suspended since when, and while
    their account is being erased the erasure's progress."""

    suspendedAt: Timestamp | None = Field(default=None, description="Set while the user is suspended (a report decision).")
    erasure: ErasureProgress | None = Field(
        default=None, description="Set while the account is being erased; the user leaves the list when the erasure completes."
    )


class AdminUserPage(Model):
    """Response of ``GET /v1/admin/users``: users by display name; ``nextCursor`` is ``null`` on the last page."""

    users: list[AdminUser]
    pageSize: int
    nextCursor: str | None
