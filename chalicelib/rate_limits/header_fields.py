"""The ``RateLimit-Policy`` and ``RateLimit`` response header fields, pure.

Syntax of draft-ietf-httpapi-ratelimit-headers-11 (IETF HTTPAPI working group, May 2026), the
latest draft: both fields are Structured Field Lists (RFC 9651) of Items whose value is the
policy's name as an sf-string, with Integer parameters:

* ``RateLimit-Policy: "per-key";q=100;w=5``: ``q`` the quota in requests, ``w`` the window in
  seconds (draft §3.1);
* ``RateLimit: "per-key";r=99;t=1``: ``r`` the quota still available, ``t`` the seconds within
  which the client can use no more than ``r`` (draft §4.1).

No partition key (``pk``) is sent: the partition is the API key itself (or, for quotas, its user),
which the client knows, and the draft advises against echoing identifying values (§6.1, §8.2).
"""

from __future__ import annotations

import re

#: Policy names are fixed, lower-case tokens of ours; a name outside this form would need escaping.
_NAME = re.compile(r"^[a-z][a-z0-9-]*$")

POLICY_FIELD = "RateLimit-Policy"
LIMIT_FIELD = "RateLimit"


def _name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"policy name {name!r} is not a lower-case token")
    return f'"{name}"'


def _integer(value: int) -> int:
    # sf-integer: at most 15 digits (RFC 9651 §3.3.1); every value here is non-negative (draft §3.1.1, §4.1.1).
    if not 0 <= value <= 999_999_999_999_999:
        raise ValueError(f"{value} is not a non-negative sf-integer")
    return value


def policy_item(name: str, quota: int, window_seconds: int) -> str:
    """One Quota Policy Item: ``"<name>";q=<quota>;w=<window>`` (``window_seconds`` >= 1).

    Raises
    ------
    ValueError
        A name that is not a lower-case token, or a number outside sf-integer (or a window of 0).
    """
    if window_seconds < 1:
        raise ValueError("the window must be at least 1 second (draft §3.1.3)")
    return f"{_name(name)};q={_integer(quota)};w={_integer(window_seconds)}"


def limit_item(name: str, remaining: int, window_seconds: int) -> str:
    """One Service Limit Item: ``"<name>";r=<remaining>;t=<seconds>``.

    Raises
    ------
    ValueError
        As :func:`policy_item`.
    """
    return f"{_name(name)};r={_integer(remaining)};t={_integer(window_seconds)}"
