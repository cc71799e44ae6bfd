"""Block rules: a user blocks and unblocks another, and lists whom they block.

What a block refuses (requests and messages across it, :func:`chalicelib.blocks.api.not_blocked_op`
in their transactions) and hides (listings and profiles, :func:`chalicelib.blocks.api.hidden_from`)
is decided by those writes and reads; rejecting the pending requests between the two users is
the workflow :mod:`chalicelib.workflows.blocking`.
"""

from __future__ import annotations

from chalicelib.blocks import api as blocks
from chalicelib.blocks import repository
from chalicelib.blocks.models import Block, BlockListQuery, BlockPage
from chalicelib.blocks.records import BlockRecord
from chalicelib.kernel import clock, errors
from chalicelib.persistence.transactions import Transaction, TransactionConflict
from chalicelib.users import api as users

#: The cursor scope's route of a user's block list.
LIST_ROUTE = "blocks.mine"


def _target(caller_id: str, other_id: str) -> str:
    """The blocked user's display name.

    Raises
    ------
    RuleViolation
        ``other_id`` is the caller, no user or a suspended one (``details`` names ``userId``).
    """
    if other_id == caller_id:
        raise errors.RuleViolation.for_field("userId", "you cannot block yourself", "You cannot block yourself")
    user = users.get_user(other_id)
    if user is None or users.is_suspended(user):  # a suspension is not shown: answered as for no user
        raise errors.RuleViolation.for_field("userId", "no such user", f"No user '{other_id}' to block")
    return user["displayName"]


def block(caller_id: str, other_id: str) -> tuple[Block, bool]:
    """Block ``other_id`` (idempotent: blocking again answers the standing block).

    Returns
    -------
    tuple
        The block and whether this call created it.

    Raises
    ------
    RuleViolation
        ``other_id`` is the caller, no user or a suspended one (``details`` names ``userId``).
    """
    name = _target(caller_id, other_id)
    now = clock.iso()
    try:
        Transaction().add_all("block", repository.block_ops(caller_id, other_id, now)).commit()
        blocks.forget_hidden(caller_id, other_id)
    except TransactionConflict:
        standing = repository.get(caller_id, other_id)
        if standing is None or not standing.get("blocking"):
            raise errors.Contended("The block changed meanwhile; retry") from None
        return _block_model(standing, name), False
    return Block(userId=other_id, displayName=name, blockedAt=now), True


def unblock(caller_id: str, other_id: str) -> None:
    """Lift the caller's block of ``other_id``: visibility returns; nothing rejected comes back.

    Raises
    ------
    NotFound
        The caller does not block ``other_id``.
    Conflict
        The block changed meanwhile (retry).
    """
    mine = repository.get(caller_id, other_id)
    if mine is None or not mine.get("blocking"):
        raise errors.NotFound(f"You do not block '{other_id}'")
    theirs = repository.get(other_id, caller_id)
    try:
        Transaction().add_all("unblock", repository.unblock_ops(mine, theirs)).commit()
    except TransactionConflict as exc:
        raise errors.Contended("The block changed meanwhile; retry") from exc
    blocks.forget_hidden(caller_id, other_id)


def list_blocks(caller_id: str, query: BlockListQuery) -> BlockPage:
    """The caller's blocks, newest first: one Query of ``pageSize + 1`` items and one
    BatchGetItem of the blocked users' names.

    Raises
    ------
    RuleViolation
        ``cursor`` is malformed, edited or from another query (``details`` names ``cursor``).
    """
    position = query.page_query().position(f"{LIST_ROUTE}|{caller_id}")
    records, more = repository.page(caller_id, position.page_size, after=position.key)
    names = users.get_users([r["otherId"] for r in records]) if records else {}
    blocks = [_block_model(r, names[r["otherId"]]["displayName"] if r["otherId"] in names else "") for r in records]
    return BlockPage(blocks=blocks, pageSize=position.page_size,
                     nextCursor=position.next_cursor(more and bool(records), records[-1].get("newest") if records else None))


def _block_model(record: BlockRecord, name: str) -> Block:
    return Block(userId=record["otherId"], displayName=name, blockedAt=record.get("blockedAt", ""))
