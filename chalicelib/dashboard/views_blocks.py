"""The Blocks page (the users you block, with Unblock) and the Block action offered beside a
conversation and an incoming request: the API's ``/v1/me/blocks`` rules."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.dashboard.web import Page, page
from chalicelib.edge.http import parse_model
from chalicelib.kernel.lazy_imports import lazy_imports

# The domains' modules load with the first page that uses them, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.blocks import models as block_models
    from chalicelib.blocks import service as blocks
    from chalicelib.workflows import blocking

#: Blocks per page; "Next page" carries the service's signed cursor.
BLOCKS_PAGE_SIZE = 50

NOTICES = {
    "blocked": "Blocked. Neither of you can send the other requests or messages, and you no longer see each other's "
               "listings and profile.",
    "unblocked": "Unblocked. You see each other's listings and profile again; nothing rejected comes back.",
}


@page("/dashboard/blocks")
def blocks_page(current: Page) -> Response:
    """The users the signed-in user blocks, newest first, each with "Unblock"."""
    cursor = {"cursor": current.query("cursor")} if current.query("cursor") else {}
    query = parse_model(block_models.BlockListQuery, {"pageSize": BLOCKS_PAGE_SIZE, **cursor})
    listed = blocks.list_blocks(current.caller.user_id, query)
    return current.render("blocks.html", nav="blocks", blocks=listed.blocks, next_cursor=listed.nextCursor,
                          notice=NOTICES.get(current.query("done")))


@page("/dashboard/blocks/{userId}", "POST")
def block(current: Page, userId: str) -> Response:
    """Block ``userId`` (their pending requests to you are rejected without a reason)."""
    blocking.block_user(current.caller, userId)
    return current.redirect("/blocks?done=blocked")


@page("/dashboard/blocks/{userId}/unblock", "POST")
def unblock(current: Page, userId: str) -> Response:
    """Lift the block of ``userId``."""
    blocks.unblock(current.caller.user_id, userId)
    return current.redirect("/blocks?done=unblocked")
