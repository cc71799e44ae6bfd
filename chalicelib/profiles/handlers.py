"""Users-table stream consumer: keeps the profile index in step with the profiles (via ``app.py``).

Each stream record carries the user's old and new image; a batch becomes one
:func:`chalicelib.search.index.apply` over the profile spec (:mod:`chalicelib.profiles.spec`):
the new image's document at its ``version``, or no document at ``version + 1`` after a removal.
Changes of one user coalesce to the newest; a replayed or out-of-order record writes nothing
(the stored document's version decides), and a half-applied batch is completed by the retry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib import clock, errors, metrics
from chalicelib.profiles import spec
from chalicelib.search import index
from chalicelib.streams import batch_failures, change_records, oldest_record_age_seconds
from chalicelib.users import version_of
from chalicelib.users.records import record

logger = Logger(service="matching-service", child=True)


def change_of(old_image: Mapping[str, Any] | None, new_image: Mapping[str, Any] | None) -> index.Change | None:
    """The index change of one stream record: the new image's document at its version, or no
    document at the version after the old image's for a removal (``None`` without images)."""
    if new_image is not None:
        user = record(dict(new_image))
        return index.Change(user["userId"], version_of(user), spec.document(user))
    if old_image is not None:  # removed: leave every list, as the version after the last one
        user = record(dict(old_image))
        return index.Change(user["userId"], version_of(user) + 1, None)
    return None


def apply_changes(images: Iterable[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]) -> int:
    """Bring the index entries of every user of ``images`` (``(old, new)`` stream images in
    stream order) to its newest record, in one batch; returns the profiles moved.

    Raises
    ------
    botocore.exceptions.ClientError, chalicelib.errors.DependencyUnavailable
        The writes failed (the stream retries the batch; applying is idempotent).
    """
    changes = [c for old, new in images if (c := change_of(old, new)) is not None]
    return index.apply(spec.spec(), spec.store(), changes)


def apply_change(old_image: Mapping[str, Any] | None, new_image: Mapping[str, Any] | None) -> bool:
    """File the user of one stream record (``None`` where an image is absent: INSERT has no old
    image, REMOVE no new one); False when the record was replayed, out of order, or holds no image."""
    return apply_changes([(old_image, new_image)]) > 0


def handle_users_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry: apply a Users-table stream batch at once.

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: a record whose document cannot be computed alone, or
        every record when the batch's writes failed; the event source mapping retries them
        (applying is idempotent by version).
    """
    lag = oldest_record_age_seconds(event, clock.now().timestamp())
    if lag is not None:  # IndexerLag (stream=users): how far profile search is behind the Users table
        metrics.record_indexer_lag("users", lag)
    records = change_records(event)
    failed: list[str] = []
    changes: list[index.Change] = []
    for sequence, old_image, new_image in records:
        try:
            if (change := change_of(old_image, new_image)) is not None:
                changes.append(change)
        except (KeyError, TypeError, ValueError, ArithmeticError):  # a record that cannot be read fails alone
            logger.exception("users stream record not indexable", extra={"sequence": sequence})
            failed.append(sequence)
    try:
        index.apply(spec.spec(), spec.store(), changes)
    except (errors.DependencyUnavailable, ClientError, BotoCoreError):
        logger.exception("profile index batch not applied; the stream retries it")
        return batch_failures(sequence for sequence, _, _ in records)
    return batch_failures(failed)
