"""Batched posting maintenance stays exact (issue 20, part 3; hypothesis, in-process moto).

Random items go through random versions (random posting keys over a few shared lists, some
versions removals); the stream's records are fed to :func:`batch_writer.apply_batch` replayed
and reordered, in batches of random sizes, with transactions shrunk to a few actions (so a batch
commits its states in several transactions and applies its size ledgers in several steps) and a
crash injected at a random DynamoDB write (the batch is then retried, as Lambda does, possibly
with the records that followed it). After every crash the sizes plus the ledgers not yet applied
must equal the keys the states count; at the end entries, sizes and states must equal a
brute-force evaluation of each item's newest version, and every state must be clean.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib import storage
from chalicelib.search import batch_writer
from chalicelib.search.batch_writer import Change
from chalicelib.search.postings import PostingKey, register_projection
from tests.integration.aws_session import Resources, reset
from tests.integration.helpers import search_index_items

_LISTS = ["t#a", "t#b", "t#c", "t#d", "t#e", "t#f"]
_ITEMS = ["i0", "i1", "i2", "i3"]

_VERSIONS = st.lists(st.one_of(st.none(), st.sets(st.sampled_from(_LISTS), max_size=5)), min_size=1, max_size=4)
_PLAN = st.tuples(
    st.fixed_dictionaries(dict.fromkeys(_ITEMS, _VERSIONS)),
    st.integers(0, 2**32 - 1),  # shuffling, replays and batch sizes
    st.integers(0, 40),  # the DynamoDB write that fails (beyond the writes made: none)
    st.sampled_from([3, 4, 7, 100]),  # actions per transaction (ledger steps of 2, 3, 6, 99 lists)
)


#: The real calls (the patches of one example must not wrap the previous example's).
_TRANSACT, _WRITE = storage.transact, batch_writer.write_requests


class _Crash(Exception):
    """The injected failure (a Lambda timeout between two calls)."""


def _changes(versions: dict[str, list[set[str] | None]]) -> list[Change]:
    """One record per version (``None``: the item was deleted: no keys)."""
    return [
        Change("t", item, number, frozenset(PostingKey(name, f"s#{item}") for name in keys or ()))
        for item, history in versions.items() for number, keys in enumerate(history, start=1)
    ]


def _lists_projection(keys: Any) -> dict[str, str]:
    """A covering projection that changes with every key set (so kept entries must be re-put)."""
    return {"lists": ",".join(sorted(k.list_id for k in keys))}


register_projection("t", _lists_projection)


def _projections() -> dict[tuple[str, str], Any]:
    return {(pk, sk): i.get("f") for (pk, sk), i in search_index_items().items() if pk.startswith("t#")}


def _stored() -> tuple[set[tuple[str, str, str]], dict[str, int], dict[str, dict[str, Any]]]:
    items = search_index_items()
    entries = {(pk, sk, str(i["id"])) for (pk, sk), i in items.items() if pk.startswith("t#")}
    sizes = {pk.removeprefix("size|"): int(i["n"]) for (pk, _), i in items.items() if pk.startswith("size|") and int(i["n"])}
    states = {pk.removeprefix("state|t|"): i for (pk, _), i in items.items() if pk.startswith("state|t|")}
    return entries, sizes, states


def _assert_sizes_count_the_states() -> None:
    """The list sizes plus the ledgers not yet applied equal the keys the states count."""
    items = search_index_items()
    _, sizes, states = _stored()
    pending: Counter[str] = Counter()
    for (pk, _), item in items.items():
        if pk.startswith("ledger|"):
            pending.update(batch_writer.ledger_pending(item))
    counted = Counter(PostingKey.decode(k).list_id for state in states.values() for k in state.get("keys", ()))
    summed = Counter(sizes)
    summed.update(pending)
    assert {k: n for k, n in summed.items() if n} == dict(counted)


@given(plan=_PLAN)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_replayed_reordered_and_crashed_batches_leave_the_index_exact(
    aws: dict[str, str], aws_resources: Resources, monkeypatch: pytest.MonkeyPatch, plan: Any
) -> None:
    versions, seed, crash_at, actions = plan
    reset(aws_resources)
    monkeypatch.setattr(batch_writer, "TRANSACTION_ITEMS", actions)
    rng = random.Random(seed)
    records = _changes(versions)
    stream = records + rng.choices(records, k=rng.randrange(len(records) + 1))  # every record, some twice
    rng.shuffle(stream)

    writes = {"n": 0}

    def counted(call: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            writes["n"] += 1
            if writes["n"] == crash_at:
                raise _Crash
            return call(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(storage, "transact", counted(_TRANSACT))
    monkeypatch.setattr(batch_writer, "write_requests", counted(_WRITE))
    while stream:
        size = rng.randint(1, 6)
        batch, stream = stream[:size], stream[size:]
        try:
            batch_writer.apply_batch(batch)
        except _Crash:
            _assert_sizes_count_the_states()  # every commit recorded its size changes, applied or not
            more = rng.randint(0, 3)  # the stream retries from the batch's start, perhaps with newer records
            batch, stream = batch + stream[:more], stream[more:]
            batch_writer.apply_batch(batch)

    newest = {}
    for change in records:
        if change.version > newest.get(change.item_id, Change("t", change.item_id, 0, frozenset())).version:
            newest[change.item_id] = change
    expected_keys = {(k.list_id, k.sort, c.item_id) for c in newest.values() for k in c.keys}
    entries, sizes, states = _stored()
    assert entries == expected_keys
    # Every entry carries the projection of the keys its item is filed under now (issue 20: covering entries).
    assert _projections() == {(k.list_id, k.sort): _lists_projection(c.keys) for c in newest.values() for k in c.keys}
    assert sizes == dict(Counter(list_id for list_id, _, _ in expected_keys))
    assert not [pk for pk, _ in search_index_items() if pk.startswith("ledger|")]  # every ledger applied and deleted
    for item, change in newest.items():
        state = states[item]
        assert int(state["version"]) == change.version
        assert set(state.get("keys", ())) == {k.encoded() for k in change.keys}
        assert "dirty" not in state  # every batch finished: clean
        assert "gone" not in state
        assert "ledger" not in state


def test_a_batch_of_many_items_costs_few_calls(aws: dict[str, str]) -> None:
    """100 items with 10 keys each over 20 shared lists: 1 read, 1 commit per 99 states and 1 size step per
    99 lists, 40 batch writes, 1 cleaning per 100 states."""
    changes = [
        Change("t", f"x{n:03d}", 1, frozenset(PostingKey(f"t#l{(n + j) % 20}", f"s#x{n:03d}") for j in range(10)))
        for n in range(100)
    ]
    report = batch_writer.apply_batch(changes)
    assert report.applied == 100
    assert report.calls["BatchGetItem"] == 1
    assert report.calls["BatchWriteItem"] == 40  # 1,000 entries, 25 per call
    # 2 commits (99 + 1 states, each with its ledger), 2 ledgers of 20 lists, 1 cleaning.
    assert report.calls["TransactWriteItems"] == 5
    replay = batch_writer.apply_batch(changes)
    assert (replay.applied, replay.skipped, dict(replay.calls)) == (0, 100, {"BatchGetItem": 1})


def test_a_crash_before_the_entries_is_completed_by_a_newer_version(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Committed (sizes, state) but crashed before BatchWriteItem: the retry carries a newer version
    sharing keys with the crashed one; those entries must still be written."""
    first = Change("t", "i0", 1, frozenset({PostingKey("t#a", "s#i0"), PostingKey("t#b", "s#i0")}))
    second = Change("t", "i0", 2, frozenset({PostingKey("t#a", "s#i0"), PostingKey("t#c", "s#i0")}))

    def crash(*_: Any, **__: Any) -> None:
        raise _Crash

    monkeypatch.setattr(batch_writer, "write_requests", crash)
    with pytest.raises(_Crash):
        batch_writer.apply_batch([first])
    _assert_sizes_count_the_states()
    assert _stored()[0] == set()  # counted, not yet written
    monkeypatch.setattr(batch_writer, "write_requests", _WRITE)
    assert batch_writer.apply_batch([first, second]).applied == 1
    entries, sizes, states = _stored()
    assert entries == {("t#a", "s#i0", "i0"), ("t#c", "s#i0", "i0")}
    assert sizes == {"t#a": 1, "t#c": 1}
    assert "dirty" not in states["i0"]
