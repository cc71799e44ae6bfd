"""Blocking a user: the block, then the blocked user's pending requests to the blocker rejected.

Once the block is written, every new request or message between the two users is refused in
its own transaction (:func:`chalicelib.blocks.api.not_blocked_op`). The requests the blocked user
sent the blocker before that moment are then found on the blocked user's list of PENDING sent
requests and rejected by the blocker without a reason: the requester learns the request was
rejected, as any other rejection, but not why.
"""

from __future__ import annotations

import contextlib

from chalicelib.auth.service import Caller
from chalicelib.blocks import service as blocks
from chalicelib.blocks.models import Block
from chalicelib.kernel import errors
from chalicelib.match_requests import api as match_requests
from chalicelib.match_requests.models import StatusChange
from chalicelib.workflows import request_decisions


def block_user(caller: Caller, other_id: str) -> tuple[Block, bool]:
    """Block ``other_id`` and reject the PENDING requests they sent the caller.

    Returns
    -------
    tuple
        The block and whether this call created it (a repeated block rejects what is still
        pending too, so a retried call after a crash completes the work).

    Raises
    ------
    RuleViolation
        ``other_id`` is the caller or no user (``details`` names ``userId``).
    """
    made = blocks.block(caller.user_id, other_id)
    rejection = StatusChange.model_validate({"status": "REJECTED"})
    for request in match_requests.pending_sent(other_id):
        if request["recipientId"] != caller.user_id:
            continue
        with contextlib.suppress(errors.Conflict):  # decided or withdrawn meanwhile: nothing left to reject
            request_decisions.decide(caller, request["requestId"], rejection)
    return made
