"""Listing search: a parsed :class:`~chalicelib.listings.search.query.SearchQuery` answered by the
search engine (:mod:`chalicelib.search.engine`) over the listing index
(:mod:`chalicelib.listings.search.spec`), rendered as a :class:`~chalicelib.listings.models.ListingPage`.

Orders: relevance with ``q`` (unless ``sort=newest``), nearest first with a geo filter, else
newest first. ``nextCursor`` carries the engine's position of the page's last listing, so the
next page continues after it whatever the order.
"""

from __future__ import annotations

from chalicelib.blocks import api as blocks
from chalicelib.kernel import errors
from chalicelib.listings.models import ListingPage
from chalicelib.listings.search import spec
from chalicelib.listings.search.query import SearchQuery
from chalicelib.listings.service import view_fields
from chalicelib.search import engine
from chalicelib.users import api as users


def search_listings(query: SearchQuery, viewer_id: str | None = None) -> ListingPage:
    """Run a search and return one page of ``{listings, total, totalRelation, page, pageSize, nextCursor}``.

    The listings of ``viewer_id``'s blocks (users they block or are blocked by, one Query read
    while the search runs) are left out of the page after it is read: a page may then hold fewer
    listings than ``pageSize``, and ``total`` counts them (the index is shared by every viewer).

    Raises
    ------
    RuleViolation
        The cursor is malformed, edited or belongs to another query (field ``cursor``).
    """
    position = query.page.position(query.scope)
    owners = spec.Owners()
    hidden = blocks.hidden_from_later(viewer_id)
    try:
        result = engine.search(
            spec.spec(owners), spec.store(), spec.engine_query(query), position.page_size,
            offset=0 if position.key else position.offset, after=position.key,
            skipped=position.offset if position.key else 0,
        )
    except engine.InvalidPosition as exc:
        raise errors.RuleViolation.for_field("cursor", "is not a cursor of this search", "Invalid cursor") from exc
    excluded = hidden()
    hits = [hit for hit in result.hits if hit.record["ownerId"] not in excluded]
    missing = [hit.record["ownerId"] for hit in hits if hit.record["ownerId"] not in owners.asked]
    people = {**owners.found, **(users.get_users(list(dict.fromkeys(missing))) if missing else {})}
    listings = [
        {**view_fields(hit.record, people.get(hit.record["ownerId"])),  # type: ignore[arg-type]
         "distanceKm": None if hit.distance_km is None else round(hit.distance_km, 2),
         "score": None if hit.score is None else round(hit.score, 4)}
        for hit in hits
    ]
    last = result.hits[-1].key if result.hits else None
    return ListingPage.model_validate({  # one validation for the page, not one per listing
        "listings": listings, "total": result.total, "totalRelation": result.relation, "page": position.page,
        "pageSize": position.page_size, "nextCursor": position.next_cursor(result.more, last),
    })
