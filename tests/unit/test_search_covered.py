"""Covering posting entries (issue 20): a one-list read with entry checks equals brute force, its
Queries follow the matches, the engine planner picks the cheaper driver, and the domains'
projections are what their lists say (pure; in-memory store)."""

from __future__ import annotations

import itertools
import random

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.listings.search import filters
from chalicelib.listings.search.postings import OWNER, owner_list, posting_keys, projection
from chalicelib.listings.search.query import parse_search
from chalicelib.profiles import index as profile_index
from chalicelib.profiles.facets import Facets
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.profiles.search import entry_matches
from chalicelib.search import join, planner
from chalicelib.search.postings import Posting, PostingKey, PostingPage


class DataStore:
    """In-memory lists whose entries carry a projection ``{"v": <value>}`` (the store's Query semantics)."""

    def __init__(self, lists: dict[str, dict[str, str]]) -> None:
        self.lists = lists
        self.entries = 0
        self.calls = 0

    def read(self, list_name: str, limit: int, *, descending: bool = True, low: str | None = None,
             high: str | None = None) -> PostingPage:
        self.calls += 1
        found = sorted(s for s in self.lists.get(list_name, {}) if (low is None or s >= low) and (high is None or s <= high))
        if descending:
            found.reverse()
        page = found[:limit]
        self.entries += len(page)
        return PostingPage([Posting(s, f"id-{s}", {"v": self.lists[list_name][s]}) for s in page], len(found) > limit)


@given(st.dictionaries(st.integers(0, 300).map(lambda i: f"{i:03d}"), st.sampled_from("abc"), max_size=120),
       st.integers(0, 1), st.sampled_from(["a", "b"]), st.sampled_from([None, "150"]), st.floats(0.05, 1.0))
def test_a_covered_read_yields_exactly_the_accepted_entries_in_order(values: dict[str, str], split: int, wanted: str,
                                                                    after: str | None, rate: float) -> None:
    """A union of two lists read under a pace, entries checked on their projection: brute force."""
    left = {s: v for s, v in values.items() if int(s) % 2 == split}
    right = {s: v for s, v in values.items() if int(s) % 2 != split}
    store = DataStore({"l": left, "r": right})
    members = [join.Member("l", 0, share=0.5), join.Member("r", 0, share=0.5)]
    pace = join.Pace(5, rate)
    hits = list(join.intersect([members], store.read, descending=True, after=after, parallel=False,
                               accept=lambda p: p.data is not None and p.data["v"] == wanted, pace=pace))
    expected = sorted((s for s, v in values.items() if v == wanted and (after is None or s < after)), reverse=True)
    assert [h.sort for h in hits] == expected
    assert all(h.data == {"v": wanted} for h in hits)


def test_the_pace_reads_about_what_the_page_needs() -> None:
    """One list of 10,000 entries, one in eight accepted: 21 hits cost about 21 x 8 entries, not the list."""
    rng = random.Random(3)
    values = {f"{i:05d}": "a" if rng.random() < 0.125 else "b" for i in range(10_000)}
    store = DataStore({"l": values})
    pace = join.Pace(21, 0.125)
    hits = list(itertools.islice(join.intersect([[join.Member("l", 0)]], store.read, descending=True,
                                                accept=lambda p: p.data is not None and p.data["v"] == "a", pace=pace), 21))
    assert len(hits) == 21
    assert store.entries < 21 * 8 * 1.6
    assert store.calls <= 3


def test_the_planner_reads_the_list_whose_entries_decide_the_most() -> None:
    """Three covered filters: the smallest list drives. A q term (not on the entry) next to a
    selective filter: reading the term's list and checking the filter on entries costs fewer
    listings than reading the filter's list and the term on every listing."""
    covered = [planner.Restriction("country", 4300, 4300, True), planner.Restriction("open", 3000, 3000, True),
               planner.Restriction("skill", 1250, 1250, True)]
    chosen = planner.drive(covered, 10_000, 21)
    assert chosen is not None
    assert chosen.index == 2
    assert abs(chosen.entry_rate - 0.43 * 0.3) < 1e-9
    mixed = [planner.Restriction("q", 200, 200, False), planner.Restriction("type", 2500, 2500, True)]
    chosen = planner.drive(mixed, 10_000, 21)
    assert chosen is not None
    assert chosen.index == 0
    assert planner.drive([planner.Restriction("q", 0, 0, False, readable=False)], 100, 21) is None


def test_a_range_end_bucket_is_expected_to_hold_fewer_matches() -> None:
    """A bucket union whose entries half satisfy the range: its entry rate says so."""
    chosen = planner.drive([planner.Restriction("salary", 1000, 500, True)], 5000, 21)
    assert chosen is not None
    assert chosen.entry_rate == 0.5
    assert chosen.entries == 42


LISTING = {
    "status": "ACTIVE", "categoryKey": "jobs", "roleKey": "hiring", "listingId": "lst_1", "createdAt": "2026-01-01T00:00:00.000Z",
    "searchText": "rust engineer", "meta": {"employmentType": "contract", "salary": "85000.5", "skills": "go,rust", "remote": "onsite"},
}


def test_a_listing_projection_holds_its_role_and_filterable_values() -> None:
    data = projection(posting_keys(LISTING))
    assert data == {"_role": "hiring", "employmentType": "contract", "salary": "85000.5", "skills": "go,rust", "remote": "onsite"}


def test_a_listing_projection_names_its_owner_from_the_owner_list() -> None:
    keys = posting_keys({**LISTING, "ownerId": "usr_1"})
    assert PostingKey(owner_list("jobs", "usr_1"), "2026-01-01T00:00:00.000Z#lst_1") in keys
    assert projection(keys)[OWNER] == "usr_1"
    assert OWNER not in projection(posting_keys(LISTING))  # an item without an owner: none named


def test_the_entry_check_agrees_with_the_listing_check() -> None:
    """For queries of projected filters, an entry passes exactly when its listing does."""
    data = projection(posting_keys(LISTING))
    for raw in ({"category": "jobs", "meta.employmentType": "contract"}, {"category": "jobs", "meta.salary_min": "85000.5"},
                {"category": "jobs", "meta.salary_max": "85000"}, {"category": "jobs", "meta.skills": "rust,go"},
                {"category": "jobs", "meta.skills": "python"}, {"category": "jobs", "role": "seeking"},
                {"category": "jobs", "role": "hiring", "meta.remote": "onsite"}):
        query = parse_search(raw)
        assert filters.covered(query)
        assert filters.entry_matches(query, data) == (filters.evaluate(query, LISTING) is not None), raw
    assert not filters.covered(parse_search({"category": "jobs", "q": "rust"}))


def test_a_profile_projection_is_checked_like_the_profile() -> None:
    profile = Facets(user_id="usr_1", level=2, updated_at="2026-01-01T00:00:00.000Z", country="de",
                     skills=frozenset({"python", "go"}), open_to_work=True, seniority="mid", remote=None,
                     channels=frozenset({"telegram"}), words=frozenset())
    data = profile_index.projection(profile_index.posting_keys(profile))
    assert (data["country"], data["open"], data["channels"]) == ("de", "true", "telegram")
    assert set(data["skills"].split("\n")) == {"go", "python"}
    assert entry_matches(ProfileSearchQuery(country="de", openToWork=True, skills=["python"]), data)
    assert not entry_matches(ProfileSearchQuery(country="fr"), data)
    assert not entry_matches(ProfileSearchQuery(skills=["python", "rust"]), data)
    assert not entry_matches(ProfileSearchQuery(remote=True), data)
    assert entry_matches(ProfileSearchQuery(channel="telegram"), data)
