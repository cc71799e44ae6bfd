"""The account erasure's API view (``DELETE /v1/me``, ``GET /v1/admin/erasures/{userId}``)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.privacy.erasure_records import ErasureStatus, ErasureStep

_STARTED: dict[str, Any] = {
    "erasureId": "ers_01JDQ4W8Y3M2K7V5R9T6B1N0CZ", "userId": "usr_01JDQ3ZK5S8V0E2N4R6T8W1Y3A",
    "status": "in_progress", "step": "keys", "stepsCompleted": [], "requestedAt": "2026-11-29T03:10:00.000Z",
    "updatedAt": "2026-11-29T03:10:00.000Z", "completedAt": None,
}
_COMPLETED: dict[str, Any] = {
    **_STARTED, "status": "completed", "step": None,
    "stepsCompleted": [s.value for s in ErasureStep], "updatedAt": "2026-11-29T03:10:04.000Z",
    "completedAt": "2026-11-29T03:10:04.000Z",
}


class Erasure(Model):
    """An account erasure (GDPR Article 17) and how far it has come.

    It holds no personal data: the user id (which names nobody once the profile is deleted),
    the steps and their times.
    """

    model_config = ConfigDict(json_schema_extra={"examples": [_STARTED, _COMPLETED]})

    erasureId: str = Field(description="`ers_` + a ULID.")
    userId: str
    status: ErasureStatus = Field(description="`in_progress` until the last step, then `completed`.")
    step: ErasureStep | None = Field(description="The step running now; `null` once completed. Steps run in the "
                                     "order keys, listings, webhooks, saved_searches, requests, conversations, "
                                     "blocks, profile.")
    stepsCompleted: list[ErasureStep] = Field(description="The steps finished, in order.")
    requestedAt: Timestamp
    updatedAt: Timestamp
    completedAt: Timestamp | None = None
