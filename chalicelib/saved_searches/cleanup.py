"""Removing the stored matches of a deleted saved search, in bounded steps.

A saved search can collect any number of matches over its life (one per listing it matched),
so deleting them cannot be part of the request that deletes the search (a transaction holds
100 items). Instead that transaction writes a ``saved_search.deleted`` outbox event beside the
deletion (:func:`chalicelib.saved_searches.events.deleted_event_op`); the saved-search stream
consumer hands it to :func:`remove_matches`, which deletes at most :data:`BUDGET_PAGES` x
:data:`PAGE` matches and, when some may be left, writes the next ``saved_search.deleted`` event
in the same transaction as its last deletions. Each step is bounded, the chain ends when a Query
reports no more matches, and a step that fails is retried by the event source mapping (deleting is
idempotent). The matches are unreachable from the start: every read of them checks that the
search exists, and the percolator records a match only while the search exists (in its
transaction), so no match is written after the deletion that the chain would miss.
"""

from __future__ import annotations

from chalicelib.persistence.transactions import Transaction
from chalicelib.saved_searches import repository
from chalicelib.saved_searches.events import deleted_event_op

#: Matches read and deleted per transaction: TransactWriteItems holds at most 100 items, and the
#: last transaction of a step also carries the continuation event.
PAGE = 99
#: Pages one step handles at most (198 matches: 2 Queries and 2 transactions, well under a second),
#: so a whole batch of the consumer (25 records, each possibly a step) stays far inside its 30 s
#: timeout whatever the searches' sizes; a large search takes a chain of steps instead.
BUDGET_PAGES = 2


def remove_matches(saved_search_id: str, owner_id: str) -> int:
    """Delete up to ``BUDGET_PAGES x PAGE`` stored matches of a deleted saved search.

    Parameters
    ----------
    saved_search_id, owner_id:
        The deleted search and its owner (the ``saved_search.deleted`` event's data).

    Returns
    -------
    int
        Matches deleted now. When the step used its whole budget, a continuation
        ``saved_search.deleted`` event was written with the last page (an extra step then may
        find nothing left, which ends the chain).

    Raises
    ------
    chalicelib.persistence.storage.Contention, chalicelib.kernel.errors.DependencyUnavailable
        DynamoDB faults; the stream record is retried and the step starts again (idempotent).
    """
    removed = 0
    for step_page in range(BUDGET_PAGES):
        listing_ids, more = repository.match_listing_ids(saved_search_id, PAGE)
        if not listing_ids:
            return removed
        tx = Transaction()
        for listing_id in listing_ids:
            tx.add(f"match:{listing_id}", repository.delete_match_op(saved_search_id, listing_id))
        if more and step_page == BUDGET_PAGES - 1:
            tx.add("continuation", deleted_event_op(saved_search_id, owner_id))
        tx.commit()
        removed += len(listing_ids)
        if not more:
            return removed
    return removed
