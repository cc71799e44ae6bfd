"""The stream consumer of an index: a DynamoDB Streams batch of a domain's table becomes one
:func:`chalicelib.search.index.apply`.

A domain gives its spec, its store and ``change_of``, which turns one record's ``(old, new)``
images into an :class:`~chalicelib.search.index.Change` (the new image's document at its
version, or no document one version past the old image's after a removal). Changes of one
document coalesce to the newest; a replayed or out-of-order record writes nothing (the stored
document's version decides), and a half-applied batch is completed by the retry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.kernel import clock, errors
from chalicelib.persistence import streams
from chalicelib.search import index
from chalicelib.search.index import IndexSpec
from chalicelib.search.store import Store
from chalicelib.telemetry import metrics

logger = Logger(service="matching-service", child=True)

#: One record's ``(old image, new image)`` (``None`` where absent) -> its change, or ``None``
#: when the record holds no image.
ChangeOf = Callable[[Mapping[str, Any] | None, Mapping[str, Any] | None], index.Change | None]
Images = Iterable[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]


def apply_images(spec: IndexSpec, store: Store, change_of: ChangeOf, images: Images) -> int:
    """Bring the index entries of every document of ``images`` (``(old, new)`` stream images in
    stream order) to its newest record, in one batch; returns the documents moved.

    Raises
    ------
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        The writes failed (the stream retries the batch; applying is idempotent).
    """
    changes = [c for old, new in images if (c := change_of(old, new)) is not None]
    return index.apply(spec, store, changes)


def handle_batch(event: dict[str, Any], stream: str, spec: IndexSpec, store: Store, change_of: ChangeOf) -> dict[str, Any]:
    """Apply a stream batch at once.

    Parameters
    ----------
    event:
        The DynamoDB Streams event (``Records`` with ``NEW_AND_OLD_IMAGES``).
    stream:
        The stream's name in the ``IndexerLag`` metric (the age in seconds of the batch's
        oldest record).

    Returns
    -------
    dict
        ``{"batchItemFailures": [...]}``: a record whose change cannot be computed alone (the
        others are applied), or every record when the batch's writes failed; the event source
        mapping retries them.
    """
    lag = streams.oldest_record_age_seconds(event, clock.now().timestamp())
    if lag is not None:
        metrics.record_indexer_lag(stream, lag)
    records = streams.change_records(event)
    failed: list[str] = []
    changes: list[index.Change] = []
    for sequence, old, new in records:
        try:
            change = change_of(old, new)
        except (KeyError, TypeError, ValueError, ArithmeticError):  # a record that cannot be read fails alone
            logger.exception("stream record not indexable", extra={"stream": stream, "sequence": sequence})
            failed.append(sequence)
            continue
        if change is not None:
            changes.append(change)
    try:
        index.apply(spec, store, changes)
    except (errors.DependencyUnavailable, ClientError, BotoCoreError):
        logger.exception("index batch not applied; the stream retries it", extra={"stream": stream})
        return streams.batch_failures(sequence for sequence, _, _ in records)
    return streams.batch_failures(failed)
