"""Exact sizes of list indexes: one counter item per list owner in the Counters table.

A counter item ``{pk: "count#<name>", sk: "0"}`` holds one number attribute per list of its
owner, for example ``n`` (all of them), ``t#LISTING`` (one subject type), ``s#PENDING`` (one
status) and ``ts#LISTING#PENDING`` (both); the owning domain names the attributes. Every write
that puts an item into a list or moves it between lists carries :func:`add_op` in its own
TransactWriteItems, whose other items hold the condition on the state it moves from, so a
count is exact at every commit and a lost race cancels its count with it. Reading a total is
one GetItem of a small item, whatever the length of the list.

The counters have a table of their own (``COUNTERS_TABLE``), apart from the posting lists: a
transaction names only small items, whatever the size of the search index.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage

#: A change of counters: ``(counter name, {attribute: delta})``.
Delta = tuple[str, Mapping[str, int]]


def table() -> str:
    """The table holding the counter items (``COUNTERS_TABLE``), for a BatchGetItem with other reads."""
    return settings().COUNTERS_TABLE


def key(name: str) -> dict[str, str]:
    """The key of counter item ``name`` (e.g. ``requests#sent#usr_1``)."""
    return {"pk": f"count#{name}", "sk": "0"}


def merge(deltas: Iterable[Delta]) -> dict[str, dict[str, int]]:
    """Sum ``deltas`` per counter item and attribute, leaving out what sums to zero."""
    summed: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for name, changes in deltas:
        for attribute, delta in changes.items():
            summed[name][attribute] += delta
    merged = {name: {a: d for a, d in changes.items() if d} for name, changes in summed.items()}
    return {name: changes for name, changes in merged.items() if changes}


def add_ops(deltas: Iterable[Delta]) -> list[dict[str, Any]]:
    """Transaction ``Update`` items applying ``deltas``: one per counter item that changes.

    One item per counter item, because a TransactWriteItems may touch an item only once.
    """
    return [add_op(name, changes) for name, changes in merge(deltas).items()]


def add_op(name: str, changes: Mapping[str, int]) -> dict[str, Any]:
    """Transaction ``Update``: ``ADD`` each ``{attribute: delta}`` of ``changes`` to counter item ``name``.

    Raises
    ------
    ValueError
        ``changes`` is empty (DynamoDB rejects an empty update).
    """
    if not changes:
        raise ValueError("a counter update needs at least one attribute")
    names = {f"#a{i}": attribute for i, attribute in enumerate(changes)}
    vals = {f"d{i}": delta for i, delta in enumerate(changes.values())}
    return storage.update_op(
        table(),
        key(name),
        "ADD " + ", ".join(f"#a{i} :d{i}" for i in range(len(changes))),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=storage.values(**vals),
    )


def read(name: str, attribute: str) -> int:
    """The count ``attribute`` of counter item ``name`` (0 when never counted); one GetItem.

    Routes that read other items anyway fetch :func:`key` in their BatchGetItem instead and
    take the count with :func:`count_in`.
    """
    return count_in(storage.get(table(), key(name)), attribute)


def count_in(item: Mapping[str, Any] | None, attribute: str) -> int:
    """The count ``attribute`` of a counter item as read (0 when missing or never counted)."""
    return int((item or {}).get(attribute, 0))


def put_request(name: str, counts: Mapping[str, int]) -> dict[str, Any]:
    """A plain item overwriting counter item ``name`` with absolute ``counts`` (backfill)."""
    return {**key(name), **counts}
