"""The search engine's merge join and number buckets equal brute force (hypothesis; in-memory store).

The posting store's read (:func:`chalicelib.search.postings.read`) is replaced by an in-memory
fake with the same contract (key-condition bounds, order, ``Limit``, ``more``), so random data
and random conjunctions run without moto.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.search import buckets, join
from chalicelib.search.postings import Posting, PostingPage


class FakeStore:
    """Lists of postings in memory; :meth:`read` mirrors the store's Query semantics and counts calls."""

    def __init__(self, lists: dict[str, list[str]]) -> None:
        self.lists = {name: sorted(set(sorts)) for name, sorts in lists.items()}
        self.calls = 0
        self.entries = 0

    def read(self, list_name: str, limit: int, *, after: str | None = None, descending: bool = True,
             low: str | None = None, high: str | None = None) -> PostingPage:
        self.calls += 1
        found = [s for s in self.lists.get(list_name, []) if (low is None or s >= low) and (high is None or s <= high)]
        if descending:
            found.reverse()
        if after is not None:
            found = [s for s in found if (s < after if descending else s > after)]
        page = found[:limit]
        self.entries += len(page)
        return PostingPage([Posting(s, f"id-{s}") for s in page], len(found) > limit)


ITEMS = [f"{i:03d}" for i in range(60)]
lists_strategy = st.lists(st.sets(st.sampled_from(ITEMS), max_size=40), min_size=1, max_size=6)


@st.composite
def conjunctions(draw: st.DrawFn) -> tuple[list[set[str]], list[list[int]], list[list[bool]], list[int]]:
    """Lists of items, restrictions as unions of list indexes, exactness per member and limits."""
    lists = draw(lists_strategy)
    count = draw(st.integers(1, 4))
    restrictions = [draw(st.lists(st.integers(0, len(lists) - 1), min_size=1, max_size=3, unique=True)) for _ in range(count)]
    exact = [[draw(st.booleans()) for _ in r] for r in restrictions]
    limits = [draw(st.integers(1, 12)) for _ in restrictions]
    return lists, restrictions, exact, limits


def _members(lists: list[set[str]], restrictions: list[list[int]], exact: list[list[bool]], limits: list[int]) -> list[list[join.Member]]:
    return [[join.Member(f"l{i}", limit, ok) for i, ok in zip(r, e, strict=True)]
            for r, e, limit in zip(restrictions, exact, limits, strict=True)]


def _brute(lists: list[set[str]], restrictions: list[list[int]]) -> set[str]:
    unions = [set().union(*(lists[i] for i in r)) for r in restrictions]
    return set.intersection(*unions)


@given(conjunctions(), st.booleans(), st.sampled_from([None, *ITEMS[::7]]), st.sampled_from([(None, None), ("010", "050"), (None, "030")]))
def test_the_join_equals_the_intersection_of_the_unions(case: tuple, descending: bool, after: str | None,
                                                        bounds: tuple[str | None, str | None]) -> None:
    lists, restrictions, exact, limits = case
    store = FakeStore({f"l{i}": sorted(items) for i, items in enumerate(lists)})
    low, high = bounds
    hits = list(join.intersect(_members(lists, restrictions, exact, limits), store.read, descending=descending,
                               after=after, low=low, high=high, parallel=False))
    expected = sorted(
        (s for s in _brute(lists, restrictions)
         if (low is None or s >= low) and (high is None or s <= high)
         and (after is None or (s < after if descending else s > after))),
        reverse=descending,
    )
    assert [h.sort for h in hits] == expected  # each once, in list order
    assert all(h.item_id == f"id-{h.sort}" for h in hits)
    for hit in hits:  # exact: every restriction holds it in an exact list
        held = [any(ok and hit.sort in lists[i] for i, ok in zip(r, e, strict=True)) for r, e in zip(restrictions, exact, strict=True)]
        assert hit.exact == all(held)


