"""The steps (sequential round trips) and reads of a search per query shape, on the in-memory store.

A step is one call of :meth:`Store.read` (the engine sends its Queries and BatchGetItems
together), so these counts are the round trips a page waits on, free of timing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.search import engine, geo, index
from chalicelib.search.engine import Near, NumberRange, Query
from chalicelib.search.index import Change, IndexSpec
from chalicelib.search.store import Item, Key, MemoryStore, Range, Slice
from tests.unit.test_search_engine_property import _spec

SCOPES = ("jobs", "homes")


class Recording(MemoryStore):
    """The in-memory store, keeping the partitions each step read by range."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[list[str]] = []
        self.ranges: list[list[Range]] = []
        self.entries = 0

    def read(self, ranges: Sequence[Range], keys: Sequence[Key]) -> tuple[list[Slice], dict[Key, Item]]:
        self.log.append([r.pk for r in ranges])
        self.ranges.append(list(ranges))
        slices, found = super().read(ranges, keys)
        self.entries += sum(len(s.items) for s in slices)
        return slices, found


def _store(count: int = 60) -> tuple[Recording, IndexSpec]:
    """``count`` documents in two scopes: every one holds "mentoring" (stem ``mentor``), every third
    "garden"; prices 10 apart."""
    records: dict[str, Mapping[str, Any]] = {
        f"d{n:03d}": {"id": f"d{n:03d}", "v": 1, "scope": SCOPES[n % 2], "t": n + 1,
                      "title": "mentoring garden" if n % 3 == 0 else "mentoring desk", "body": "the design " * (n % 4),
                      "role": "ab"[n % 2], "price": str(10 * n), "lat": 47.5, "lng": 8.5}
        for n in range(count)
    }
    spec, store = _spec(records), Recording()
    index.apply(spec, store, [Change(d.id, d.version, d) for r in records.values() if (d := spec.document(r)) is not None])
    store.log.clear()
    return store, spec


def _search(store: Recording, spec: IndexSpec, query: Query, after: str | None = None) -> engine.Result:
    store.log.clear()
    store.ranges.clear()
    store.entries = 0
    return engine.search(spec, store, query, 10, after=after)


def test_a_word_that_matches_its_stem_alone_is_answered_in_two_steps() -> None:
    store, spec = _store()
    result = _search(store, spec, Query(SCOPES, ("mentoring",), order="relevance"))
    assert len(result.hits) == 10
    assert result.more
    assert len(store.log) == 2
    # Step 1: per scope the vocabulary range of the word's start (its completions and the typo
    # terms of an edit past letter 3), its four typo keys, and its stem list's first block.
    first = store.log[0]
    for scope in SCOPES:
        assert [pk for pk in first if pk.startswith(f"test|{scope}|")] == [
            f"test|{scope}|d|{part}" for part in ("mnor", "mnto", "mor", "mtor")] + [f"test|{scope}|v|m", f"test|{scope}|t|mentor"]


def test_two_words_whose_lists_end_in_the_first_block_take_two_steps() -> None:
    store, spec = _store()
    result = _search(store, spec, Query(("jobs",), ("garden", "mentoring"), order="relevance"))
    assert sorted(h.id for h in result.hits) == [f"d{n:03d}" for n in range(0, 60, 6)]
    assert not result.more
    assert len(store.log) == 2
    assert {"test|jobs|t|garden", "test|jobs|t|mentor"} <= set(store.log[0])


def test_a_prefix_and_a_typo_take_three_steps() -> None:
    store, spec = _store()
    for words in (("ment",), ("mentroing",)):
        result = _search(store, spec, Query(SCOPES, words, order="relevance"))
        assert len(result.hits) == 10, words
        assert len(store.log) == 3, words  # the vocabulary; the expanded terms' lists; their documents


