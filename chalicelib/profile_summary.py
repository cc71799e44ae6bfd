"""The profile summary every request and webhook payload carries, and its field types.

A foundation module (no domain package): users own the profiles, but the webhook event
catalogue (:mod:`chalicelib.webhooks.catalogue`) describes the same summary in its payloads, and
the two domains do not import each other.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, WithJsonSchema

from chalicelib.countries import COUNTRY_CODES, normalize_country

#: ISO 3166-1 alpha-2, lower case (the schema lists the codes; the server also folds case and spaces).
Country = Annotated[
    str,
    AfterValidator(normalize_country),
    WithJsonSchema({"type": "string", "enum": sorted(COUNTRY_CODES), "description": "ISO 3166-1 alpha-2 country code, lower case"}),
]

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


class ProfileSummary(BaseModel):
    """The requester summary carried by requests and webhook payloads (spec §2, §6)."""

    displayName: str
    verifiedLevel: int
    country: str | None
    socialLinks: SocialLinks
