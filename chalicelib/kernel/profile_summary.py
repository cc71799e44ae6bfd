"""The profile summary every request and webhook payload carries, and its field types.

A foundation module (no domain package): users own the profiles, but the webhook event
catalogue (:mod:`chalicelib.webhooks.catalogue`) describes the same summary in its payloads, and
the two domains do not import each other.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, ConfigDict, WithJsonSchema

from chalicelib.kernel.countries import COUNTRY_CODES, normalize_country
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.urls import MAX_LENGTH as MAX_LINK_LENGTH
from chalicelib.kernel.urls import absolute_http_url

#: ISO 3166-1 alpha-2, lower case (the schema lists the codes; the server also folds case and spaces).
Country = Annotated[
    str,
    AfterValidator(normalize_country),
    WithJsonSchema({"type": "string", "enum": sorted(COUNTRY_CODES), "description": "ISO 3166-1 alpha-2 country code, lower case"}),
]

#: What :func:`chalicelib.kernel.urls.absolute_http_url` accepts, as a JSON Schema pattern: an http(s)
#: scheme, then a host of printable ASCII with a dot next to another character (no user info, no IPv6 literal,
#: optional port up to 65535), then any printable-ASCII path, query or fragment
#: (``tests/unit/test_http_url_pattern.py`` checks the two agree).
_HOST = r"[!\"$-.0-9;->A-Z^-~]"  # printable ASCII but # / : ? @ [ \ ]
_HOST_NO_DOT = r"[!\"$-\-0-9;->A-Z^-~]"
_PORT = r"(:(0*([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?)?"
HTTP_URL_PATTERN = (
    rf"^[Hh][Tt][Tt][Pp][Ss]?://{_HOST}*({_HOST_NO_DOT}[.]|[.]{_HOST_NO_DOT}){_HOST}*{_PORT}([/?#][!-~]*)?$"
)


def _http_url(value: str | None) -> str | None:
    return None if value is None else absolute_http_url(value)  # InvalidUrl is a ValueError: pydantic reports it


HttpUrlString = Annotated[
    str | None,
    AfterValidator(_http_url),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": HTTP_URL_PATTERN, "maxLength": MAX_LINK_LENGTH}, {"type": "null"}]}),
]


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


class ProfileSummary(Model):
    """The requester summary carried by requests and webhook payloads (spec §2, §6)."""

    displayName: str
    verifiedLevel: int
    country: str | None
    socialLinks: SocialLinks
