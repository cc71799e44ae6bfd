"""The search engine's pages equal a brute-force evaluation (hypothesis, in-process moto).

Random listings in two categories (random words that share prefixes, select, multiselect and
number values; some paused, updated or deleted after approval) are filed by the Listings-stream
consumer; random searches combining ``q``, category, role, equality, ``contains`` and ranges,
with random page sizes, are followed through their cursors and opened by ``page=N`` without
one. The pages
concatenated must be exactly the ACTIVE listings that :func:`filters.evaluate` accepts, newest
first; ``total`` exact when ``totalRelation`` is "eq", a bound between what was returned and
the matches when "gte". The engine's pages against brute force run with many more examples over
the in-memory store (``tests/unit/test_search_engine_property.py``); here, a few examples prove
the same on the stored posting lists, counters and cursors.
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.kernel.config import settings as settings_
from chalicelib.listings import repository
from chalicelib.listings.search import filters
from chalicelib.listings.search.query import parse_search
from chalicelib.listings.search.service import search_listings
from chalicelib.listings.status import ListingStatus, Transition
from chalicelib.persistence.transactions import Transaction
from chalicelib.workflows.listing_deletion import delete_listing_rejecting_requests
from tests.integration.aws_session import Resources, reset
from tests.integration.helpers import index_listings, moto_examples, newest_first, table_items

_WORDS = ["python", "pythonista", "py", "rust", "rustacean", "barista", "baker", "go", "a"]
_FATES = ["active", "active", "paused", "updated", "deleted", "pending"]

_JOB = st.fixed_dictionaries({
    "employmentType": st.sampled_from(["full_time", "part_time"]),
    "skills": st.sampled_from(["go", "rust", "go,rust", "python"]),
    "salary": st.sampled_from(["40000", "60000", "85000.5", "90000"]),
})
_HOME = st.fixed_dictionaries({
    "propertyType": st.sampled_from(["room", "studio"]),
    "rentMonthly": st.sampled_from(["500", "650", "900"]),
    "amenities": st.sampled_from(["balcony", "parking", "balcony,parking"]),
})
_LISTING = st.tuples(
    st.sampled_from(["jobs", "housing"]), st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3), _JOB, _HOME,
    st.sampled_from(_FATES), st.booleans(),
)
_FILTERS = {
    "jobs": st.fixed_dictionaries({}, optional={
        "meta.employmentType": st.sampled_from(["full_time", "part_time"]),
        "meta.skills": st.sampled_from(["go", "go,rust"]),
        "meta.salary_min": st.sampled_from(["50000", "85000.5"]),
        "meta.salary_max": st.sampled_from(["60000", "90000"]),
        "meta.salary": st.sampled_from(["90000"]),
    }),
    "housing": st.fixed_dictionaries({}, optional={
        "meta.propertyType": st.sampled_from(["room"]),
        "meta.amenities": st.sampled_from(["balcony", "balcony,parking"]),
        "meta.rentMonthly_max": st.sampled_from(["650"]),
    }),
}


@st.composite
def _queries(draw: st.DrawFn, terms: bool = True) -> dict[str, str]:
    category = draw(st.sampled_from([None, "jobs", "housing"]))
    params: dict[str, str] = {}
    if category:
        params["category"] = category
        params.update(draw(_FILTERS[category]))
        role = draw(st.sampled_from([None, "hiring" if category == "jobs" else "offering"]))
        if role:
            params["role"] = role
    else:
        params.update(draw(_FILTERS["jobs"]))
    q = draw(st.sampled_from([None, "py", "python", "pythonista", "rust", "ba", "a", "go rust", "rustacea"])) if terms else None
    if q:
        params["q"] = q
        params["sort"] = draw(st.sampled_from(["newest", "relevance"]))
    return params


def _create(run: str, n: int, spec: tuple[str, list[str], dict[str, str], dict[str, str], str, bool]) -> None:
    category, words, job, home, fate, hiring = spec
    title = " ".join(words)
    meta = {"title": title, **(job if category == "jobs" else home)}
    role = ("hiring" if hiring else "seeking") if category == "jobs" else ("offering" if hiring else "seeking")
    if category == "housing" and role == "seeking":
        meta.pop("amenities")
    now = f"2026-05-01T00:00:{n:02d}.000Z"
    item: Any = {"listingId": f"lst_{run}{n:02d}", "ownerId": "usr_prop", "categoryKey": category, "roleKey": role,
                 "title": title, "meta": meta, "channels": [], "webhookIds": [], "status": "PENDING", "version": 1,
                 "searchText": title, "createdAt": now, "updatedAt": now}
    repository.create(item, [])
    if fate == "pending":
        return
    written = repository.transition(item, Transition.APPROVE, now)
    if fate == "paused":
        repository.transition(written, Transition.PAUSE, now)
    elif fate == "deleted":
        delete_listing_rejecting_requests(written, repository.leave_active_ops(written, ListingStatus.ACTIVE))
    elif fate == "updated":  # new words, approved again: the old words' lists must forget it
        changed = {**written, "title": "rustacean baker", "searchText": "rustacean baker",
                   "meta": {**meta, "title": "rustacean baker"}, "updatedAt": now}
        _replace(changed, int(written["version"]))
        again = repository.get(item["listingId"])
        assert again is not None
        repository.transition(again, Transition.APPROVE, now)


def _replace(item: Any, version: int) -> None:
    """The content update of an ACTIVE listing, as the listings service writes it (back to PENDING)."""
    tx = Transaction().add("listing", repository.replace_content_op(item, version, ListingStatus.ACTIVE))
    tx.add_all("counters", repository.leave_active_ops(item, ListingStatus.ACTIVE))
    tx.commit()


@given(plan=st.lists(_LISTING, max_size=14), query=_queries(), page_size=st.integers(1, 4))
@settings(max_examples=moto_examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_planned_pages_equal_brute_force(
    aws: dict[str, str], aws_resources: Resources, plan: list[Any], query: dict[str, str], page_size: int,
) -> None:
    reset(aws_resources)  # every example starts from empty tables and streams (moto copies a table per transaction)
    run = uuid.uuid4().hex[:8]
    for n, spec in enumerate(plan):
        _create(run, n, spec)
    assert index_listings() == {"batchItemFailures": []}
    params = {**query, "pageSize": str(page_size)}
    parsed = parse_search(params)
    stored = table_items(settings_().LISTINGS_TABLE)
    expected = [i["listingId"] for i in newest_first(stored)
                if i["status"] == "ACTIVE" and filters.evaluate(parsed, i) is not None]
    found: list[str] = []
    cursor: str | None = None
    for _ in range(len(expected) + 2):
        page = search_listings(parse_search({**params, **({"cursor": cursor} if cursor else {})}))
        found += [listing.id for listing in page.listings]
        if page.totalRelation == "eq":
            assert page.total == len(expected), (query, found, expected)
        else:
            assert len(found) <= page.total <= len(expected), (query, page.total)
        cursor = page.nextCursor
        if cursor is None:
            break
    ranked = params.get("sort") == "relevance"  # ordered by score: the same matches, each once
    assert (sorted(found) if ranked else found) == (sorted(expected) if ranked else expected), query
    # page=N without a cursor (skipped pages counted from key-only entries where the join is exact)
    for number in (2, 3):
        offset = search_listings(parse_search({**params, "page": str(number)}))
        want = (found if ranked else expected)[(number - 1) * page_size : number * page_size]
        assert [listing.id for listing in offset.listings] == want, query
