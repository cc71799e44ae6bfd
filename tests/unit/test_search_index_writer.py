"""The index writer's steps: a batch's new terms are counted in the vocabulary (``ADD``) and filed
under their typo keys in the same step as its entries and counters (so a document is findable by its words
once its stored form follows), and a term another batch removed between the read and the
additions is still filed."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.search import analysis, index
from chalicelib.search.index import Change, Document, IndexSpec
from chalicelib.search.store import Item, Key, MemoryStore, Range, Slice

SPEC = IndexSpec(namespace="test", boosts={"title": 1.0}, lengths={"title": 4.0}, language=lambda scope: "english",
                 document=lambda record: None, load=lambda entries: {})


def _doc(doc_id: str, title: str, version: int = 1) -> Document:
    return Document(id=doc_id, version=version, scope="jobs", newest=version, text={"title": title})


class Steps(MemoryStore):
    """A memory store that records each write step's puts, and may hide vocabulary items from reads."""

    def __init__(self, stale: set[Key] | None = None) -> None:
        super().__init__()
        self.writes: list[list[Item]] = []
        self.stale = stale or set()

    def read(self, ranges: Sequence[Range], keys: Sequence[Key]) -> tuple[list[Slice], dict[Key, Item]]:
        slices, found = super().read(ranges, keys)
        return slices, {**found, **{k: {"pk": k[0], "sk": k[1], "n": 1} for k in self.stale if k in keys}}

    def write(self, puts: Sequence[Item], deletes: Sequence[Key]) -> None:
        self.writes.append(list(puts))
        super().write(puts, deletes)

    def write_and_add(self, puts: Sequence[Item], deletes: Sequence[Key], changes: Sequence[tuple[Key, int]]) -> list[int]:
        self.writes.append(list(puts))
        MemoryStore.write(self, puts, deletes)
        return self.add(changes)


def _typo_items(store: MemoryStore, term: str) -> set[tuple[str, str]]:
    return {(pk, sk) for pk, part in store.partitions.items() if "|d|" in pk for sk in part if sk.endswith(f"|{term}")}


def _expected(term: str) -> set[tuple[str, str]]:
    key = analysis.typo_key(term)
    return {(SPEC.list_key("jobs", f"d|{analysis.typo_partition(key)}"), f"{key}|{term}")}


def test_new_terms_are_filed_in_the_step_of_the_entries_and_nothing_is_written_after_it() -> None:
    store = Steps()
    assert index.apply(SPEC, store, [Change("d1", 1, _doc("d1", "gardener python"))]) == 1
    (step, *later) = store.writes
    filed = {(i["pk"], i["sk"]) for i in step if "|d|" in i["pk"]}
    assert filed == _expected("garden") | _expected("python")
    assert all(not puts for puts in later)
    assert index.apply(SPEC, store, [Change("d2", 1, _doc("d2", "python"))]) == 1  # a known term: no typo key again
    assert not any("|d|" in i["pk"] for puts in store.writes[len(later) + 1:] for i in puts)


def test_a_term_the_read_saw_but_the_additions_show_new_is_filed_after_them() -> None:
    store = Steps(stale={SPEC.vocabulary_key("jobs", "python")})  # read as held, gone when the batch adds to it
    index.apply(SPEC, store, [Change("d1", 1, _doc("d1", "python"))])
    assert _typo_items(store, "python") == _expected("python")
    assert store.partitions[SPEC.vocabulary_key("jobs", "python")[0]]["python"]["n"] == 1


def test_a_replayed_batch_writes_nothing() -> None:
    store = Steps()
    batch = [Change("d1", 1, _doc("d1", "gardener python"))]
    index.apply(SPEC, store, batch)
    writes = len(store.writes)
    assert index.apply(SPEC, store, batch) == 0
    assert all(not puts for puts in store.writes[writes:])


class Adds(Steps):
    """Also records the counters each step adds to."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[Key] = []

    def add(self, changes: Sequence[tuple[Key, int]]) -> list[int]:
        self.added += [key for key, _ in changes]
        return super().add(changes)


def test_every_vocabulary_count_moves_by_add_a_new_term_too() -> None:
    # A put decided by the batch's read would lose the count of another shard's batch filing the same term.
    store = Adds()
    index.apply(SPEC, store, [Change("d1", 1, _doc("d1", "python")), Change("d2", 1, _doc("d2", "python gardener"))])
    python, garden = SPEC.vocabulary_key("jobs", "python"), SPEC.vocabulary_key("jobs", "garden")
    assert {python, garden} <= set(store.added)
    assert not {python, garden} & {(i["pk"], i["sk"]) for puts in store.writes for i in puts}
    assert store.partitions[python[0]]["python"]["n"] == 2
    index.apply(SPEC, store, [Change("d3", 1, _doc("d3", "python"))])
    assert store.partitions[python[0]]["python"]["n"] == 3
    index.apply(SPEC, store, [Change("d3", 2, None), Change("d2", 2, None)])
    assert store.partitions[python[0]]["python"]["n"] == 1
    assert "garden" not in store.partitions.get(garden[0], {})  # its list emptied: it left the vocabulary
    assert not _typo_items(store, "garden")
