"""Property tests of the search engine over the in-memory store: every order's pages equal the
brute-force ranking of every match by the same scorer, page after page, and replayed or
out-of-order change batches leave the index exactly as filing the final documents once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.kernel import cursors
from chalicelib.kernel.cursors import CursorState
from chalicelib.kernel.pagination import MAX_CURSOR_LENGTH
from chalicelib.search import analysis, engine, index
from chalicelib.search.engine import Near, NumberRange, Query
from chalicelib.search.index import Change, Document, IndexSpec
from chalicelib.search.store import MemoryStore

WORDS = ["mentor", "mentoring", "mentors", "design", "designer", "desk", "python", "pythons", "garden", "gardener",
         "zurich", "berlin", "engineer", "engineering", "menthol", "mentos", "data", "the", "in",
         "developers", "devlop", "photographers", "photograph", "restaurants"]
# Two edits from a stem (words of nine letters or more): devlopp -> develop, photogrpa -> photograph; two
# from a written form whose stem is further: restuarnats -> restaurants (restaur), photogrpaer -> photographer.
TYPOS = ["mentro", "desing", "pyhton", "gardne", "engineeer", "mentr", "berlni", "devloppers", "photogrpaers",
         "restuarnats", "photogrpaer"]
SCOPES = ("jobs", "homes")


def _spec(records: Mapping[str, Mapping[str, Any]]) -> IndexSpec:
    def document(record: Mapping[str, Any]) -> Document | None:
        return Document(
            id=record["id"], version=record["v"], scope=record["scope"], newest=record["t"],
            text={"title": record["title"], "body": record["body"]}, keywords={"role": (record["role"],)},
            numbers={"price": Decimal(record["price"])}, point=(record["lat"], record["lng"]),
        )

    return IndexSpec(
        namespace="test", boosts={"title": 3.0, "body": 1.0}, lengths={"title": 4.0, "body": 12.0},
        language=lambda scope: "english", document=document,
        load=lambda entries: {i: records[i] for i in entries if i in records},
    )


records_strategy = st.lists(
    st.fixed_dictionaries({
        "scope": st.sampled_from(SCOPES),
        "title": st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
        "body": st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
        "role": st.sampled_from(["a", "b"]),
        "price": st.integers(0, 300).map(str),
        "t": st.integers(1, 40),
        "lat": st.floats(47.0, 48.0), "lng": st.floats(8.0, 9.0),
    }),
    min_size=1, max_size=30,
)


def _indexed(raw: Sequence[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], IndexSpec, MemoryStore]:
    records = {f"d{i:02d}": {**r, "id": f"d{i:02d}", "v": 1} for i, r in enumerate(raw)}
    spec, store = _spec(records), MemoryStore()
    docs = [spec.document(r) for r in records.values()]
    index.apply(spec, store, [Change(d.id, d.version, d) for d in docs if d is not None])
    return records, spec, store


def _held(word: analysis.Word, term: str, how: analysis.Kind, docs: Sequence[Document],
          weights: Mapping[str, Mapping[str, int]]) -> int:
    """The document count a matched term scores with: its own for the word's stem; for a completion
    (prefix), the largest of the counts of the word's stem and completions, and for a correction
    (typo) the largest of the counts of the word's corrections (each at least 1)."""
    if how == analysis.Kind.EXACT:
        return max(1, sum(term in weights[d.id] for d in docs))
    terms = {t for d in docs for t, k in analysis.best(word, weights[d.id]) if bool(k.edits) == bool(how.edits)}
    return max([1, *(sum(t in weights[d.id] for d in docs) for t in terms)])


def _expected(records: Mapping[str, Mapping[str, Any]], spec: IndexSpec, query: Query,
              counted: Mapping[str, Mapping[str, Any]] | None = None) -> list[tuple[Any, ...]]:
    """Every match's key in result order, by brute force over the documents; the idf counts the
    documents of ``counted`` (default: ``records``)."""
    docs = [d for r in records.values() if (d := spec.document(r)) is not None]
    statistics = [d for r in (counted or records).values() if (d := spec.document(r)) is not None]
    weights = {d.id: index.impacts(index.term_frequencies(spec, d)) for d in docs + statistics}
    in_scope = [d for d in statistics if d.scope in query.scopes]  # idf over the query's scopes
    keys = []
    for doc in docs:
        if doc.scope not in query.scopes:
            continue
        distance = engine._passes(query, index.projection(doc))
        if distance is None:
            continue
        total = 0.0
        for word in analysis.query_words(query.words, "english"):
            values = [
                engine.contribution(how, index.idf(_held(word, term, how, in_scope, weights), len(in_scope)), weights[doc.id][term])
                for term, how in analysis.best(word, weights[doc.id])
            ]
            if not values:
                break
            total += max(values)
        else:
            keys.append((*engine._key(query.order, total, distance, index.age_key(doc.newest, doc.id)), doc.id))
    return sorted(keys)


