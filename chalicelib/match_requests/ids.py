"""Deterministic request ids: the key that makes "one request per requester and subject" atomic.

``requestId = "req_" + subjectId + "_" + digest`` where ``digest`` is the first 20 base32
characters (100 bits) of SHA-256 over ``subjectType``, ``requesterId`` and ``subjectId``.

* Uniqueness: the same requester asking about the same subject always computes the same key,
  so a ``Put`` with ``attribute_not_exists(requestId)`` lets exactly one of any number of
  concurrent attempts succeed; no guard item, no read-before-write.
* Reads: listing and profile detail compute the caller's request id and fetch it in the same
  BatchGetItem as the other items they need (``myRequest``, ``myProfileRequest``).
* Decisions: the subject id is recoverable from the request id, so a decision reads the
  request and its listing in one BatchGetItem.

Ids stay opaque to clients; only this module builds or parses them.
"""

from __future__ import annotations

import base64
import hashlib

from chalicelib.edge.path_ids import within_limit
from chalicelib.kernel.subject_types import SubjectType

PREFIX = "req_"
DIGEST_LENGTH = 20


def request_id(subject_type: SubjectType, requester_id: str, subject_id: str) -> str:
    """The id of ``requester_id``'s request about ``subject_id``.

    Parameters
    ----------
    subject_type:
        LISTING or PROFILE.
    requester_id:
        The requesting user's id.
    subject_id:
        The listing id (LISTING) or the requested user's id (PROFILE).

    Returns
    -------
    str
        ``req_<subjectId>_<20 lower-case base32 characters>``.
    """
    material = "\x1f".join((subject_type.value, requester_id, subject_id)).encode()
    digest = base64.b32encode(hashlib.sha256(material).digest()).decode().lower()[:DIGEST_LENGTH]
    return f"{PREFIX}{subject_id}_{digest}"


def subject_of(request_id_: str) -> str | None:
    """The subject id embedded in a request id, or ``None`` when it is not one of ours."""
    if not request_id_.startswith(PREFIX) or not within_limit(request_id_):
        return None
    subject, _, digest = request_id_[len(PREFIX) :].rpartition("_")
    if not subject or len(digest) != DIGEST_LENGTH:
        return None
    return subject
