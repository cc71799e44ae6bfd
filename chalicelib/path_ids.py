"""Ids taken from a URL path (``{listingId}``, ``{userId}``, ``{requestId}``, ...): their length limit.

Every id this service issues is far shorter than :data:`MAX_LENGTH` characters, so a longer
path id names nothing: every route answers it 404 without reading DynamoDB (which would
reject a key over 2048 bytes with a ValidationException instead). This module is the one
place of that rule; the HTTP edge and the services ask :func:`within_limit`.
"""

from __future__ import annotations

#: Longest id accepted from a path, in characters.
MAX_LENGTH = 128


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
