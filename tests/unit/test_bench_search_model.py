"""bench/search_model.py: what its counting store counts, and a run over a few realistic listings."""

from __future__ import annotations

import re
from types import ModuleType

import pytest

from chalicelib.search.store import READ_PARALLEL, MemoryStore, Range
from tests.script_modules import load_script


@pytest.fixture(scope="module")
def model() -> ModuleType:
    return load_script("bench/search_model.py", "search_model_bench")


def _store(items: int) -> MemoryStore:
    store = MemoryStore()
    store.write([{"pk": "p", "sk": f"{n:03d}"} for n in range(items)], [])
    return store


def test_a_step_counts_its_calls_in_waves_of_the_read_threads_and_the_items_returned(model: ModuleType) -> None:
    counting = model.CountingStore(_store(5))
    counting.read([Range("p", limit=3)], [("p", f"{n:03d}") for n in range(150)] + [("p", "000")])
    assert (counting.steps, counting.calls, counting.items) == (1, 1 + 2, 3 + 5)  # 150 keys: two BatchGetItem
    counting.read([Range("p")] * (READ_PARALLEL + 1), [])
    assert (counting.steps, counting.calls) == (1 + 2, 3 + READ_PARALLEL + 1)
    assert counting.items == 8 + 5 * (READ_PARALLEL + 1)


def test_a_write_is_billed_a_unit_per_kb_of_the_larger_image_at_least_one(model: ModuleType) -> None:
    counting = model.CountingStore(_store(2))
    counting.write([{"pk": "p", "sk": "000", "text": "x" * 1500}], [("p", "001")])  # 2 units; a delete 1
    counting.write([{"pk": "p", "sk": "000"}], [("p", "404")])  # the old image's 2 units; a missing item 1
    counting.add([(("c", "n"), 1)])
    assert counting.put_newer([{"pk": "p", "sk": "new", "v": 1}]) == [True]
    assert counting.units == 2 + 1 + 2 + 1 + 1 + 1


def test_a_run_measures_every_listing_shape_at_each_size(model: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert model.main(["--sizes", "30,60"]) == 0
    out = capsys.readouterr().out.splitlines()
    table = [line for line in out if line.startswith("| ") and "listings |" not in line]
    names = [shape.name for shape in model.search.shapes("x") if shape.path == "/v1/listings/search"]
    assert [row.split(" | ")[0].lstrip("| ") for row in table] == names
    category_page = next(row for row in table if row.startswith("| category page |"))
    steps, calls, items = (int(x) for x in category_page.split(" | ")[1].split(" / "))
    assert min(steps, calls, items) >= 1
    writes = next(line for line in out if line.startswith("write units per listing"))
    billed = re.findall(r"(\d+) / (\d+) at ([\d,]*\d)", writes)
    assert [size for _, _, size in billed] == ["30", "60"]
    assert all(int(units) > 0 and int(budget) > 20 for units, budget, _ in billed)


def test_a_short_page_at_the_smaller_size_is_compared_per_hit(model: ModuleType) -> None:
    def figures(hits: int, items: int) -> dict[str, float]:
        return {"hits": hits, "round_trips": 2, "calls": 3, "items": items}

    kinds = {"rare": "q"}
    # A full page at both sizes: the larger may read 1.25 x + 2 items.
    assert model.checks({10: {"rare": figures(20, 80)}, 20: {"rare": figures(20, 102)}}, kinds, {}) == []
    assert model.checks({10: {"rare": figures(20, 80)}, 20: {"rare": figures(20, 103)}}, kinds, {})
    # 8 hits at the smaller size (its whole answer), 20 at the larger: 10 items a hit either way.
    assert model.checks({10: {"rare": figures(8, 80)}, 20: {"rare": figures(20, 200)}}, kinds, {}) == []
    missed = model.checks({10: {"rare": figures(8, 80)}, 20: {"rare": figures(20, 253)}}, kinds, {})
    assert [budget for budget, _ in missed] == [("rare", "flat items")]
    # Fewer hits at the larger size (a cursor's last page) are no excuse: the whole page's cost.
    assert model.checks({10: {"rare": figures(20, 80)}, 20: {"rare": figures(10, 103)}}, kinds, {})
