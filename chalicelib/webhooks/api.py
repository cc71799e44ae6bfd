"""Webhook records other packages read by id (a listing's or a user's webhooks, for their payloads).

Other packages import this module, never the repository (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

from chalicelib.webhooks.repository import get_many

__all__ = [
    "get_many",
]
