"""Saved-search rules: save, list, read, delete, and the matches of a saved search.

* Owner-only: another user's saved search is 404, as if it did not exist.
* At most ``SAVED_SEARCH_LIMIT`` (default 50) per user, enforced by a counter item taken in
  the same transaction as the save (409 CONFLICT beyond), never by counting first.
* Saving files the search in the percolator's posting lists in the same transaction
  (:mod:`chalicelib.saved_searches.postings`); deleting removes it from them, so a deleted
  search is never matched again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chalicelib.auth.service import Caller
from chalicelib.blocks import api as blocks
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.kernel.pagination import Deleted, PageQuery
from chalicelib.listings import api as listings
from chalicelib.listings import status
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.service import to_model as to_listing
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import Transaction, TransactionConflict
from chalicelib.saved_searches import postings, repository
from chalicelib.saved_searches.events import deleted_event_op
from chalicelib.saved_searches.models import (
    SavedSearch,
    SavedSearchCreate,
    SavedSearchMatch,
    SavedSearchMatchPage,
    SavedSearchPage,
)
from chalicelib.saved_searches.query import default_name, normalize, validate
from chalicelib.saved_searches.records import MatchRecord, SavedSearchRecord
from chalicelib.users import api as users

#: Transactions tried while posting shards fill up concurrently (each retry moves to the next shard).
SAVE_ATTEMPTS = 8


def to_model(search: SavedSearchRecord) -> SavedSearch:
    """The API view of a saved search."""
    return SavedSearch(
        savedSearchId=search["savedSearchId"], name=search["name"], query=dict(search["query"]),
        alerts=search["alerts"], createdAt=search["createdAt"],
    )


def create_saved_search(caller: Caller, body: SavedSearchCreate) -> SavedSearch:
    """Validate and save a search, filing it in the percolator's posting lists and counting it in
    its scope (:func:`repository.scope_op`), in one transaction.

    Raises
    ------
    RuleViolation
        ``query.<param>`` as search reports it, or ``query.radiusKm`` missing for alerts.
    Conflict
        The caller already has ``SAVED_SEARCH_LIMIT`` saved searches.
    """
    query = normalize(body.query)
    parsed = validate(query, body.alerts)
    entry = postings.entry_of(query, caller.user_id).encode()
    item: SavedSearchRecord = {
        "ownerId": caller.user_id,
        "savedSearchId": clock.new_id("ss"),
        "name": body.name or default_name(query),
        "query": query,
        "alerts": body.alerts,
        "createdAt": clock.iso(),
        "postings": [],
    }
    limit = settings().SAVED_SEARCH_LIMIT
    shards = dict.fromkeys(postings.keys_of(parsed), 0)
    for _ in range(SAVE_ATTEMPTS):
        item["postings"] = [repository.shard_key(k, s) for k, s in shards.items()]
        tx = Transaction().add("counter", repository.counter_op(caller.user_id, limit))
        tx.add("search", repository.put_op(item))
        tx.add("scope", repository.scope_op(postings.scope_of(next(iter(shards))), 1))
        for k, s in shards.items():
            tx.add(f"posting:{k}", repository.add_entry_op(k, s, item["savedSearchId"], entry))
        for k, s in shards.items():
            if s > 0:
                tx.add(f"spill:{k}", repository.spill_op(k, s))
        try:
            tx.commit()
        except TransactionConflict as exc:
            if exc.failed("counter"):
                raise errors.Conflict(
                    f"You have reached the limit of {limit} saved searches; delete one first"
                ) from exc
            full = [k for k in shards if exc.failed(f"posting:{k}")]
            if not full:
                raise
            for key in full:  # that shard is at capacity: file the entry in the next one
                shards[key] += 1
            continue
        return to_model(item)
    raise errors.Contended("Other saved searches kept filling the same postings; retry")


def _owned(caller: Caller, saved_search_id: str) -> SavedSearchRecord:
    item = repository.get(caller.user_id, saved_search_id)
    if item is None:
        raise errors.NotFound(f"Saved search '{saved_search_id}' not found")
    return item


def get_saved_search(caller: Caller, saved_search_id: str) -> SavedSearch:
    """One of the caller's saved searches.

    Raises
    ------
    NotFound
        No such saved search of the caller's (others' are not revealed).
    """
    return to_model(_owned(caller, saved_search_id))


def list_saved_searches(caller: Caller, page: PageQuery) -> SavedSearchPage:
    """The caller's saved searches, newest first (one Query on the caller's partition)."""
    items = repository.list_by_owner(caller.user_id)
    position = page.position_in("saved_searches", caller.user_id)
    return SavedSearchPage(
        savedSearches=[to_model(i) for i in position.slice(items)], total=len(items), page=position.page,
        pageSize=position.page_size, nextCursor=position.next_cursor(position.after(len(items))),
    )


def delete_saved_search(caller: Caller, saved_search_id: str) -> Deleted:
    """Delete a saved search: the item, its posting entries, its slot, its scope's count and a
    ``saved_search.deleted`` event, in one transaction.

    Its matches are unreachable at once (every read checks the search first) and the event
    has them deleted, in bounded steps (:mod:`chalicelib.saved_searches.cleanup`); no further
    match is recorded for it (the percolator's match write checks that the search still exists).

    Raises
    ------
    NotFound
        No such saved search of the caller's (or it was deleted concurrently).
    """
    item = _owned(caller, saved_search_id)
    tx = Transaction().add("search", repository.delete_op(caller.user_id, saved_search_id))
    tx.add("counter", repository.release_op(caller.user_id))
    tx.add("scope", repository.scope_op(postings.scope_of(item["postings"][0]), -1))
    for k in item["postings"]:
        tx.add(f"posting:{k}", repository.remove_entry_op(k, saved_search_id))
    tx.add("event", deleted_event_op(saved_search_id, caller.user_id))
    try:
        tx.commit()
    except TransactionConflict as exc:
        raise errors.NotFound(f"Saved search '{saved_search_id}' not found") from exc
    return Deleted(id=saved_search_id)


def forget_counter_op(owner_id: str) -> TransactItem:
    """Transaction ``Delete`` of the owner's saved-search counter (the account erasure, after
    :func:`delete_saved_search` of each of their searches)."""
    return repository.forget_counter_op(owner_id)


def _is_public(listing: ListingRecord | None) -> bool:
    return listing is not None and status.is_public(listing["status"])


#: Most match items read per Query (and listings per BatchGetItem) while walking a search's matches.
MATCH_CHUNK = 100


@dataclass
class MatchWalk:
    """What one walk of a saved search's matches found (newest first, from a position).

    Attributes
    ----------
    shown:
        The page: ``(match, listing)`` of the still-ACTIVE matches, at most the page size.
    skipped:
        Still-ACTIVE matches passed over before the page (offset pages without a cursor).
    counted:
        Still-ACTIVE matches found after the page (at least one proves a next page).
    ended:
        The walk read the list to its end, so ``skipped + len(shown) + counted`` are all of them from
        its start.
    """

    shown: list[tuple[MatchRecord, ListingRecord]] = field(default_factory=list)
    skipped: int = 0
    counted: int = 0
    ended: bool = False


def walk_matches(
    saved_search_id: str, size: int, skip: int = 0, after: str | None = None, hidden: frozenset[str] = frozenset()
) -> MatchWalk:
    """Walk a saved search's matches newest first from ``after``, keeping those whose listing is still
    ACTIVE and not owned by a user in ``hidden``.

    The matches index holds every match ever recorded; whether its listing is still ACTIVE is only
    known by reading the listing (it changes without the match). The walk reads match items in
    chunks (``matchedNewest`` Queries) and their listings (BatchGetItem), and stops once it has
    passed over ``skip`` still-ACTIVE matches, filled the page with ``size`` more, and examined
    ``size`` further matches past the page (to count on) of which at least one is still ACTIVE
    (which proves a next page), or at the end of the list. With every match ACTIVE a page reads
    ``skip + 2 x size`` match items and as many listings; matches of listings no longer ACTIVE
    are read past, so a page is never cut short by them.

    Parameters
    ----------
    saved_search_id:
        The saved search (its ownership is checked by the caller).
    size:
        The page size (1..100).
    skip:
        Still-ACTIVE matches to pass over first (``(page - 1) x pageSize`` without a cursor; 0 with ``after``).
    after:
        ``matchedNewest`` of the previous page's last match (from a cursor).
    hidden:
        Owners whose listings are passed over like those no longer ACTIVE (the searcher's
        blocks, :func:`chalicelib.blocks.api.hidden_from`).

    Returns
    -------
    MatchWalk
        The page, what was passed over and counted, and whether the list ended.
    """
    walk = MatchWalk()
    position, examined_past = after, 0
    while True:
        # One page past the page, then (with no ACTIVE match among it yet) a page at a time until one is.
        ahead = size - examined_past if examined_past < size else (0 if walk.counted else size)
        need = (skip - walk.skipped) + (size - len(walk.shown)) + ahead
        if need <= 0:
            return walk
        chunk, more = repository.matches_after(saved_search_id, min(need, MATCH_CHUNK), position)
        found = listings.get_many([m["listingId"] for m in chunk]) if chunk else {}
        for match in chunk:
            position = match.get("matchedNewest") or repository.match_sort_key(match["matchedAt"], match["listingId"])
            page_full = walk.skipped == skip and len(walk.shown) == size
            examined_past += page_full
            listing = found.get(match["listingId"])
            if listing is None or not _is_public(listing) or listing["ownerId"] in hidden:
                continue
            if walk.skipped < skip:
                walk.skipped += 1
            elif len(walk.shown) < size:
                walk.shown.append((match, listing))
            else:
                walk.counted += 1
        if not more:
            walk.ended = True
            return walk


def list_matches(caller: Caller, saved_search_id: str, page: PageQuery) -> SavedSearchMatchPage:
    """The listings that matched the saved search since it was saved and are still ACTIVE, newest first,
    but those of users the caller blocked or was blocked by (a block set after the match hides it).

    Reads about its page, whatever the number of matches (:func:`walk_matches`): the search, the
    page's match items and listings plus one page more to count on, and the page's owners.
    ``total`` is exact (``totalRelation: "eq"``) when the list ended within that read, else the
    still-ACTIVE matches seen so far, a lower bound (``"gte"``).

    Raises
    ------
    NotFound
        No such saved search of the caller's.
    RuleViolation
        ``cursor`` edited or of another query (another saved search, page size), field ``cursor``.
    """
    hidden = blocks.hidden_from_later(caller.user_id)  # read alongside the saved search: one round trip, not two (a 404 wastes it)
    _owned(caller, saved_search_id)
    position = page.position_in("saved_search.matches", saved_search_id)
    skip = 0 if position.key is not None else position.offset
    walk = walk_matches(saved_search_id, position.page_size, skip=skip, after=position.key, hidden=hidden())
    before = walk.skipped if position.key is None else position.offset
    shown = walk.shown
    owners = users.get_users(list({item["ownerId"] for _, item in shown})) if shown else {}
    last = shown[-1][0] if shown else None
    return SavedSearchMatchPage(
        matches=[
            SavedSearchMatch(
                listing=to_listing(item, owners.get(item["ownerId"])), distanceKm=m.get("distanceKm"), matchedAt=m["matchedAt"]
            )
            for m, item in shown
        ],
        total=before + len(shown) + walk.counted,
        totalRelation="eq" if walk.ended else "gte",
        page=position.page,
        pageSize=position.page_size,
        nextCursor=position.next_cursor(
            walk.counted > 0, None if last is None else repository.match_sort_key(last["matchedAt"], last["listingId"])
        ),
    )
