"""Conditional requests (RFC 9110 §13): ``ETag`` on reads, ``If-None-Match`` -> 304, ``If-Match`` -> 412.

A listing or profile read answers ``ETag: "<version>-<digest>"``: ``version`` is the record's
``version`` attribute, which every write of the record increments, and ``digest`` the first 16
hex digits of the SHA-256 of the response body (some representations also hold caller-specific
parts, e.g. ``myRequest``, which the record's version does not cover).

* ``If-None-Match`` on such a GET: when one of the listed tags (or ``*``) equals the current
  ETag, the answer is ``304 Not Modified`` with the ETag and no body.
* ``If-Match`` on a PATCH, status change or DELETE of the record: the change is applied only if
  the record is still at the tag's ``version``, atomically (a DynamoDB condition expression on
  ``version`` in the write itself, never a read-then-write); otherwise 412
  ``PRECONDITION_FAILED`` and nothing changes. ``If-Match: *`` only requires the record to exist.
  A tag not of this API's form, or a weak tag (``W/``, never equal under the strong comparison
  RFC 9110 §13.1.1 requires), cannot match: 412. Only the tag's version is compared: the digest
  covers reader-specific parts of the representation, not the record the write changes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from chalicelib.kernel import errors

#: One entity tag of ours: ``"<version>-<16 hex digits>"``.
_OUR_TAG = re.compile(r'^"(\d{1,18})-[0-9a-f]{16}"$')


@dataclass(frozen=True)
class Versioned:
    """What a view returns for a read that carries an ``ETag``: the response model and the record's version."""

    result: Any
    version: int


def etag(version: int, body: bytes) -> str:
    """The strong entity tag of a representation: ``"<version>-<sha256(body)[:16]>"`` (quoted)."""
    return f'"{version}-{hashlib.sha256(body).hexdigest()[:16]}"'


def _tags(header: str) -> list[str]:
    """The entity tags of an ``If-Match``/``If-None-Match`` list (comma separated; ``*`` alone)."""
    return [t.strip() for t in header.split(",") if t.strip()]


def not_modified(if_none_match: str | None, current: str) -> bool:
    """Whether a GET with ``If-None-Match: if_none_match`` is answered 304 (weak comparison, RFC 9110 §13.1.2)."""
    if if_none_match is None:
        return False
    tags = _tags(if_none_match)
    return "*" in tags or current.removeprefix("W/") in {t.removeprefix("W/") for t in tags}


#: ``If-Match: *``: the record must exist, at any version.
ANY_VERSION = -1
#: An ``If-Match`` naming no strong tag this API issued (weak, malformed): no version matches it.
NO_VERSION = -2


def expected_version(if_match: str | None) -> int | None:
    """The record version an ``If-Match`` header requires: ``None`` without the header (or an empty one),
    :data:`ANY_VERSION` for ``*``, the version of the (first) tag this API issued, else
    :data:`NO_VERSION`.

    A tag that can never match is not refused here: the operation still answers 404 or 403 first
    when the resource is missing or not the caller's, and 412 only where it would have acted
    (RFC 9110 §13.2.1: preconditions are evaluated once the request would otherwise succeed).

    Raises
    ------
    RuleViolation
        The list names tags of this API of more than one version (field ``If-Match``): a write
        applies to the one version the client read, so which one is meant is unclear.
    """
    if if_match is None or not if_match.strip():  # an empty header names nothing: as if absent
        return None
    tags = _tags(if_match)
    if "*" in tags:
        return ANY_VERSION
    versions = {int(found.group(1)) for tag in tags if (found := _OUR_TAG.match(tag))}
    if len(versions) > 1:
        raise errors.RuleViolation.for_field(
            "If-Match", "names entity tags of several versions: send the one tag of the version you read"
        )
    return versions.pop() if versions else NO_VERSION


def check_version(current: int, expected: int | None) -> None:
    """Raise 412 unless ``expected`` (from :func:`expected_version`) admits a record at ``current``.

    Raises
    ------
    PreconditionFailed
        ``expected`` is a version other than ``current``.
    """
    if expected == NO_VERSION:
        raise errors.PreconditionFailed("If-Match names no current entity tag of this resource; read it again")
    if expected is not None and expected != ANY_VERSION and expected != current:
        raise errors.PreconditionFailed(
            f"The resource changed (version {current}, If-Match names version {expected}); read it again"
        )
