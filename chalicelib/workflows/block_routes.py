"""Route of blocking: ``PUT /v1/me/blocks/{userId}`` (a workflow: it rejects pending requests too).

The list and the unblock are the blocks package's own routes (:mod:`chalicelib.blocks.routes`).
"""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The use case's modules load with the first request of this route, not at cold start.
with lazy_imports(__name__):
    from chalicelib.blocks import models
    from chalicelib.workflows import blocking

bp = Blueprint(__name__)
route = routes(bp, tags=("blocks",))


@route(
    "/v1/me/blocks/{userId}", "PUT", response=lambda: models.Block,
    rules=("`userId` must name an existing user other than the caller.",),
)
def block(caller: Caller, userId: str) -> models.Block:
    """Block a user: requests and messages between you are refused (403 ``BLOCKED``), their pending
    requests to you are rejected (without a reason), and neither sees the other's listings or
    profile (404). Idempotent."""
    made, _created = blocking.block_user(caller, userId)
    return made
