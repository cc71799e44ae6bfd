"""The collector's pool: its candidates stay ordered by best key as they arrive (a heap, re-keyed
lazily at its top), so a step neither recomputes every candidate's key nor re-sorts the pool, and
the candidate it offers is always the one a full re-sort would put first."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.search import engine
from chalicelib.search.engine import Near, Query
from tests.unit.test_search_engine_property import _check_pages, queries, records_strategy
from tests.unit.test_search_engine_steps import SCOPES, _store

_TOP = engine._Collector._top


def _checked_top(self: engine._Collector) -> tuple[tuple[Any, ...], str] | None:
    """:meth:`_Collector._top`, checked against keying and sorting the whole pool afresh."""
    ranked = sorted((best[0], doc_id) for doc_id in self.pool if (best := self.best_key(doc_id)) is not None
                    and not (best[1] and self.after is not None and best[0] <= self.after))
    top = _TOP(self)
    assert top == (ranked[0] if ranked else None)
    return top


@given(records_strategy, queries, st.integers(1, 7), st.booleans())
def test_the_top_of_the_pool_is_the_first_of_a_full_re_sort(raw: list[dict[str, Any]], query: Query, size: int,
                                                            defer: bool) -> None:
    """In every order, on every page, with the typo reads sent in step 1 or deferred to the walk."""
    with mock.patch.object(engine._Collector, "_top", _checked_top), \
            mock.patch.object(engine, "DEFER_ABOVE", 0 if defer else engine.DEFER_ABOVE):
        _check_pages(raw, query, size)


def _keyings(query: Query, count: int) -> tuple[int, int, int]:
    """For one page of 10 over ``count`` documents: the best keys computed, the candidates pooled,
    and the keys a full re-sort of the pool in each ``select`` and ``done_before`` would have computed."""
    store, spec = _store(count)
    calls = pooled = resorted = 0
    best_key, add, select, done_before = (engine._Collector.best_key, engine._Collector.add, engine._Collector.select,
                                          engine._Collector.done_before)

    def counted(self: engine._Collector, doc_id: str) -> tuple[tuple[Any, ...], bool] | None:
        nonlocal calls
        calls += 1
        return best_key(self, doc_id)

    def counted_add(self: engine._Collector, fresh: dict[str, float]) -> None:
        nonlocal pooled
        pooled += len(fresh)
        add(self, fresh)

    def counted_select(self: engine._Collector) -> dict[str, float]:
        nonlocal resorted
        resorted += len(self.pool)
        return select(self)

    def counted_done(self: engine._Collector, bound: tuple[Any, ...] | None) -> bool:
        nonlocal resorted
        resorted += len(self.pool) * (not self.waiting)
        return done_before(self, bound)

    with mock.patch.multiple(engine._Collector, best_key=counted, add=counted_add, select=counted_select,
                             done_before=counted_done):
        result = engine.search(spec, store, query, 10)
    assert len(result.hits) == 10
    return calls, pooled, resorted


def test_a_step_keys_only_new_candidates_and_the_top_of_the_pool() -> None:
    """Each candidate is keyed once as it arrives and only the top of the pool is re-keyed, where a
    full re-sort keyed every pooled candidate in each step's ``select`` and ``done_before``."""
    # Nearest first: 400 candidates in the cells read, keyed once each (a distance never changes).
    calls, pooled, resorted = _keyings(Query(SCOPES, near=Near(47.5, 8.5), order="nearest"), 400)
    assert calls == pooled == 400
    assert resorted > 1.5 * pooled
    # Relevance: each block lowers the bounds, so the top is re-keyed (lazily: until it stays on top).
    for words in (("garden", "mentoring"), ("mentoring",), ("ment",)):
        calls, pooled, resorted = _keyings(Query(SCOPES, words, order="relevance"), 400)
        assert calls <= pooled + 40, words


def test_a_step_loads_enough_candidates_to_fill_the_page_with_90_percent_confidence() -> None:
    """With each candidate matching with probability ``rate``, a step loads ``n`` of them where
    ``n x rate - 1.28 x sqrt(n x rate x (1 - rate))`` reaches the page (the binomial's 10 % quantile,
    normal approximation): 27 for 10 at one in two, where the mean alone (20) falls short half the time."""
    store, spec = _store()
    ctx = engine._Context(spec, store, Query(SCOPES, order="newest"), {})
    collector = engine._Collector(ctx, 10, None, rate=0.5)
    collector.entries.update({f"d{n:03d}": {"age": f"{n:03d}"} for n in range(40)})
    collector.add({f"d{n:03d}": 0.0 for n in range(40)})
    assert len(collector.select()) == 27
    collector.rate = 1.0  # every candidate matches: exactly the page
    assert len(collector.select()) == 10
