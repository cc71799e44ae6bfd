"""Request and response models of users, profiles and channels (DESIGN §2)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, field_validator

from chalicelib.channels import ChannelKey
from chalicelib.countries import normalize_country
from chalicelib.model_base import Model
from chalicelib.urls import absolute_http_url

#: Verification levels: 0 none, 1 email, 2 phone or identity document, 3 organization (our scale).
MAX_VERIFIED_LEVEL = 3

DisplayName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]
Country = Annotated[str, AfterValidator(normalize_country)]
Handle = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
VerifiedLevel = Annotated[int, Field(ge=0, le=MAX_VERIFIED_LEVEL)]


def _http_url(value: str | None) -> str | None:
    return None if value is None else absolute_http_url(value)  # InvalidUrl is a ValueError: pydantic reports it


HttpUrlString = Annotated[str | None, AfterValidator(_http_url)]


class SocialLinks(Model):
    """Social profile URLs; exactly these platform keys (spec §6), each optional."""

    model_config = ConfigDict(extra="forbid")
    x: HttpUrlString = None
    linkedin: HttpUrlString = None
    github: HttpUrlString = None
    instagram: HttpUrlString = None
    tiktok: HttpUrlString = None
    youtube: HttpUrlString = None
    website: HttpUrlString = None


#: Values of ``recruiting.seniority``.
Seniority = Literal["intern", "junior", "mid", "senior", "lead", "principal", "executive"]


class Recruiting(Model):
    """Recruiting information on a profile (DESIGN §2: openToWork, headline, skills, seniority, roles, remote)."""

    model_config = ConfigDict(extra="forbid")
    openToWork: bool = False
    headline: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = None
    skills: list[Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=50)]] = Field(
        default_factory=list, max_length=50
    )
    seniority: Seniority | None = None
    roles: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]] = Field(
        default_factory=list, max_length=20
    )
    remote: bool | None = None

    @field_validator("skills")
    @classmethod
    def _unique_skills(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class RequestPolicy(Model):
    """Who may send this user profile requests."""

    model_config = ConfigDict(extra="forbid")
    acceptingRequests: bool = True
    minVerifiedLevel: VerifiedLevel = 0


class ProfileSummary(Model):
    """The requester summary carried by requests and webhook payloads (spec §2, §6)."""

    displayName: str
    verifiedLevel: int
    country: str | None
    socialLinks: SocialLinks


class Profile(ProfileSummary):
    """A user's own profile as ``GET /v1/me`` returns it."""

    userId: str
    recruiting: Recruiting
    requestPolicy: RequestPolicy
    activeChannels: list[str]
    createdAt: str
    updatedAt: str


class ProfilePatch(Model):
    """Body of ``PATCH /v1/me/profile``: any subset of the fields.

    ``country: null`` clears the country and ``socialLinks: null`` every link; the objects
    ``socialLinks``, ``recruiting`` and ``requestPolicy`` are merged key by key (a ``null``
    inside clears that key). ``displayName``, ``recruiting`` and ``requestPolicy`` cannot be
    null.
    """

    model_config = ConfigDict(extra="forbid")
    displayName: DisplayName | None = None
    country: Country | None = None
    socialLinks: SocialLinks | None = None
    recruiting: Recruiting | None = None
    requestPolicy: RequestPolicy | None = None

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
    connectedAt: str


class ChannelList(Model):
    """Response of ``GET /v1/me/channels``."""

    channels: list[Channel]


class ChannelConnect(Model):
    """Body of ``PUT /v1/me/channels/{key}``."""

    model_config = ConfigDict(extra="forbid")
    handle: Handle


class AdminUserCreate(Model):
    """Body of ``POST /v1/admin/users``; ``admin`` gives the new key the admin scope."""

    model_config = ConfigDict(extra="forbid")
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
