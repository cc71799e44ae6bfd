"""API models of blocks (``/v1/me/blocks``)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import CursorQuery

_BLOCK_EXAMPLE: dict[str, Any] = {
    "userId": "usr_01JD6Q1111USER0000000000", "displayName": "Mallory", "blockedAt": "2026-11-21T23:55:55.123Z",
}


class Block(Model):
    """A user the caller blocks."""

    model_config = ConfigDict(json_schema_extra={"examples": [_BLOCK_EXAMPLE]})
    userId: str
    displayName: str = Field(description='The blocked user\'s current display name ("" if the user no longer exists).')
    blockedAt: Timestamp


class BlockListQuery(CursorQuery):
    """Query of ``GET /v1/me/blocks``: ``pageSize`` 1..100 (default 20) and the previous page's ``cursor``."""


class BlockPage(Model):
    """Response of ``GET /v1/me/blocks``: the caller's blocks, newest first."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"blocks": [_BLOCK_EXAMPLE], "pageSize": 20, "nextCursor": None}]})
    blocks: list[Block]
    pageSize: int
    nextCursor: str | None
