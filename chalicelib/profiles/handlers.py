"""Users-table stream consumer: keeps the profile posting lists in step with the profiles (via ``app.py``).

Every change of a user (a new image with its ``version``, or a removal) files the user under
exactly the posting keys of its new image (:func:`chalicelib.profiles.index.posting_keys`). A
whole batch is applied at once by :func:`chalicelib.search.batch_writer.apply_batch`, which
compares with the keys applied so far and writes only when the image is newer than what was
applied: a replayed or out-of-order stream record changes nothing, and a half-applied change is
completed by the retry.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import clock, errors, metrics, storage
from chalicelib.profiles.facets import facets
from chalicelib.profiles.index import NAMESPACE, posting_keys
from chalicelib.search import batch_writer
from chalicelib.search.batch_writer import Change
from chalicelib.streams import batch_failures, change_records, oldest_record_age_seconds
from chalicelib.users import version_of
from chalicelib.users.records import record

logger = Logger(service="matching-service", child=True)


def change_of(old_image: dict[str, Any] | None, new_image: dict[str, Any] | None) -> Change | None:
    """The posting change of one stream record: the new image's keys at its version, or no keys at
    the version after the old image's for a removal (``None`` for a record without images)."""
    if new_image is not None:
        user = record(new_image)
        return Change(NAMESPACE, user["userId"], version_of(user), frozenset(posting_keys(facets(user))))
    if old_image is not None:  # removed: leave every list, as the version after the last one
        user = record(old_image)
        return Change(NAMESPACE, user["userId"], version_of(user) + 1, frozenset())
    return None


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
    change = change_of(old_image, new_image)
    return change is not None and batch_writer.apply_batch([change]).applied > 0


def handle_users_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry: apply a Users-table stream batch at once (:func:`chalicelib.search.batch_writer.apply_batch`).

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: a record whose keys cannot be computed alone, or every
        record when the batch's writes failed; the event source mapping retries them (applying
        is idempotent by version).
    """
    lag = oldest_record_age_seconds(event, clock.now().timestamp())
    if lag is not None:  # IndexerLag (stream=users): how far profile search is behind the Users table
        metrics.record_indexer_lag("users", lag)
    records = change_records(event)
    failed: list[str] = []
    changes: list[Change] = []
    for sequence, old_image, new_image in records:
        try:
            if (change := change_of(old_image, new_image)) is not None:
                changes.append(change)
        except (KeyError, TypeError, ValueError, ArithmeticError):  # a record that cannot be read fails alone
            logger.exception("users stream record not indexable", extra={"sequence": sequence})
            failed.append(sequence)
    try:
        batch_writer.apply_batch(changes)
    except (storage.Contention, errors.DependencyUnavailable, ClientError, BotoCoreError):
        logger.exception("profile postings batch not applied; the stream retries it")
        return batch_failures(sequence for sequence, _, _ in records)
    return batch_failures(failed)