def _query_words() -> st.SearchStrategy[tuple[str, ...]]:
    word = st.one_of(st.sampled_from(WORDS), st.sampled_from(TYPOS), st.sampled_from(WORDS).map(lambda w: w[: max(2, len(w) - 3)]))
    return st.lists(word, min_size=1, max_size=3).map(tuple)


queries = st.builds(
    Query,
    scopes=st.sampled_from([("jobs",), ("homes",), SCOPES]),
    words=st.one_of(st.just(()), _query_words()),
    keywords=st.one_of(st.just(()), st.sampled_from([(("role", "a"),), (("role", "b"),)])),
    ranges=st.one_of(st.just(()), st.builds(lambda lo, hi: (NumberRange("price", Decimal(lo), Decimal(lo + hi)),),
                                            st.integers(0, 200), st.integers(0, 150))),
    near=st.one_of(st.none(), st.builds(Near, st.floats(47.0, 48.0), st.floats(8.0, 9.0),
                                        st.one_of(st.none(), st.floats(1.0, 80.0)))),
    order=st.sampled_from(["relevance", "newest", "nearest"]),
)


def _normalized(query: Query) -> Query:
    order = query.order
    if order == "nearest" and query.near is None:
        order = "newest"
    if order == "relevance" and not query.words:
        order = "newest"
    return Query(query.scopes, query.words, query.keywords, query.ranges, query.near, order)


@given(records_strategy, queries, st.integers(1, 7))
def test_pages_follow_the_brute_force_order_page_after_page(raw: list[dict[str, Any]], query: Query, size: int) -> None:
    _check_pages(raw, query, size)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records_strategy, queries, st.integers(1, 7))
def test_pages_stay_exact_when_the_typo_reads_wait_for_the_walk(raw: list[dict[str, Any]], query: Query, size: int) -> None:
    with mock.patch.object(engine, "DEFER_ABOVE", 0):  # every relevance search defers its delete keys
        _check_pages(raw, query, size)


def _counted(query: Query) -> bool:
    """Whether the engine counts ``query``'s total from one list's size (all of its matches, not those
    after a cursor): no restriction, one keyword, or one word (:func:`engine._counted_total`)."""
    return not query.ranges and query.near is None and len(query.keywords) + bool(query.words) <= 1


def _check_pages(raw: list[dict[str, Any]], query: Query, size: int) -> None:
    records, spec, store = _indexed(raw)
    query = _normalized(query)
    expected = [key[-1] for key in _expected(records, spec, query)]
    got: list[str] = []
    after = None
    for _ in range(40):
        result = engine.search(spec, store, query, size, after=after)
        got += [hit.id for hit in result.hits]
        assert len(result.hits) <= size
        if not result.more:  # the last page: every match was found, so the total is exact
            assert result.relation == "eq"
            assert result.total == (len(expected) if after is None else len(result.hits)) or _counted(query)
            break
        assert len(result.hits) == size
        after = result.hits[-1].key
    assert got == expected
    if size < len(expected):  # an offset page is the same slice
        page = engine.search(spec, store, query, size, offset=size)
        assert [h.id for h in page.hits] == expected[size : 2 * size]


relevance_queries = st.builds(Query, scopes=st.sampled_from([("jobs",), ("homes",), SCOPES]), words=_query_words(),
                              order=st.just("relevance"))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records_strategy, st.lists(records_strategy.map(lambda rs: rs[0]), min_size=1, max_size=6), st.sets(st.integers(0, 29)),
       relevance_queries, st.integers(1, 3))
