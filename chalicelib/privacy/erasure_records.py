"""The stored shape of an account erasure (Erasures table items) and its steps."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class ErasureStatus(StrEnum):
    """``in_progress`` from ``DELETE /v1/me`` until the last step, then ``completed``."""

    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


class ErasureStep(StrEnum):
    """The steps of an erasure, in the order they run (:data:`STEPS`)."""

    #: Every API key deleted (also done by ``DELETE /v1/me`` itself): 401 from then on, and the
    #: Dashboard sessions opened with them end.
    KEYS = "keys"
    #: Every listing deleted through the listing deletion (its pending requests rejected,
    #: search and counters updated by the indexer as for any deletion).
    LISTINGS = "listings"
    #: Every webhook deleted.
    WEBHOOKS = "webhooks"
    #: Every saved search deleted (its stored matches removed by the saved-search cleanup).
    SAVED_SEARCHES = "saved_searches"
    #: PENDING requests the user sent withdrawn (deleted); PENDING profile requests to the user
    #: rejected; the user's snapshot on decided requests they sent replaced by "Deleted user".
    REQUESTS = "requests"
    #: In each conversation: the user leaves it, their name becomes "Deleted user" (participants,
    #: the messages they sent), the other participant keeps every message.
    CONVERSATIONS = "conversations"
    #: The blocks the user made lifted.
    BLOCKS = "blocks"
    #: The user item (profile and channels) and the user's counter items deleted, in the
    #: transaction that completes the erasure.
    PROFILE = "profile"


#: The steps in order.
STEPS: tuple[ErasureStep, ...] = tuple(ErasureStep)


def next_step(step: ErasureStep) -> ErasureStep | None:
    """The step after ``step``, or ``None`` after the last."""
    index = STEPS.index(step) + 1
    return STEPS[index] if index < len(STEPS) else None


class ErasureRecord(TypedDict):
    """An erasure as stored: no personal data beyond the (pseudonymous) user id."""

    #: The erased user (the table's key: one erasure per user, ever).
    userId: str
    #: ``ers_`` + a ULID.
    erasureId: str
    status: ErasureStatus
    #: The step running now (absent once completed).
    step: NotRequired[ErasureStep]
    #: The steps finished, in order.
    stepsCompleted: list[str]
    #: Rounds run so far: each round is one bounded unit of work, and the outbox event that starts
    #: the next one carries the round it expects (so a duplicate event runs nothing twice).
    round: int
    #: Where a step that spans rounds stands (e.g. the last conversation id handled); absent otherwise.
    position: NotRequired[str]
    #: ISO 8601 UTC.
    requestedAt: str
    updatedAt: str
    completedAt: NotRequired[str]


def record(item: Mapping[str, Any]) -> ErasureRecord:
    """The typed record of an Erasures item as read (``status`` and ``step`` as enums).

    Raises
    ------
    chalicelib.persistence.record_check.MalformedRecord
        A field is missing or of another type (the field is named).
    """
    enums: dict[str, type[StrEnum]] = {"status": ErasureStatus}
    if "step" in item:  # absent once completed
        enums["step"] = ErasureStep
    return checked(ErasureRecord, item, "userId", enums=enums)
