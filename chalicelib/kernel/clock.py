"""Time and identifiers: ISO 8601 UTC timestamps with ``Z`` and sortable ids (DESIGN §2)."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """Return the current time, timezone-aware UTC."""
    return datetime.now(UTC)


def iso(moment: datetime | None = None) -> str:
    """Format ``moment`` (default: now) as ISO 8601 UTC with millisecond precision and ``Z``.

    Example: ``2026-11-21T23:55:55.123Z``. The fixed width keeps string order equal to time order,
    which DynamoDB sort keys rely on.
    """
    moment = moment or now()
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def epoch_seconds(moment: datetime | None = None) -> int:
    """Unix time in whole seconds (DynamoDB TTL attributes use this unit)."""
    return int((moment or now()).timestamp())


def new_id(prefix: str) -> str:
    """Return a new opaque id: ``<prefix>_`` + a ULID (time-ordered, 26 Crockford base32 characters).

    Source: the ULID spec, https://github.com/ulid/spec.
    """
    from ulid import ULID  # imported on the first write: python-ulid loads importlib.metadata (cold start)

    return f"{prefix}_{ULID()}"
