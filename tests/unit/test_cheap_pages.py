"""What a search page builds cheaply renders as the per-item models did (pure logic)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.edge.http import to_jsonable
from chalicelib.listings.models import ListingPage, ListingSearchItem
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.service import to_model, view_fields
from chalicelib.listings.status import ListingStatus
from chalicelib.users.records import UserRecord

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)


def _listing(number: int, reason: str | None, meta: dict[str, str]) -> ListingRecord:
    item: dict[str, Any] = {
        "listingId": f"lst_{number}", "ownerId": f"usr_{number % 3}", "categoryKey": "jobs", "roleKey": "hiring",
        "title": f"Listing {number}", "meta": meta, "channels": ["telegram"], "webhookIds": ["whk_1"],
        "status": ListingStatus.ACTIVE, "version": 1, "searchText": "listing",
        "createdAt": "2026-11-25T10:00:00.000Z", "updatedAt": "2026-11-25T10:00:01.000Z",
    }
    if reason is not None:
        item["statusReason"] = reason
    return item  # type: ignore[return-value]


OWNERS: dict[str, UserRecord] = {
    "usr_0": {"userId": "usr_0", "displayName": "Ann", "verifiedLevel": 2, "country": "de",  # type: ignore[typeddict-item]
              "socialLinks": {"github": "https://github.com/ann"}},
    "usr_1": {"userId": "usr_1", "displayName": "Bo"},  # type: ignore[typeddict-item]
}


@given(
    st.lists(st.tuples(st.none() | texts, st.dictionaries(texts, texts, max_size=3),
                       st.none() | st.floats(0, 20_000), st.none() | st.floats(0, 50)), max_size=6),
    st.none() | texts,
)
def test_a_page_validated_once_renders_as_one_model_per_listing(rows: list[Any], cursor: str | None) -> None:
    """``ListingPage.model_validate`` over :func:`view_fields` (the search page) renders what one
    :func:`to_model` per listing did: same fields, nulls kept, no ``webhookIds`` outside the owner's view."""
    listings = [_listing(n, reason, meta) for n, (reason, meta, _, _) in enumerate(rows)]
    extras = [{"distanceKm": distance, "score": score} for _, _, distance, score in rows]
    envelope = {"total": len(rows), "totalRelation": "eq", "page": 1, "pageSize": 20, "nextCursor": cursor}
    per_item = ListingPage(
        listings=[to_model(item, OWNERS.get(item["ownerId"]), model=ListingSearchItem, **extra)
                  for item, extra in zip(listings, extras, strict=True)],
        **envelope,
    )
    once = ListingPage.model_validate({
        "listings": [{**view_fields(item, OWNERS.get(item["ownerId"])), **extra} for item, extra in zip(listings, extras, strict=True)],
        **envelope,
    })
    assert to_jsonable(once) == to_jsonable(per_item)
    assert all("webhookIds" not in listing for listing in to_jsonable(once)["listings"])
