"""Users-table stream consumer: keeps the profile posting lists in step with the profiles (via ``app.py``).

Every change of a user (a new image with its ``version``, or a removal) files the user under
exactly the posting keys of its new image (:func:`chalicelib.profiles.index.posting_keys`),
through :func:`chalicelib.search.postings.apply`, which compares with the keys applied so far and
writes only when the image is newer than what was applied: a replayed or out-of-order stream
record changes nothing, and a half-applied change is completed by the retry.
"""

from __future__ import annotations

from typing import Any

from chalicelib import clock, metrics
from chalicelib.profiles.facets import facets
from chalicelib.profiles.index import NAMESPACE, posting_keys
from chalicelib.search import postings
from chalicelib.streams import oldest_record_age_seconds, process_change_batch
from chalicelib.users.records import record
from chalicelib.users.repository import version_of


def apply_change(old_image: dict[str, Any] | None, new_image: dict[str, Any] | None) -> bool:
    """File the user of one stream record under the keys of its new image (none after a removal).

    Parameters
    ----------
    old_image, new_image:
        The record's images as plain dicts (Users items); ``None`` where absent (INSERT has no
        old image, REMOVE no new one).

    Returns
    -------
    bool
        True when the postings moved to this image's version; False when a newer or equal
        version was applied already (a replay or an out-of-order record), or the record holds
        no image.
    """
    if new_image is not None:
        user = record(new_image)
        return postings.apply(NAMESPACE, user["userId"], version_of(user), posting_keys(facets(user)))
    if old_image is not None:  # removed: leave every list, as the version after the last one
        user = record(old_image)
        return postings.apply(NAMESPACE, user["userId"], version_of(user) + 1, set())
    return False


def handle_users_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry: apply every record of a Users-table stream batch, in order.

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: records whose application raised are retried by the
        event source mapping (applying is idempotent).
    """

    def handle(old_image: dict[str, Any] | None, new_image: dict[str, Any] | None) -> None:
        apply_change(old_image, new_image)

    lag = oldest_record_age_seconds(event, clock.now().timestamp())
    if lag is not None:  # IndexerLag (stream=users): how far profile search is behind the Users table
        metrics.record_indexer_lag("users", lag)
    return process_change_batch(event, handle)
