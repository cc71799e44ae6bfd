"""Ids taken from a URL path (``{listingId}``, ``{userId}``, ``{requestId}``, ...): their shape.

Every id this service issues is far shorter than :data:`MAX_LENGTH` characters and made of
ASCII letters, digits, ``_`` and ``-`` (``<prefix>_<ULID>``, category and channel keys,
base64url approval ids), so any other path id names nothing: the HTTP edge
(:func:`chalicelib.edge.http.route`) answers it 404 without reading DynamoDB, for every route
(DynamoDB would reject a key over 2048 bytes with a ValidationException, a 500). Approval ids
carry an SQS receipt handle (up to 1024 characters) and get :data:`LONG_IDS` instead. This
module is the one place of that rule; the HTTP edge asks :func:`is_valid`, services that take
ids from elsewhere ask :func:`within_limit`.
"""

from __future__ import annotations

import re

#: Longest id accepted from a path, in characters.
MAX_LENGTH = 128
#: Path parameters whose ids are longer by design, and their limit (base64url of an SQS receipt handle).
LONG_IDS: dict[str, int] = {"approvalId": 2048}
#: The characters of every id the service issues (as an OpenAPI/ECMA 262 pattern).
PATTERN = "^[A-Za-z0-9_-]+$"
_ALLOWED = re.compile(r"[A-Za-z0-9_-]+")


def within_limit(path_id: str) -> bool:
    """Whether ``path_id`` may name a record at all (``len(path_id) <= MAX_LENGTH``).

    Parameters
    ----------
    path_id:
        The id as it appeared in the path (URL-decoded).

    Returns
    -------
    bool
        ``False`` for an id longer than :data:`MAX_LENGTH` characters: answer 404 without a read.
    """
    return len(path_id) <= MAX_LENGTH


def is_valid(name: str, path_id: str) -> bool:
    """Whether ``path_id``, the value of path parameter ``name``, can name anything at all.

    Parameters
    ----------
    name:
        The path parameter (``listingId``, ``approvalId``, ...).
    path_id:
        Its value as it appeared in the path (URL-decoded).

    Returns
    -------
    bool
        ``False`` for an empty id, one longer than its limit (:data:`MAX_LENGTH`, or
        :data:`LONG_IDS`), or one with a character outside ``A-Z a-z 0-9 _ -``: answer 404
        without a read.
    """
    return len(path_id) <= LONG_IDS.get(name, MAX_LENGTH) and _ALLOWED.fullmatch(path_id) is not None


#: The NOT_FOUND message of a malformed id, by path parameter, as the services word it for unknown ids.
_NOT_FOUND: dict[str, str] = {
    "approvalId": "Unknown approval id",
    "listingId": "Listing '{id}' not found",
    "requestId": "Request '{id}' not found",
    "conversationId": "Conversation '{id}' not found",
    "webhookId": "Webhook '{id}' not found",
    "userId": "User '{id}' not found",
}


def not_found_message(name: str, path_id: str) -> str:
    """The 404 message for a malformed ``path_id`` of parameter ``name`` (the id cut to
    :data:`MAX_LENGTH` characters, control characters escaped)."""
    shown = path_id[:MAX_LENGTH].encode("unicode_escape").decode("ascii")
    return _NOT_FOUND.get(name, "'{id}' not found").format(id=shown)


def loggable(path: str) -> str:
    """``path`` as a log line may hold it: each segment longer than :data:`MAX_LENGTH` characters cut
    to that many, followed by ``...(<n> characters)``, so a request with a 5,000-character id
    neither fills the log nor copies into it what a client chose to send.

    Parameters
    ----------
    path:
        The request path (``/v1/listings/<id>``).

    Returns
    -------
    str
        ``path`` unchanged when no segment is longer than :data:`MAX_LENGTH`.
    """
    if len(path) <= MAX_LENGTH:
        return path
    return "/".join(s if len(s) <= MAX_LENGTH else f"{s[:MAX_LENGTH]}...({len(s)} characters)" for s in path.split("/"))