def test_a_cursor_keeps_the_first_pages_statistics_while_documents_join_and_leave(
    raw: list[dict[str, Any]], joining: list[dict[str, Any]], leaving: set[int], query: Query, size: int,
) -> None:
    """Between pages documents join and leave, changing the counts the idf reads: the pages after
    the cursor are every document found then, in the order the first page's statistics give, after
    its last hit: none repeated, none of those ranking after it missed."""
    records, spec, store = _indexed(raw)
    first = engine.search(spec, store, query, size)
    if not first.more:
        return
    before = dict(records)
    gone = {f"d{i:02d}" for i in leaving if i < len(raw)} - {hit.id for hit in first.hits}
    joined = {f"e{i}": {**r, "id": f"e{i}", "v": 1, "t": 50 + i} for i, r in enumerate(joining)}
    for doc_id in gone:
        del records[doc_id]  # the spec's loader reads this mapping: a left document's record is gone too
    records.update(joined)
    index.apply(spec, store, [Change(doc_id, 2, None) for doc_id in gone]
                + [Change(r["id"], 1, spec.document(r)) for r in joined.values()])
    after, got = first.hits[-1].key, []
    for _ in range(40):
        page = engine.search(spec, store, query, size, after=after)
        got += [hit.id for hit in page.hits]
        if not page.more:
            break
        after = page.hits[-1].key
    last = engine.parse_position("relevance", first.hits[-1].key).key
    assert got == [key[-1] for key in _expected(records, spec, query, counted=before) if key[:2] > last]


def test_a_cursor_of_a_long_query_stays_within_the_cursor_length() -> None:
    """A query of many words in many scopes carries fewer marks rather than a cursor the API refuses:
    its next page is the same (:data:`chalicelib.search.engine.MAX_POSITION`)."""
    words = [f"{a}{b}{c}" for a in "bdfgk" for b in "aeiou" for c in "lmnrs"][:90]
    scopes = tuple(f"s{i}" for i in range(4))
    raw = [{"scope": scope, "title": " ".join(words[i::3]), "body": " ".join(words), "role": "a", "price": "0", "t": i,
            "lat": 47.0, "lng": 8.0} for i in range(3) for scope in scopes]
    records, spec, store = _indexed(raw)
    position = CursorState(page=10_000, page_size=100, key="9" * engine.MAX_POSITION)
    assert len(cursors.encode("|".join(["route", "user", "filters" * 100]), position)) <= MAX_CURSOR_LENGTH
    for count in (5, 40, 90):
        query = Query(scopes, tuple(words[:count]), order="relevance")
        first = engine.search(spec, store, query, 2)
        assert len(first.hits[-1].key) <= engine.MAX_POSITION
        rest = engine.search(spec, store, query, 20, after=first.hits[-1].key)
        assert [h.id for h in first.hits + rest.hits] == [key[-1] for key in _expected(records, spec, query)]
    assert "~n" in first.hits[-1].key  # 90 words: the statistics fit, the ceilings not
    assert "~c" not in first.hits[-1].key


def test_a_position_reads_its_marks_and_refuses_others() -> None:
    position = engine._position((-1.5, "age|d01"), [255, 3], [12, 4])
    assert position == "-1.5~n12.4~cff03|age|d01"
    assert engine.parse_position("relevance", position) == engine.CursorPosition((-1.5, "age|d01"), (255, 3), (12, 4))
    assert engine.parse_position("relevance", "-1.5~255.3|age|d01").ceilings == (255, 3)  # decimal ceilings
    for bad in ("-1.5~x1|a|d", "-1.5~n1.-2|a|d", "-1.5~cff0|a|d", "-1.5~256|a|d", "abc|a|d", "-1.5"):
        with pytest.raises(engine.InvalidPosition):
            engine.parse_position("relevance", bad)


def test_two_words_corrected_to_one_term_find_its_documents() -> None:
    records, spec, store = _indexed([{"scope": "jobs", "title": "mentor", "body": "", "role": "a", "price": "0", "t": 1,
                                      "lat": 47.0, "lng": 8.0}])
    query = Query(("jobs",), ("mentos", "mentro"), order="relevance")
    assert [h.id for h in engine.search(spec, store, query, 5).hits] == [key[-1] for key in _expected(records, spec, query)] == ["d00"]



