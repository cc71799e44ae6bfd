"""Request and response models of users, profiles and channels (DESIGN §2)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema, field_validator

from chalicelib.channels import ChannelKey
from chalicelib.countries import COUNTRY_CODES, normalize_country
from chalicelib.json_types import INTEGRAL_FLOAT, NON_BLANK, Timestamp, not_nullable

#: Verification levels: 0 none, 1 email, 2 phone or identity document, 3 organization (our scale).
MAX_VERIFIED_LEVEL = 3

DisplayName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80, pattern=NON_BLANK)]
#: ISO 3166-1 alpha-2, lower case (the schema lists the codes; the server also folds case and spaces).
Country = Annotated[
    str,
    AfterValidator(normalize_country),
    WithJsonSchema({"type": "string", "enum": sorted(COUNTRY_CODES), "description": "ISO 3166-1 alpha-2 country code, lower case"}),
]
Handle = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=NON_BLANK)]
VerifiedLevel = Annotated[int, Field(ge=0, le=MAX_VERIFIED_LEVEL), INTEGRAL_FLOAT]


#: A social link: an absolute http(s) URL of printable ASCII (percent-encode the rest) with a dot
#: after the scheme; the schema states the same pattern.
HTTP_URL_PATTERN = r"^[Hh][Tt][Tt][Pp][Ss]?://[!-~]*[.][!-~]*$"
MAX_LINK_LENGTH = 2048


def _http_url(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if len(value) > MAX_LINK_LENGTH or not re.fullmatch(HTTP_URL_PATTERN, value):
        raise ValueError("must be an absolute http(s) URL of printable ASCII characters")
    return value


HttpUrlString = Annotated[
    str | None,
    AfterValidator(_http_url),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": HTTP_URL_PATTERN, "maxLength": MAX_LINK_LENGTH}, {"type": "null"}]}),
]


class SocialLinks(BaseModel):
    """Social profile URLs; exactly these platform keys (spec §6), each optional."""

    model_config = ConfigDict(extra="forbid")
    x: HttpUrlString = None
    linkedin: HttpUrlString = None
    github: HttpUrlString = None
    instagram: HttpUrlString = None
    tiktok: HttpUrlString = None
    youtube: HttpUrlString = None
    website: HttpUrlString = None


#: A skill: lower-cased, 1..50 characters, not blank.
Skill = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=50, pattern=NON_BLANK)]

#: Values of ``recruiting.seniority``.
Seniority = Literal["intern", "junior", "mid", "senior", "lead", "principal", "executive"]


class Recruiting(BaseModel):
    """Recruiting information on a profile (DESIGN §2: openToWork, headline, skills, seniority, roles, remote)."""

    model_config = ConfigDict(extra="forbid")
    openToWork: bool = False
    headline: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = None
    skills: list[Skill] = Field(
        default_factory=list, max_length=50
    )
    seniority: Seniority | None = None
    roles: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80, pattern=NON_BLANK)]] = Field(
        default_factory=list, max_length=20
    )
    remote: bool | None = None

    @field_validator("skills")
    @classmethod
    def _unique_skills(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class RequestPolicy(BaseModel):
    """Who may send this user profile requests."""

    model_config = ConfigDict(extra="forbid")
    acceptingRequests: bool = True
    minVerifiedLevel: VerifiedLevel = 0


class ProfileSummary(BaseModel):
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
    createdAt: Timestamp
    updatedAt: Timestamp


class ProfilePatch(BaseModel):
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
    recruiting: Recruiting | None = Field(default=None, json_schema_extra=not_nullable)
    requestPolicy: RequestPolicy | None = Field(default=None, json_schema_extra=not_nullable)

    @field_validator("displayName", "recruiting", "requestPolicy", mode="before")
    @classmethod
    def _not_null(cls, value: object) -> object:
        if value is None:
            raise ValueError("may not be null")
        return value


class Channel(BaseModel):
    """A connected channel."""

    key: ChannelKey
    handle: str
    connectedAt: Timestamp


class ChannelList(BaseModel):
    """Response of ``GET /v1/me/channels``."""

    channels: list[Channel]


class ChannelConnect(BaseModel):
    """Body of ``PUT /v1/me/channels/{key}``."""

    model_config = ConfigDict(extra="forbid")
    handle: Handle


class AdminUserCreate(BaseModel):
    """Body of ``POST /v1/admin/users``; ``admin`` gives the new key the admin scope."""

    model_config = ConfigDict(extra="forbid")
    displayName: DisplayName
    country: Country | None = None
    verifiedLevel: VerifiedLevel = 0
    channels: dict[ChannelKey, Handle] = Field(default_factory=dict)
    admin: bool = False


class AdminUserPatch(BaseModel):
    """Body of ``PATCH /v1/admin/users/{userId}`` (DESIGN: ``{verifiedLevel?}``; ``{}`` changes nothing)."""

    model_config = ConfigDict(extra="forbid")
    verifiedLevel: VerifiedLevel | None = None


class CreatedUser(BaseModel):
    """Response of ``POST /v1/admin/users``: the API key is shown only here."""

    userId: str
    apiKey: str
    profile: Profile
