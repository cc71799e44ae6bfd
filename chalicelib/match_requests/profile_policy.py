"""``profileRequestPolicy``: may this caller send this user a profile request, and if not, why.

The same evaluation answers ``GET /v1/profiles/{userId}`` and guards
``POST /v1/profile-requests`` (403 FORBIDDEN with the same ``reason``), so a client that
checks the policy first is never surprised. Reasons, first match wins:

1. the profile is the caller's own;
2. the user does not accept requests (``requestPolicy.acceptingRequests`` false);
3. the user has no connected channel to be contacted through;
4. the caller's verification level is below ``requestPolicy.minVerifiedLevel``.

An existing request is not part of the policy: ``myProfileRequest`` reports it, and a second
POST answers 409 CONFLICT.
"""

from __future__ import annotations

from chalicelib.kernel.model_base import Model
from chalicelib.users.models import RequestPolicy
from chalicelib.users.records import UserRecord
from chalicelib.users.service import active_channels


class ProfileRequestPolicy(Model):
    """Whether the caller may send a profile request, the verification level the user requires, and why not."""

    canRequest: bool
    requiredVerification: int
    reason: str | None = None


def request_policy(target: UserRecord) -> RequestPolicy:
    """The stored request policy of a user item (defaults when absent)."""
    return RequestPolicy.model_validate(target.get("requestPolicy") or {})


def evaluate(target: UserRecord, caller_id: str, caller_level: int) -> ProfileRequestPolicy:
    """The policy of user item ``target`` for the caller.

    Parameters
    ----------
    target:
        The requested user's item (``requestPolicy``, ``channels``).
    caller_id:
        The caller's user id.
    caller_level:
        The caller's ``verifiedLevel`` (0..3).

    Returns
    -------
    ProfileRequestPolicy
        ``canRequest`` true with ``reason`` null, or false with the first failing reason.
    """
    policy = request_policy(target)
    required = policy.minVerifiedLevel
    reason: str | None = None
    if target["userId"] == caller_id:
        reason = "You cannot send a profile request to yourself"
    elif not policy.acceptingRequests:
        reason = "This user is not accepting profile requests"
    elif not active_channels(target):
        reason = "This user has no active channels to be contacted through"
    elif caller_level < required:
        reason = f"This user accepts requests from verification level {required} or higher; yours is {caller_level}"
    return ProfileRequestPolicy(canRequest=reason is None, requiredVerification=required, reason=reason)
