"""The percolator: match one newly ACTIVE listing against the saved searches.

For a ``listing.activated`` event:

1. read the saved-search count of each scope (one item, :func:`repository.scope_counts`) and
   stop when it is 0 everywhere: an approval with no saved search reads that one item and
   nothing else; then read the listing (strongly consistent) and stop unless it is ACTIVE at
   this version and some saved search has its category or every category as scope (saved
   searches created after the activation are left out too);
2. read the posting lists of its keys (:func:`postings.lookup_keys`, the engine's filing scheme
   of :mod:`chalicelib.search.percolator` with the listing's spec: one BatchGetItem, plus one
   for spilled shards) and keep the entries whose payload passes :func:`postings.prefilter`
   (never the listing owner's own searches);
3. read those saved searches (BatchGetItem) and verify each with the engine's check of a
   document against a query (:func:`chalicelib.listings.search.spec.matches`, the check search
   applies to every candidate);
4. record each match with one transaction: the match item, conditional on being the first
   for (saved search, listing); a check that the saved search still exists; a check that no
   block stands between the listing's owner and the search's (docs/trust-and-safety.md: a
   block hides each one's listings from the other's searches, saved ones too); and, when its
   alerts are on, the ``listing.matched`` outbox event. A replayed stream record or a
   re-approval of an unchanged match fails the first condition and notifies nothing new; a
   search deleted meanwhile fails the second; a block, the third (whichever commits first wins,
   as for requests and messages).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_lambda_powertools import Logger

from chalicelib.blocks import api as blocks
from chalicelib.kernel import clock, errors
from chalicelib.listings import api as listings
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search.spec import Candidate, candidate, matches
from chalicelib.persistence.transactions import Transaction, TransactionConflict
from chalicelib.saved_searches import postings, repository
from chalicelib.saved_searches.events import ListingMatched, matched_event_op
from chalicelib.saved_searches.query import parsed
from chalicelib.saved_searches.records import MatchRecord, SavedSearchRecord
from chalicelib.search import percolator as engine

logger = Logger(service="matching-service", child=True)


@dataclass
class Report:
    """What one percolation read and found (the benchmark prints these).

    Attributes
    ----------
    keys:
        Posting keys looked up (the listing's cells and word tokens times its kinds).
    cells:
        Geohash cells among them (location fields x precisions).
    entries:
        Posting entries tested in memory.
    candidates:
        Saved searches read (entries that passed the prefilter).
    matches:
        Saved searches the listing matches.
    recorded:
        Matches recorded now (the others were recorded before: replays, re-approvals).
    """

    keys: int = 0
    cells: int = 0
    entries: int = 0
    candidates: int = 0
    matches: int = 0
    recorded: int = 0
    matched_ids: list[str] = field(default_factory=list)


def candidates(listing: Candidate, report: Report) -> list[tuple[str, str]]:
    """``(ownerId, savedSearchId)`` of the saved searches whose posting entries pass the prefilter
    (the engine's lookup, :func:`chalicelib.search.percolator.candidates`)."""
    keys = postings.lookup_keys(listing.listing)
    report.keys, report.cells = len(keys), len(postings.listing_cells(listing.listing))
    items = repository.read_postings(keys)
    found, report.entries = engine.candidates((p["entries"] for p in items), lambda e: postings.prefilter(e, listing))
    return [(owner, saved_search_id) for saved_search_id, owner in found.items()]


def _record(listing: ListingRecord, search: SavedSearchRecord, distance_km: float | None) -> bool:
    """Write one match (and its alert); False when it was recorded before, the search is gone or a
    block stands between the two owners."""
    now = clock.iso()
    distance = None if distance_km is None else round(distance_km, 2)
    match: MatchRecord = {
        "savedSearchId": search["savedSearchId"], "listingId": listing["listingId"], "ownerId": search["ownerId"],
        "matchedAt": now, "distanceKm": distance, "listingVersion": listing.get("version"),
        "matchedNewest": repository.match_sort_key(now, listing["listingId"]),
    }
    tx = Transaction().add("match", repository.match_op(match))
    tx.add("search", repository.exists_op(search["ownerId"], search["savedSearchId"]))
    tx.add("block", blocks.not_blocked_op(search["ownerId"], listing["ownerId"]))
    if search["alerts"]:
        data = ListingMatched(
            savedSearchId=search["savedSearchId"], savedSearchName=search["name"], listingId=listing["listingId"],
            listingTitle=listing["title"], categoryKey=listing["categoryKey"], roleKey=listing["roleKey"],
            distanceKm=distance, matchedAt=now,
        )
        tx.add("event", matched_event_op(data, search["ownerId"]))
    try:
        tx.commit()
    except TransactionConflict as exc:
        if exc.failed("match") or exc.failed("search") or exc.failed("block"):  # nothing new to say, or not to them
            return False
        raise
    return True


def percolate(listing_id: str, version: int | None = None, activated_at: str | None = None) -> Report:
    """Match the listing ``listing_id`` against every saved search and record the new matches.

    Parameters
    ----------
    listing_id:
        The listing that became ACTIVE.
    version:
        Its version at activation; a listing since changed (another version) or no longer
        ACTIVE is skipped: its next activation brings its own event.
    activated_at:
        ISO 8601 UTC time of the activation (the event's ``createdAt``): searches saved after
        it do not match it (a search matches listings activated since it was saved, also when
        the stream is read late).

    Returns
    -------
    Report
        Counts of what was read and matched.
    """
    report = Report()
    counts = repository.scope_counts()
    if not any(counts.values()):
        return report
    listing = listings.get(listing_id, consistent=True)
    if listing is None or (version is not None and int(listing.get("version") or 1) != version):
        return report
    if not counts.get(str(listing["categoryKey"])) and not counts.get(engine.ANY):
        return report
    ready = candidate(listing)  # None unless ACTIVE
    if ready is None:
        return report
    wanted = candidates(ready, report)
    searches = repository.get_many(wanted) if wanted else []
    report.candidates = len(searches)
    for search in sorted(searches, key=lambda s: str(s["savedSearchId"])):
        if activated_at is not None and str(search["createdAt"]) > activated_at:
            continue
        try:
            query = parsed(search["query"])
        except errors.RuleViolation:  # e.g. a category field removed since it was saved
            logger.warning("saved search no longer parses", extra={"savedSearchId": search["savedSearchId"]})
            continue
        distance = matches(query, ready)
        if distance is None:
            continue
        report.matches += 1
        report.matched_ids.append(str(search["savedSearchId"]))
        if _record(listing, search, distance if query.geo is not None else None):
            report.recorded += 1
    return report