def test_an_open_number_range_reads_only_the_buckets_that_hold_entries() -> None:
    store, spec = _store()
    result = _search(store, spec, Query(SCOPES, ranges=(NumberRange("price", low=Decimal(500)),)))
    assert [h.id for h in result.hits] == [f"d{n:03d}" for n in range(59, 49, -1)]
    lists = [pk for step in store.log for pk in step]
    # 500..590 lie in the buckets of 256..511 and 512..1023; the 39 buckets above them are empty.
    assert sorted(set(lists)) == [f"test|{s}|n|price|{b}" for s in ("homes", "jobs") for b in ("p08", "p09")]
    assert len(store.log) == 3


def test_a_relevance_page_after_a_cursor_resumes_its_lists_in_two_steps() -> None:
    store, spec = _store()
    query = Query(SCOPES, ("mentoring",), order="relevance")
    first = _search(store, spec, query)
    first_entries = store.entries
    both = [h.id for h in engine.search(spec, store, query, 20).hits]
    second = _search(store, spec, query, after=first.hits[-1].key)
    assert [h.id for h in first.hits + second.hits] == both
    assert len(store.log) == 2
    # The stem lists start at the ceiling the cursor carries: below the impacts of page 1's scores.
    stems = [r for r in store.ranges[0] if "|t|" in r.pk]
    assert len(stems) == 2
    assert all(r.after is not None for r in stems)
    assert store.entries <= first_entries


def test_a_page_that_the_loaded_block_completes_reads_no_further_block() -> None:
    store, spec = _store(200)
    for query in (Query(("jobs",)), Query(("jobs",), ("mentoring",), order="relevance")):
        result = _search(store, spec, query)
        assert len(result.hits) == 10
        lists = [pk for step in store.log for pk in step if "|d|" not in pk and "|v|" not in pk]
        assert len(lists) == 1, query  # the first block only: its loads complete the page
        assert store.entries < 60, query


def test_the_loads_that_will_fill_the_page_close_the_lists_that_cannot_reach_it() -> None:
    """Jobs' documents hold "mentoring" in a one-word title (the best impact, all tied), homes' in
    longer titles. A prefix's block takes each scope's share; once the candidates being loaded
    hold a page at their worst scores, only jobs' list can still reach it. The ties of jobs end
    the walk although homes' documents are newer: no unread one can score jobs' impact."""
    records: dict[str, Mapping[str, Any]] = {}
    for n in range(40):
        for scope, title, t in (("jobs", "mentoring", n + 1), ("homes", "mentoring" + " desk" * (1 + n % 20), n + 100)):
            records[f"{scope[0]}{n:03d}"] = {"id": f"{scope[0]}{n:03d}", "v": 1, "scope": scope, "t": t, "title": title,
                                             "body": "", "role": "a", "price": "1", "lat": 47.5, "lng": 8.5}
    spec, store = _spec(records), Recording()
    index.apply(spec, store, [Change(d.id, d.version, d) for r in records.values() if (d := spec.document(r)) is not None])
    query = Query(SCOPES, ("ment",), order="relevance")
    result = _search(store, spec, query)
    assert [h.id for h in result.hits] == [f"j{n:03d}" for n in range(39, 29, -1)]
    lists = [[pk for pk in step if "|t|mentor" in pk] for step in store.log]
    assert lists[1] == ["test|jobs|t|mentor", "test|homes|t|mentor"]  # each scope's share
    assert lists[2:] == [["test|jobs|t|mentor"], []]  # with the loads: jobs' list alone; then the last loads


