"""Users-table stream consumer: keeps the profile index in step with the profiles (via ``app.py``).

Each stream record carries the user's old and new image; a batch becomes one
:func:`chalicelib.search.index.apply` over the profile spec (:mod:`chalicelib.profiles.spec`):
the new image's document at its ``version``, or no document at ``version + 1`` after a removal.
Changes of one user coalesce to the newest; a replayed or out-of-order record writes nothing
(the stored document's version decides), and a half-applied batch is completed by the retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.profiles import spec
from chalicelib.search import consumer, index
from chalicelib.users.api import version_of
from chalicelib.users.records import record


def change_of(old_image: Mapping[str, Any] | None, new_image: Mapping[str, Any] | None) -> index.Change | None:
    """The index change of one stream record: the new image's document at its version (no
    document while the profile is not :func:`~chalicelib.profiles.spec.searchable`), or no
    document at the version after the old image's for a removal (``None`` without images)."""
    if new_image is not None:
        user = record(dict(new_image))
        return index.Change(user["userId"], version_of(user), spec.document(user) if spec.searchable(user) else None)
    if old_image is not None:  # removed: leave every list, as the version after the last one
        user = record(dict(old_image))
        return index.Change(user["userId"], version_of(user) + 1, None)
    return None


def apply_changes(images: consumer.Images) -> int:
    """:func:`chalicelib.search.consumer.apply_images` with the profile index's spec and store: every
    user of ``images`` indexed as its newest record; returns the profiles moved."""
    return consumer.apply_images(spec.spec(), spec.store(), change_of, images)


def apply_change(old_image: Mapping[str, Any] | None, new_image: Mapping[str, Any] | None) -> bool:
    """File the user of one stream record (``None`` where an image is absent: INSERT has no old
    image, REMOVE no new one); False when the record was replayed, out of order, or holds no image."""
    return apply_changes([(old_image, new_image)]) > 0


def handle_users_batch(event: dict[str, Any]) -> dict[str, Any]:
    """Lambda entry: apply a Users-table stream batch at once (:func:`chalicelib.search.consumer.handle_batch`,
    ``IndexerLag`` with ``stream=users``); returns ``{"batchItemFailures": [...]}``."""
    return consumer.handle_batch(event, "users", spec.spec(), spec.store(), change_of)