def test_a_rare_completion_scores_with_the_idf_of_the_words_most_frequent_term() -> None:
    """``ment`` completes to ``mentor`` (4 documents) and ``menthol`` (1): both score with the idf of
    4 documents (Lucene's blended statistics), so equal impacts tie and the newest comes first; with
    its own idf the rare ``menthol`` would outrank every ``mentor``."""
    rows = [("menthol", 1), ("mentor", 2), ("mentor", 3), ("mentor", 4), ("mentor", 5), ("garden", 6)]
    records, spec, store = _indexed([{"scope": "jobs", "title": title, "body": "", "role": "a", "price": "0", "t": t,
                                      "lat": 47.0, "lng": 8.0} for title, t in rows])
    query = Query(("jobs",), ("ment",), order="relevance")
    hits = engine.search(spec, store, query, 5).hits
    assert [h.id for h in hits] == ["d04", "d03", "d02", "d01", "d00"] == [key[-1] for key in _expected(records, spec, query)]
    rare = spec.document(records["d00"])
    assert rare is not None
    impact = index.impacts(index.term_frequencies(spec, rare))["menthol"]
    assert hits[-1].score == pytest.approx(engine.WEIGHTS[analysis.Kind.PREFIX] * index.idf(4, 6) * impact / index.LEVELS)


def test_a_completion_scores_as_the_word_and_an_unfinished_ending_less() -> None:
    """``teaching`` (stem ``teach``) completes to ``teacher``, which scores as the stem itself: the
    two equal titles tie and the newest comes first. ``teachi`` may be ``teach`` with ``ing``
    still being typed: that match scores 0.6 of a completion's (``teachin``, a term of its own)."""
    records, spec, store = _indexed([{"scope": "jobs", "title": title, "body": "", "role": "a", "price": "0", "t": t,
                                      "lat": 47.0, "lng": 8.0} for title, t in [("teaching", 1), ("teacher", 2)]])
    word = analysis.query_words(["teaching"], "english")[0]
    assert (analysis.kind(word, "teach"), analysis.kind(word, "teacher")) == (analysis.Kind.EXACT, analysis.Kind.PREFIX)
    query = Query(("jobs",), ("teaching",), order="relevance")
    hits = engine.search(spec, store, query, 5).hits
    assert [h.id for h in hits] == ["d01", "d00"] == [key[-1] for key in _expected(records, spec, query)]
    assert hits[0].score == hits[1].score
    typing = analysis.query_words(["teachi"], "english")[0]
    assert analysis.kind(typing, "teach") == analysis.Kind.UNFINISHED
    assert analysis.kind(analysis.query_words(["leader"], "english")[0], "lead") is None  # "er" is not unfinished
    records, spec, store = _indexed([{"scope": "jobs", "title": title, "body": "", "role": "a", "price": "0", "t": t,
                                      "lat": 47.0, "lng": 8.0} for title, t in [("teachin", 1), ("teaching", 2)]])
    hits = engine.search(spec, store, Query(("jobs",), ("teachi",), order="relevance"), 5).hits
    assert [h.id for h in hits] == ["d00", "d01"]  # the older completion first
    assert hits[1].score == pytest.approx(hits[0].score * engine.WEIGHTS[analysis.Kind.UNFINISHED])


def test_a_completion_of_the_stem_is_a_form_of_it_and_not_another_word() -> None:
    """The last word completes to a term that starts with its stem only when the rest is an ending
    the stemmer makes: ``electrical`` (stem ``electr``) finds ``electrician``, while ``tens`` (stem
    ``ten``) does not find ``tenni`` ("tennis"). So ``nures`` (stem ``nure``) does not complete to
    a made-up ``nurezide``, which would rank above ``nurs`` ("nurse"), one edit away."""
    def kind(word: str, term: str) -> analysis.Kind | None:
        return analysis.kind(analysis.query_words([word], "english")[0], term)

    assert kind("electrical", "electrician") == kind("teaching", "teacher") == analysis.Kind.PREFIX
    assert kind("tens", "tenni") is kind("nures", "nurezide") is None
    assert kind("tens", "tensor") == analysis.Kind.PREFIX  # the word as typed starts it
    records, spec, store = _indexed([{"scope": "jobs", "title": title, "body": "", "role": "a", "price": "0", "t": t,
                                      "lat": 47.0, "lng": 8.0} for title, t in [("nurse", 1), ("nurezide", 2)]])
    query = Query(("jobs",), ("nures",), order="relevance")
    assert [h.id for h in engine.search(spec, store, query, 5).hits] == ["d00"] == [
        key[-1] for key in _expected(records, spec, query)]


