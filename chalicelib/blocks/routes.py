"""Routes of blocks: ``GET /v1/me/blocks`` and ``DELETE /v1/me/blocks/{userId}`` (blocking is a
workflow: :mod:`chalicelib.workflows.block_routes`)."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The domain's modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.blocks import models, service
    from chalicelib.kernel import pagination

bp = Blueprint(__name__)
route = routes(bp, tags=("blocks",))


@route("/v1/me/blocks", "GET", query=lambda: models.BlockListQuery, response=lambda: models.BlockPage)
def list_blocks(caller: Caller, query: models.BlockListQuery) -> models.BlockPage:
    """The users the caller blocks, newest first."""
    return service.list_blocks(caller.user_id, query)


@route("/v1/me/blocks/{userId}", "DELETE", response=lambda: pagination.Deleted)
def unblock(caller: Caller, userId: str) -> pagination.Deleted:
    """Lift a block: both see each other's listings and profile again; nothing rejected comes back."""
    service.unblock(caller.user_id, userId)
    return pagination.Deleted(id=userId)
