"""What a match request or a conversation is about: a listing or a profile.

Shared by :mod:`chalicelib.match_requests` and :mod:`chalicelib.conversations`, which depend on
neither each other nor a common domain package for it.
"""

from __future__ import annotations

from enum import StrEnum


class SubjectType(StrEnum):
    """What a request is about: a listing (match request) or a profile (profile request)."""

    LISTING = "LISTING"
    PROFILE = "PROFILE"