def test_a_long_last_word_completes_its_corrections() -> None:
    """``photogrpaer`` (stem ``photogrpa``) is 2 edits from ``photograph``, which ``photographi``
    ("photography") continues with an ending: as the last word it finds that term as two typos,
    ranked beside the correction's own term by age alone; not as an earlier word, and a word
    under 9 letters does not complete its corrections (``pyhton`` finds ``python``, not
    ``pythonic``)."""
    def kind(words: list[str], term: str) -> analysis.Kind | None:
        return analysis.kind(analysis.query_words(words, "english")[0], term)

    assert kind(["photogrpaer"], "photographi") == kind(["photogrpaer"], "photograph") == analysis.Kind.TYPO2
    assert kind(["photogrpaer", "mentor"], "photographi") is None
    assert kind(["pyhton"], "python") == analysis.Kind.TYPO
    assert kind(["pyhton"], "pythonic") is None
    _, spec, store = _indexed([{"scope": "jobs", "title": title, "body": "", "role": "a", "price": "0", "t": t,
                                "lat": 47.0, "lng": 8.0} for title, t in [("photography", 1), ("photographs", 2)]])
    query = Query(("jobs",), ("photogrpaer",), order="relevance")
    assert [h.id for h in engine.search(spec, store, query, 5).hits] == ["d01", "d00"]


def test_a_correction_found_under_a_typo_key_matches_in_every_order() -> None:
    """``pyhton`` finds ``python`` only under a typo key (no count read with it): newest and nearest
    first need no idf, so the document matches without waiting for the count."""
    _, spec, store = _indexed([{"scope": "jobs", "title": "mentor", "body": "python", "role": "a", "price": "0",
                                "t": 1, "lat": 47.0, "lng": 8.0}])
    for order in ("relevance", "newest", "nearest"):
        query = Query(("jobs",), ("pyhton",), near=Near(47.0, 8.0) if order == "nearest" else None, order=order)
        assert [h.id for h in engine.search(spec, store, query, 1).hits] == ["d00"], order

@settings(max_examples=60, deadline=None)
@given(records_strategy, st.lists(st.tuples(st.integers(0, 29), st.integers(1, 4), st.booleans()), max_size=40),
       st.randoms(use_true_random=False), st.integers(1, 10))
def test_replayed_and_out_of_order_batches_leave_the_index_exact(
    raw: list[dict[str, Any]], edits: list[tuple[int, int, bool]], rnd: Any, batch: int,
) -> None:
    records = {f"d{i:02d}": {**r, "id": f"d{i:02d}", "v": 1} for i, r in enumerate(raw)}
    spec = _spec(records)
    changes = [Change(r["id"], 1, spec.document(r)) for r in records.values()]
    final: dict[str, Change] = {c.id: c for c in changes}
    for number, step, removed in edits:
        doc_id = f"d{number % len(records):02d}"
        version = final[doc_id].version + step
        record = {**records[doc_id], "v": version, "title": WORDS[(number + version) % len(WORDS)], "price": str(version)}
        change = Change(doc_id, version, None if removed else spec.document(record))
        changes.append(change)
        if version >= final[doc_id].version:
            final[doc_id] = change
    stream = changes + rnd.sample(changes, k=len(changes) // 2)  # replays
    rnd.shuffle(stream)
    store = MemoryStore()
    for start in range(0, len(stream), batch):
        index.apply(spec, store, stream[start : start + batch])
    fresh = MemoryStore()
    index.apply(spec, fresh, [c for c in final.values() if c.doc is not None])

    def lists(s: MemoryStore) -> dict[str, dict[str, Any]]:
        return {pk: items for pk, items in s.partitions.items() if items and "|s|" not in pk and pk.split("|")[2] not in ("c", "v")}

    def vocabulary(s: MemoryStore) -> set[tuple[str, str]]:
        return {(pk, sk) for pk, items in s.partitions.items() if pk.split("|")[2] == "v" for sk, item in items.items() if item["n"] > 0}

    assert lists(store) == lists(fresh)
    assert vocabulary(store) == vocabulary(fresh)
    assert {k for pk, items in store.partitions.items() if pk.split("|")[2] == "v" for k in items} == {
        k for pk, items in fresh.partitions.items() if pk.split("|")[2] == "v" for k in items
    }


@given(records_strategy, queries)
def test_matches_accepts_exactly_the_documents_search_returns(raw: list[dict[str, Any]], query: Query) -> None:
    records, spec, store = _indexed(raw)
    query = _normalized(query)
    returned = {hit.id: hit.distance_km for hit in engine.search(spec, store, query, len(records)).hits}
    for record in records.values():
        doc = spec.document(record)
        assert doc is not None
        distance = engine.matches(spec, query, doc)
        assert (distance is not None) == (doc.id in returned)
        if query.order == "nearest" and distance is not None:
            assert distance == returned[doc.id]