def test_a_page_loads_about_its_own_documents_whatever_its_blocks_read() -> None:
    """Each scope's first block may hold the whole page (11 of each scope's 100 entries here), but only
    the candidates whose best key ranks within the page are loaded: by relevance (the entry's impact
    is the word's exact contribution), by age and by distance."""
    store, spec = _store(200)
    loaded: list[str] = []
    original = spec.load

    def load(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        loaded.extend(entries)
        return dict(original(entries))

    spec = replace(spec, load=load)
    for query in (Query(SCOPES, ("mentoring",), order="relevance"), Query(SCOPES, ("mentoring",), order="newest"),
                  Query(SCOPES, near=Near(47.5, 8.5), order="nearest")):
        expected = [h.id for h in engine.search(spec, store, query, 200).hits[:10]]
        loaded.clear()
        result = _search(store, spec, query)
        assert [h.id for h in result.hits] == expected, query
        assert result.more
        assert len(loaded) <= 11 + 2, query  # the page and the one after it, give or take a tie


def test_many_words_and_scopes_read_their_typo_keys_with_the_first_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    store, spec = _store()
    query = Query(SCOPES, ("garden", "mentoring"), order="relevance")
    sent = _search(store, spec, query)
    assert sum("|d|" in pk for pk in store.log[0]) == 16
    monkeypatch.setattr(engine, "DEFER_ABOVE", 10)  # 2 words x 2 scopes x 6 Queries = 24 > 10
    deferred = _search(store, spec, query)
    assert [h.id for h in deferred.hits] == [h.id for h in sent.hits]
    assert len(store.log) == 2
    assert len(store.log[0]) == 8  # per scope and word: its vocabulary range and its stem list
    assert sum("|d|" in pk for pk in store.log[1]) == 16  # four typo keys per scope and word


def test_words_whose_own_lists_fill_the_page_never_read_their_typo_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    store, spec = _store(300)
    query = Query(SCOPES, ("garden", "mentoring"), order="relevance")
    sent = _search(store, spec, query)
    monkeypatch.setattr(engine, "DEFER_ABOVE", 10)
    deferred = _search(store, spec, query)
    assert [(h.id, h.score) for h in deferred.hits] == [(h.id, h.score) for h in sent.hits]
    assert len(deferred.hits) == 10
    assert not any("|d|" in pk for step in store.log for pk in step)  # a correction cannot enter the page
    assert deferred.relation == "gte"  # the corrections' documents were never counted


def test_several_words_take_each_list_four_times_deeper_per_read() -> None:
    store, spec = _store(1200)
    _search(store, spec, Query(SCOPES, ("garden", "mentoring"), order="relevance"))
    depth: dict[str, int] = {}
    deeper = 0
    for step in store.ranges:
        for wanted in (r for r in step if "|t|" in r.pk):
            if wanted.pk in depth:
                assert (wanted.limit or 0) >= (engine.DEEPEN - 1) * depth[wanted.pk]
                deeper += 1
            depth[wanted.pk] = depth.get(wanted.pk, 0) + (wanted.limit or 0)
    assert deeper  # some list was read again


def test_a_narrow_range_expects_its_share_of_each_bucket() -> None:
    narrow = NumberRange("price", low=Decimal(1000), high=Decimal(1050))
    assert engine._overlap(narrow, "p09") == 24 / 512  # 1000..1024 of 512..1024
    assert engine._overlap(narrow, "p10") == 26 / 1024  # 1024..1050 of 1024..2048
    assert engine._overlap(NumberRange("price", low=Decimal(600)), "p10") == 1.0
    assert engine._overlap(narrow, "zero") == 1.0
    store, spec = _store(200)
    result = _search(store, spec, Query(("jobs",), ranges=(narrow,)))
    assert [h.id for h in result.hits] == ["d104", "d102", "d100"]
    assert len(store.log) == 3  # the counters; the buckets, read in one block; the loads


def test_a_document_matched_through_a_deferred_correction_waits_for_its_count(monkeypatch: pytest.MonkeyPatch) -> None:
    store, spec = _store()
    query = Query(SCOPES, ("mentoring", "gaden"), order="relevance")  # "garden" lies under the typo key of "gaden" only
    sent = engine.search(spec, store, query, 10)
    monkeypatch.setattr(engine, "DEFER_ABOVE", 0)
    deferred = _search(store, spec, query)
    assert [(h.id, h.score) for h in deferred.hits] == [(h.id, h.score) for h in sent.hits]
    assert len(deferred.hits) == 10
    # The vocabulary; the typo keys with the mentor lists' best documents (whose "garden" count is
    # unknown: they wait); the garden lists and counts with the next candidates, which complete the page.
    assert len(store.log) == 3


def _spread(count: int, step: float) -> tuple[Recording, IndexSpec]:
    """``count`` documents on a line going north from (47.5, 8.5), ``step`` degrees of latitude apart."""
    records: dict[str, Mapping[str, Any]] = {
        f"p{n:03d}": {"id": f"p{n:03d}", "v": 1, "scope": "jobs", "t": n + 1, "title": "desk", "body": "", "role": "a",
                      "price": "1", "lat": 47.5 + step * n, "lng": 8.5}
        for n in range(count)
    }
    spec, store = _spec(records), Recording()
    index.apply(spec, store, [Change(d.id, d.version, d) for r in records.values() if (d := spec.document(r)) is not None])
    return store, spec


def test_nearest_first_widens_its_disc_of_cells_before_it_reads_a_coarser_level() -> None:
    """Points 0.001 degrees (about 110 m) apart going north: the 3 x 3 precision-6 cells around the
    first (about 600 m north and south) hold fewer than a page, a wider disc holds it: precision-6
    cells beyond the 3 x 3 are read, no coarser cell, and the page is the brute-force nearest."""
    store, spec = _spread(60, 0.001)
    result = _search(store, spec, Query(("jobs",), near=Near(47.5, 8.5), order="nearest"))
    assert [h.id for h in result.hits] == [f"p{n:03d}" for n in range(10)]
    lists = {pk.split("|", 2)[2] for step in store.log for pk in step}
    block = {f"g6|{cell}" for cell in engine._block(47.5, 8.5, 6)[0]}
    assert {name for name in lists if name.startswith("g6|")} - block
    assert not [name for name in lists if name.startswith(("g4|", "g2|", "a"))]
    assert len(store.log) <= 5


def test_a_disc_holds_every_cell_nearer_than_its_radius_and_reaches_past_it() -> None:
    """A disc's cells are exactly those of the surrounding 13 x 13 precision-6 square whose nearest
    point lies within the radius, and its reach is the distance to the nearest other cell."""
    lat, lng = 52.5244, 13.4105
    square, _ = engine._square_at(lat, lng, 6, 6)
    for radius in (0.1, 0.9, 1.7, 2.6):
        cells, reach = engine._disc(lat, lng, 6, radius)
        assert cells == {c for c in square if geo.min_distance_km(lat, lng, c) < radius} | {geo.cell_of(lat, lng, 6)}
        assert reach == min(geo.min_distance_km(lat, lng, c) for c in square - cells)
        assert reach >= radius


def test_nearest_first_moves_to_a_coarser_level_when_its_widest_square_is_short() -> None:
    """Points 0.05 degrees (about 5.5 km) apart: 7 x 7 precision-6 cells hold two of them, so the walk
    reads the precision-4 cells, and the page is still the brute-force nearest."""
    store, spec = _spread(40, 0.05)
    result = _search(store, spec, Query(("jobs",), near=Near(47.5, 8.5), order="nearest"))
    assert [h.id for h in result.hits] == [f"p{n:03d}" for n in range(10)]
    assert any(pk.split("|")[2].startswith("g4") for step in store.log for pk in step)


def test_nearest_first_reads_no_cell_of_a_scope_empty_around_the_centre() -> None:
    """A scope with no document in the coarser level's 3 x 3 cells has none in the squares inside them."""
    store, spec = _spread(60, 0.001)
    result = _search(store, spec, Query(("jobs", "homes"), near=Near(47.5, 8.5), order="nearest"))
    assert [h.id for h in result.hits] == [f"p{n:03d}" for n in range(10)]
    homes = [pk for step in store.log for pk in step if pk.split("|")[1] == "homes"]
    assert not [pk for pk in homes if pk.split("|")[2].startswith("g")]


def test_nearest_first_at_a_pole_asks_for_no_cell_beyond_it(caplog: pytest.LogCaptureFixture) -> None:
    """Points going south from the north pole: the page is the brute-force nearest, and the walk
    never asks pygeohash for a neighbour beyond the pole (which logs an error before it raises)."""
    records: dict[str, Mapping[str, Any]] = {
        f"p{n:03d}": {"id": f"p{n:03d}", "v": 1, "scope": "jobs", "t": n + 1, "title": "desk", "body": "", "role": "a",
                      "price": "1", "lat": 90.0 - 0.05 * n, "lng": 8.5}
        for n in range(30)
    }
    spec, store = _spec(records), Recording()
    index.apply(spec, store, [Change(d.id, d.version, d) for r in records.values() if (d := spec.document(r)) is not None])
    with caplog.at_level("DEBUG", logger="pygeohash"):
        result = _search(store, spec, Query(("jobs",), near=Near(90.0, 8.5), order="nearest"))
    assert [h.id for h in result.hits] == [f"p{n:03d}" for n in range(10)]
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == []


def test_a_cell_touches_the_pole_its_box_reaches() -> None:
    north, south, berlin = geo.cell_of(90.0, 0.0, 6), geo.cell_of(-90.0, 0.0, 6), geo.cell_of(52.52, 13.4, 6)
    assert geo.touches_pole(north, "top")
    assert not geo.touches_pole(north, "bottom")
    assert geo.touches_pole(south, "bottom")
    assert not any(geo.touches_pole(berlin, d) for d in ("top", "bottom", "left", "right"))


def test_corrections_of_a_word_score_with_the_idf_of_its_most_frequent_one() -> None:
    """A made-up word one edit from the query word ("pyhon") is rare, the real word ("python") common:
    both corrections of "pyhton" score with the common one's idf, so with equal impacts the newer
    document comes first, not the rare word's."""
    records: dict[str, Mapping[str, Any]] = {
        f"c{n:02d}": {"id": f"c{n:02d}", "v": 1, "scope": "jobs", "t": n + 2, "title": "python desk", "body": "",
                      "role": "a", "price": "1", "lat": 47.5, "lng": 8.5}
        for n in range(8)
    }
    records["rare"] = {"id": "rare", "v": 1, "scope": "jobs", "t": 1, "title": "pyhon desk", "body": "", "role": "a",
                       "price": "1", "lat": 47.5, "lng": 8.5}
    spec, store = _spec(records), Recording()
    index.apply(spec, store, [Change(d.id, d.version, d) for r in records.values() if (d := spec.document(r)) is not None])
    result = engine.search(spec, store, Query(("jobs",), ("pyhton",), order="relevance"), 10)
    assert [h.id for h in result.hits] == [*(f"c{n:02d}" for n in range(7, -1, -1)), "rare"]
    assert len({h.score for h in result.hits}) == 1


def test_a_document_without_one_of_the_words_does_not_wait_for_correction_counts() -> None:
    """It cannot match, so it is dropped when loaded, not held for the counts of another word's corrections."""
    store, spec = _store()
    doc = spec.document(spec.load({"d001": {}})["d001"])  # "mentoring desk": no word near "pyhton"
    assert doc is not None
    ctx = engine._Context(spec, store, Query(SCOPES, ("desk", "pyhton"), order="relevance"),
                          {s: engine.analysis.query_words(("desk", "pyhton"), "english") for s in SCOPES})
    ctx.expansions[(doc.scope, 1)] = {"python": engine.analysis.Kind.TYPO}  # a correction, count unread
    assert engine._waits(ctx, doc, index.impacts(index.term_frequencies(spec, doc))) is None
