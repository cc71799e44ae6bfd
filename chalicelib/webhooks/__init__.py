"""Webhooks: registration, stream-driven signed delivery, failure policy and the delivery log.

The package owns the Webhooks and Deliveries tables. Other packages reach their data only
through the functions below (or :mod:`chalicelib.webhooks.service`), never through its
repository or a table's name (``docs/architecture.md``, "Table ownership"). Each function
imports the repository when first called, so importing this package loads no storage code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chalicelib.webhooks.records import WebhookRecord


def get_many(webhook_ids: Sequence[str]) -> dict[str, WebhookRecord]:
    """Webhook records by id (one BatchGetItem); missing ids are absent."""
    from chalicelib.webhooks import repository

    return repository.get_many(webhook_ids)
