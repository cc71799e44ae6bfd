"""The Dashboard's "My listings": pages of 10 by cursor, a status filter and a title search whose
"Load more" keeps the filter (the cursor is bound to it)."""

from __future__ import annotations

import re

from tests.integration.conftest import Api, User
from tests.integration.helpers import create_listing
from tests.integration.test_dashboard import signed_in


def _titles(text: str) -> list[str]:
    return re.findall(r'<h2 id="l-lst_[^"]+"><a href="/dashboard/listings/lst_[^"]+"[^>]*>([^<]+)</a>', text)


def _more(text: str) -> str | None:
    found = re.search(r'<a class="button" href="([^"]+)" hx-get', text)
    return found.group(1).replace("&amp;", "&") if found else None


def test_my_listings_page_by_ten_filter_by_status_and_search_titles(api: Api, alice: User) -> None:
    created = [create_listing(api, alice, meta={"title": f"{'Gardening' if i % 3 == 0 else 'Cooking'} class {i}"}) for i in range(14)]
    paused = created[0]["id"]
    from chalicelib.kernel import clock
    from chalicelib.listings import api as listing_store
    from chalicelib.listings.status import Transition

    listing_store.transition(listing_store.get(paused) or {}, Transition.APPROVE, clock.iso())
    assert api.call("PATCH", f"/v1/listings/{paused}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    b = signed_in(api, alice)
    first = b.get("/dashboard/listings").text
    assert len(_titles(first)) == 10
    assert _more(first)

    gardening = b.get("/dashboard/listings?q=GARDEN").text  # case-insensitive, words of the title
    assert sorted(_titles(gardening)) == sorted(f"Gardening class {i}" for i in range(0, 14, 3))
    assert 'value="GARDEN"' in gardening

    only_paused = b.get("/dashboard/listings?status=PAUSED").text
    assert _titles(only_paused) == ["Gardening class 0"]
    assert '<option value="PAUSED" selected>' in only_paused

    pending = b.get("/dashboard/listings?status=PENDING&pageSize=5").text
    assert len(_titles(pending)) == 5
    more = _more(pending)
    assert more
    assert "status=PENDING" in more
    rest: list[str] = []
    while more:
        page = b.get(more).text
        rest += _titles(page)
        more = _more(page)
    assert len(_titles(pending)) + len(rest) == 13
    assert "No listings match the filter." in b.get("/dashboard/listings?q=nothing+like+this").text
    assert b.get("/dashboard/listings?status=LOST").status_code == 400
