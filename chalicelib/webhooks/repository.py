"""Webhooks table access (item keyed by ``webhookId``; ``byOwner`` index)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chalicelib import storage
from chalicelib.config import settings


def _table() -> str:
    return settings().WEBHOOKS_TABLE


def get_many(webhook_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Webhooks by id (BatchGetItem); unknown ids are absent."""
    return {w["webhookId"]: w for w in storage.batch_get(_table(), [{"webhookId": i} for i in webhook_ids])}