@given(conjunctions(), st.integers(1, 5))
def test_cursors_resume_the_join_where_the_page_ended(case: tuple, page_size: int) -> None:
    """Pages by cursor (the last hit's sort) and ``page=N`` offsets of the join give the same sequence."""
    lists, restrictions, exact, limits = case
    store = FakeStore({f"l{i}": sorted(items) for i, items in enumerate(lists)})
    members = _members(lists, restrictions, exact, limits)
    whole = [h.sort for h in join.intersect(members, store.read, descending=True, parallel=False)]
    paged: list[str] = []
    after: str | None = None
    while True:
        page = [h.sort for h in itertools.islice(join.intersect(members, store.read, descending=True, after=after), page_size)]
        paged += page
        if len(page) < page_size:
            break
        after = page[-1]
    assert paged == whole
    for number in range(1, len(whole) // page_size + 2):
        offset = list(itertools.islice(join.intersect(members, store.read, descending=True), (number - 1) * page_size, number * page_size))
        assert [h.sort for h in offset] == whole[(number - 1) * page_size : number * page_size]


def test_a_join_reads_around_the_answer_not_the_large_lists() -> None:
    """Two lists of 15,000 entries, each dense where the other is sparse, sharing 30 items: the
    first 21 hits read a small part of either list (each jump is one Query from the new target)."""
    shared = {f"{i:05d}" for i in range(0, 30_000, 1000)}
    a = shared | {f"{i:05d}" for i in range(1, 15_000)}
    b = shared | {f"{i:05d}" for i in range(15_001, 30_000)}
    store = FakeStore({"a": sorted(a), "b": sorted(b)})
    limits = join.limits([len(a), len(b)], 30_000, 21)
    members = [[join.Member("a", limits[0])], [join.Member("b", limits[1])]]
    hits = list(itertools.islice(join.intersect(members, store.read, descending=True), 21))
    assert [h.sort for h in hits] == sorted(shared, reverse=True)[:21]
    assert store.entries < (len(a) + len(b)) / 10
    assert store.calls <= 3 * 21


def _values() -> st.SearchStrategy[Decimal]:
    return st.one_of(
        st.integers(-10**6, 10**18).map(Decimal),
        st.decimals(min_value=Decimal("-1000"), max_value=Decimal("1e15"), places=6, allow_nan=False, allow_infinity=False),
        st.sampled_from([Decimal(2) ** e for e in range(0, 61)]),
    )


@given(st.lists(_values(), min_size=1, max_size=30), st.one_of(st.none(), _values()), st.one_of(st.none(), _values()))
def test_a_range_cover_holds_every_value_of_the_range_once_and_exact_lists_only_those(
        values: list[Decimal], low: Decimal | None, high: Decimal | None) -> None:
    cover = buckets.overlapping(low, high)
    found = dict(cover)
    assert len(found) == len(cover)  # no list twice
    for value in values:
        inside = (low is None or value >= low) and (high is None or value <= high)
        held = [label for label in buckets.labels_of(value) if label in found]
        assert len(held) <= 1  # disjoint: a value is never counted twice
        if inside:
            assert held  # no match is lost
        elif held:
            assert not found[held[0]]  # a list holding a non-match is verified
    assert len(cover) <= 2 * (buckets.GROUP - 1) + buckets.TOP // buckets.GROUP + 3


def test_a_wide_range_reads_groups_and_buckets_only_at_its_ends() -> None:
    assert buckets.labels_of(Decimal(650)) == ("p09", "g02")
    assert buckets.labels_of(Decimal(2) ** 50) == ("p40",)
    cover = buckets.overlapping(None, Decimal(5000))
    assert cover == [("neg", True), ("zero", True), ("g00", True), ("g01", True), ("g02", True), ("p12", False)]
    assert buckets.overlapping(Decimal(80000), None)[:5] == [("p16", False), ("p17", True), ("p18", True), ("p19", True),
                                                             ("g05", True)]


def _in_bucket(label: str) -> Iterator[Decimal]:
    """Edge values of a bucket or group (for the exactness check)."""
    if label == "zero":
        yield Decimal(0)
    elif label == "neg":
        yield from (Decimal("-1e18"), Decimal("-0.000001"))
    elif label.startswith("g"):
        first = int(label[1:]) * buckets.GROUP
        yield Decimal("0.000001") if first == 0 else Decimal(2) ** first
        yield Decimal(2) ** (first + buckets.GROUP) - Decimal("0.000001")
    else:
        e = int(label[1:])
        lo = Decimal("0.000001") if e == 0 else Decimal(2) ** e
        yield lo
        if e < buckets.TOP:
            yield Decimal(2) ** (e + 1) - Decimal("0.000001")


@given(st.one_of(st.none(), _values()), st.one_of(st.none(), _values()))
def test_an_exact_bucket_lies_wholly_inside_the_range(low: Decimal | None, high: Decimal | None) -> None:
    for label, exact in buckets.overlapping(low, high):
        assert all(label in buckets.labels_of(v) for v in _in_bucket(label))
        if exact:
            assert all((low is None or v >= low) and (high is None or v <= high) for v in _in_bucket(label))


def test_a_restriction_is_joined_only_while_it_lowers_the_weighted_reads() -> None:
    # Two selective restrictions: reading both lists' entries beats verifying the first one's candidates.
    assert join.worth_joining([0.12, 0.3], 4) == 2
    # A restriction most items pass filters too little to pay for its entries.
    assert join.worth_joining([0.01, 0.45], 4) == 1
    assert join.worth_joining([0.2], 4) == 1
    assert join.worth_joining([0.1, 0.1, 0.1, 0.1, 0.1], 3) == 2  # a third list costs more entries than it saves


def test_limits_follow_the_expected_answer_and_stay_bounded() -> None:
    assert join.limits([100, 100], 1000, 21) == [100, 100]  # a sparse answer: the most one Query asks
    assert join.limits([900, 900], 1000, 21) == [25, 25]  # a dense one: about the page
    assert min(join.limits([1, 1], 10**6, 21)) >= join.MIN_LIMIT
