"""Posting lists maintained in batches: a stream batch becomes a few DynamoDB calls (issue 20, part 3).

:func:`chalicelib.postings.apply` files one item per call: a strongly consistent GetItem of its
state and one TransactWriteItems per 49 changed keys (entries, sizes and state together), about
three calls per listing, so the Listings-stream consumer kept up with 4-5 listings/s. This module
files a whole batch of items at once, in the same layout (entries, ``size|`` items, ``state|``
items of :mod:`chalicelib.postings`), and stays exact under replays, reordering and crashes:

1. **Coalesce.** Of several changes of one item in a batch only the newest version is applied
   (the keys an item is filed under depend on its newest version only).
2. **Read** every state in BatchGetItem calls (``ConsistentRead``, 100 keys per call) and drop
   the changes whose version is not newer than the state's (replayed or out-of-order records).
3. **Commit** state and list sizes together: TransactWriteItems of at most
   :data:`TRANSACTION_ITEMS` actions, each holding the state updates of several items
   (conditional on the ``step`` read, or on the state's absence) and *one* ``ADD`` per list
   whose size they change, summed over those items. So a size changes only in the transaction
   that moves the states accounting for it: sizes equal the number of state keys naming the
   list at every commit, whatever fails, replays or races. An item whose change names more
   lists than one transaction holds continues in the next one (its state's ``keys`` is set to
   the keys counted so far; ``version`` is set by its last part only).
4. **Entries** are written after the commit with BatchWriteItem (25 requests per call,
   ``UnprocessedItems`` retried with jittered exponential backoff). Until then the state says
   so: every commit sets ``dirty`` and records in ``gone`` the keys removed while entries may
   still exist. The next applier of a dirty state re-puts every key of the state and deletes
   ``gone`` (both idempotent), so a crash between commit and entries is completed by the
   retry, whatever version it carries.
5. **Clean**: one TransactWriteItems per 100 states removes ``dirty`` and ``gone``, conditional
   on the step committed. A state moved meanwhile by another applier (a backfill beside the
   stream) is not cleaned; its entries are re-put from the state as read afterwards
   (:func:`_repair`), so a late delete of this applier cannot leave a counted key without its
   entry. Such a race can leave an uncounted entry behind, which readers drop (every candidate
   is verified against its item).

So a batch of ``n`` items with ``k`` changed keys costs ``ceil(n / 100)`` reads,
``ceil((n + distinct lists) / 100)`` transactions or a few more, ``ceil(k / 25)`` batch writes
and ``ceil(n / 100)`` cleaning transactions, against ``n`` reads and ``k / 49`` transactions
one by one.

Domain-free: the caller computes the posting keys (:class:`chalicelib.postings.PostingKey`) of
its items. Sources: AWS docs, "TransactWriteItems" (100 actions, one action per item),
"BatchWriteItem" (25 requests; retry ``UnprocessedItems`` with exponential backoff),
"BatchGetItem" (100 keys, ``ConsistentRead``); AWS Architecture Blog, "Exponential Backoff And
Jitter" (full jitter).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chalicelib import errors, storage
from chalicelib.config import settings
from chalicelib.postings import PostingKey

#: Actions per TransactWriteItems (AWS limit).
TRANSACTION_ITEMS = 100
#: Requests per BatchWriteItem and keys per BatchGetItem (AWS limits).
WRITE_BATCH = 25
READ_BATCH = 100
#: Attempts of a BatchWriteItem / BatchGetItem round with unprocessed requests, and of the
#: whole commit when a transaction's condition failed (another applier moved a state).
ATTEMPTS = 8
#: First backoff, seconds (doubled per attempt, full jitter).
BASE_DELAY_SECONDS = 0.02

_STATE_SK = "state"
_SIZE_SK = "size"


def _table() -> str:
    return settings().SEARCH_INDEX_TABLE


@dataclass(frozen=True)
class Change:
    """One item to file under exactly ``keys`` as of its ``version``.

    Attributes
    ----------
    namespace:
        The kind of item (``"listings.v2"``, ``"profiles"``), as for :func:`chalicelib.postings.apply`.
    item_id:
        The item's id (stored in each entry as ``id``).
    version:
        The item's version the keys were computed from (a removal: the last version + 1).
    keys:
        The target posting keys (empty: remove the item from every list).
    """

    namespace: str
    item_id: str
    version: int
    keys: frozenset[PostingKey]


@dataclass
class BatchReport:
    """What :func:`apply_batch` did: items moved, items already at their version, calls made."""

    applied: int = 0
    skipped: int = 0
    repaired: int = 0
    calls: Counter[str] = field(default_factory=Counter)


@dataclass
class _State:
    version: int
    step: int | None  # None: no state item yet
    keys: set[str]
    gone: set[str]
    dirty: bool


@dataclass
class _Final:
    """An item whose commit is done: the entries to write and the step to clean at."""

    key: dict[str, str]
    puts: set[str]
    deletes: set[str]
    step: int
    item_id: str


def state_key(namespace: str, item_id: str) -> dict[str, str]:
    """The key of an item's state (``state|<namespace>|<item id>``, as :mod:`chalicelib.postings`)."""
    return {"pk": f"state|{namespace}|{item_id}", "sk": _STATE_SK}


def size_key(list_name: str) -> dict[str, str]:
    """The key of a list's size item (``size|<list id>``, as :mod:`chalicelib.postings`)."""
    return {"pk": f"size|{list_name}", "sk": _SIZE_SK}


def coalesce(changes: Iterable[Change]) -> list[Change]:
    """The newest change of each ``(namespace, item_id)``, in first-seen order."""
    newest: dict[tuple[str, str], Change] = {}
    for change in changes:
        seen = newest.get((change.namespace, change.item_id))
        if seen is None or change.version > seen.version:
            newest[(change.namespace, change.item_id)] = change
    return list(newest.values())


def _backoff(attempt: int) -> None:
    time.sleep(random.uniform(0, BASE_DELAY_SECONDS * 2**attempt))  # jitter, not security


def _read_states(keys: Sequence[Mapping[str, str]], report: BatchReport) -> dict[str, _State]:
    """States by ``pk``: strongly consistent BatchGetItem calls of :data:`READ_BATCH` keys."""
    found: dict[str, _State] = {}
    table = _table()
    unique = list({k["pk"]: k for k in keys}.values())
    for start in range(0, len(unique), READ_BATCH):
        request: dict[str, Any] = {table: {"Keys": [storage.to_item(k) for k in unique[start : start + READ_BATCH]],
                                           "ConsistentRead": True}}
        for attempt in range(ATTEMPTS):
            report.calls["BatchGetItem"] += 1
            response = storage.dynamodb().batch_get_item(RequestItems=request)
            for raw in response["Responses"].get(table, []):
                item = storage.from_item(raw) or {}
                found[str(item["pk"])] = _State(
                    int(item.get("version", 0)), int(item.get("step", 0)), set(item.get("keys") or ()),
                    set(item.get("gone") or ()), bool(item.get("dirty")),
                )
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
            _backoff(attempt)
        else:
            raise errors.DependencyUnavailableError(f"BatchGetItem left keys unprocessed after {ATTEMPTS} attempts")
    return found


def write_requests(requests: Sequence[Mapping[str, Any]], report: BatchReport | None = None) -> None:
    """BatchWriteItem ``requests`` (``{"PutRequest": ...}`` / ``{"DeleteRequest": ...}``, low-level
    format) on the SearchIndex table, :data:`WRITE_BATCH` per call.

    Raises
    ------
    chalicelib.errors.DependencyUnavailableError
        Requests still unprocessed (throttling) after :data:`ATTEMPTS` backed-off attempts.
    """
    table = _table()
    for start in range(0, len(requests), WRITE_BATCH):
        pending: dict[str, Any] = {table: list(requests[start : start + WRITE_BATCH])}
        for attempt in range(ATTEMPTS):
            if report is not None:
                report.calls["BatchWriteItem"] += 1
            pending = storage.dynamodb().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
            _backoff(attempt)  # unprocessed items mean throttling (AWS docs, BatchWriteItem)
        else:
            raise errors.DependencyUnavailableError(f"BatchWriteItem left requests unprocessed after {ATTEMPTS} attempts")


@dataclass
class _Part:
    """One item's share of one transaction."""

    key: dict[str, str]
    step: int | None
    keys_after: set[str]
    gone_after: set[str]
    version: int | None  # set on the item's last part only


def _state_op(part: _Part) -> dict[str, Any]:
    sets = ["#s = :next", "#d = :dirty"]
    removes: list[str] = []
    names = {"#s": "step", "#d": "dirty"}
    vals: dict[str, Any] = {"next": (part.step or 0) + 1, "dirty": True}
    if part.version is not None:
        sets.append("#v = :v")
        names["#v"] = "version"
        vals["v"] = part.version
    for attribute, placeholder, value in (("keys", "#k", part.keys_after), ("gone", "#g", part.gone_after)):
        names[placeholder] = attribute
        if value:
            sets.append(f"{placeholder} = :{attribute}")
            vals[attribute] = set(value)
        else:  # DynamoDB has no empty string set
            removes.append(placeholder)
    expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
    if part.step is None:
        condition = "attribute_not_exists(pk)"
    else:
        condition = "#s = :step"
        vals["step"] = part.step
    return storage.update_op(_table(), part.key, expression, condition=condition,
                             ExpressionAttributeNames=names, ExpressionAttributeValues=storage.values(**vals))


def _size_op(list_name: str, delta: int) -> dict[str, Any]:
    return storage.update_op(_table(), size_key(list_name), "ADD n :d", ExpressionAttributeValues=storage.values(d=delta))


class _Transactions:
    """Packs item parts and size deltas into transactions of at most :data:`TRANSACTION_ITEMS` actions."""

    def __init__(self, report: BatchReport) -> None:
        self.report = report
        self.parts: dict[str, _Part] = {}
        self.sizes: Counter[str] = Counter()
        self.listed: set[str] = set()
        self.done: list[str] = []  # pks whose last part is in this transaction

    def room(self, new_lists: int = 0, new_states: int = 0) -> bool:
        return len(self.parts) + len(self.listed) + new_lists + new_states <= TRANSACTION_ITEMS

    def flush(self) -> list[str]:
        """Commit the transaction; returns the pks it finished. Raises ``storage.TransactionConflict``."""
        finished = self.done
        if self.parts:
            ops = [_state_op(p) for p in self.parts.values()]
            ops += [_size_op(name, delta) for name, delta in sorted(self.sizes.items()) if delta]
            self.report.calls["TransactWriteItems"] += 1
            storage.transact(ops)
        self.parts, self.sizes, self.listed, self.done = {}, Counter(), set(), []
        return finished


def _commit(change: Change, state: _State, tx: _Transactions, on_flush: Callable[[list[str]], None]) -> int:
    """Add one item's change to ``tx`` (flushing full transactions); returns the step committed last."""
    key = state_key(change.namespace, change.item_id)
    pk = key["pk"]
    target = {k.encoded() for k in change.keys}
    deltas = [(k, -1) for k in sorted(state.keys - target)] + [(k, +1) for k in sorted(target - state.keys)]
    current = set(state.keys)
    step = state.step
    index = 0
    while True:
        if tx.parts and not tx.room(new_lists=1 if deltas else 0, new_states=1):
            on_flush(tx.flush())  # no room for this item's state and one list: start a new transaction
        while index < len(deltas):
            encoded, delta = deltas[index]
            list_name = PostingKey.decode(encoded).list_id
            if list_name not in tx.listed and not tx.room(new_lists=1, new_states=1):
                break
            tx.listed.add(list_name)
            tx.sizes[list_name] += delta
            if delta > 0:
                current.add(encoded)
            else:
                current.discard(encoded)
            index += 1
        last = index == len(deltas)
        gone = (state.gone | (state.keys - current)) - current
        tx.parts[pk] = _Part(key, step, set(current), gone, change.version if last else None)
        step = (step or 0) + 1
        if last:
            tx.done.append(pk)
            return step
        on_flush(tx.flush())


def apply_batch(changes: Iterable[Change]) -> BatchReport:
    """File every item of ``changes`` under exactly its keys, as of its version, in few calls.

    Parameters
    ----------
    changes:
        Any number of changes, several of one item allowed (the newest version wins); the
        items of one call must not be applied concurrently by another caller for the batch
        to finish without retries (they stay exact either way, see the module docstring).

    Returns
    -------
    BatchReport
        Items moved (``applied``), items already at their version or newer (``skipped``),
        states moved by another applier meanwhile whose entries were re-put (``repaired``),
        and the DynamoDB calls made by name.

    Raises
    ------
    chalicelib.storage.Contention
        Transactions kept being cancelled (conditions failed :data:`ATTEMPTS` times in a row,
        or DynamoDB's own conflict retries ran out). Nothing is lost: rerunning completes it.
    chalicelib.errors.DependencyUnavailableError
        Batch reads or writes stayed unprocessed (throttling).
    """
    report = BatchReport()
    pending = {state_key(c.namespace, c.item_id)["pk"]: c for c in coalesce(changes)}
    finals: dict[str, _Final] = {}
    # Keys whose entries are known to exist (the state was clean when first read); None: unknown.
    written: dict[str, set[str] | None] = {}
    committed_step: dict[str, int] = {}
    targets: dict[str, set[str]] = {}
    gone_by_pk: dict[str, set[str]] = {}

    def finish(pks: list[str]) -> None:
        for pk in pks:
            change = pending.pop(pk)
            known = written.get(pk)
            finals[pk] = _Final(state_key(change.namespace, change.item_id),
                                targets[pk] - known if known is not None else set(targets[pk]),
                                gone_by_pk[pk], committed_step[pk], change.item_id)
            report.applied += 1

    for attempt in range(ATTEMPTS):
        states = _read_states([state_key(c.namespace, c.item_id) for c in pending.values()], report)
        tx = _Transactions(report)
        try:
            for pk, change in list(pending.items()):
                state = states.get(pk) or _State(0, None, set(), set(), False)
                if state.version >= change.version:
                    del pending[pk]
                    report.skipped += 1
                    if state.dirty:  # an earlier applier committed but may not have written its entries
                        finals[pk] = _Final(state_key(change.namespace, change.item_id), set(state.keys),
                                            state.gone - state.keys, state.step or 0, change.item_id)
                    continue
                if pk not in written:
                    written[pk] = None if state.dirty else set(state.keys)
                else:
                    written[pk] = None  # read again after a cancelled transaction: assume nothing
                targets[pk] = {k.encoded() for k in change.keys}
                gone_by_pk[pk] = (state.gone | state.keys) - targets[pk]
                committed_step[pk] = _commit(change, state, tx, finish)
            finish(tx.flush())
        except storage.TransactionConflict:
            if attempt == ATTEMPTS - 1:
                raise storage.Contention("posting states kept changing under a batch") from None
            _backoff(attempt)
            continue
        break
    _write_entries(finals, report)
    _clean(finals, report)
    return report


def _write_entries(finals: Mapping[str, _Final], report: BatchReport) -> None:
    requests: list[dict[str, Any]] = []
    for final in finals.values():
        for encoded in sorted(final.deletes - final.puts):
            key = PostingKey.decode(encoded)
            requests.append({"DeleteRequest": {"Key": storage.to_item({"pk": key.list_id, "sk": key.sort})}})
        for encoded in sorted(final.puts):
            key = PostingKey.decode(encoded)
            requests.append({"PutRequest": {"Item": storage.to_item({"pk": key.list_id, "sk": key.sort, "id": final.item_id})}})
    write_requests(requests, report)


def _clean_op(final: _Final) -> dict[str, Any]:
    return storage.update_op(_table(), final.key, "REMOVE #d, #g", condition="#s = :step",
                             ExpressionAttributeNames={"#d": "dirty", "#g": "gone", "#s": "step"},
                             ExpressionAttributeValues=storage.values(step=final.step))


def _clean(finals: Mapping[str, _Final], report: BatchReport) -> None:
    """Mark the states clean (entries written), :data:`TRANSACTION_ITEMS` per transaction; a state
    another applier moved meanwhile is repaired instead (:func:`_repair`)."""
    ordered = list(finals.values())
    for start in range(0, len(ordered), TRANSACTION_ITEMS):
        chunk = ordered[start : start + TRANSACTION_ITEMS]
        report.calls["TransactWriteItems"] += 1
        try:
            storage.transact([_clean_op(f) for f in chunk])
            continue
        except storage.TransactionConflict as conflict:
            moved = [f for f, reason in zip(chunk, conflict.reasons, strict=False) if reason == "ConditionalCheckFailed"]
        moved_pks = {f.key["pk"] for f in moved}
        rest = [f for f in chunk if f.key["pk"] not in moved_pks]
        if rest:
            report.calls["TransactWriteItems"] += 1
            try:
                storage.transact([_clean_op(f) for f in rest])
            except storage.TransactionConflict:
                moved += rest  # moved again meanwhile: repairing is always safe
        _repair(moved, report)


def _repair(moved: Sequence[_Final], report: BatchReport) -> None:
    """Re-put the entries of the states as they are now: this applier's deletes may have landed
    after another applier put a key again (they leave the states dirty for that applier to clean)."""
    if not moved:
        return
    states = _read_states([f.key for f in moved], report)
    requests = []
    for final in moved:
        state = states.get(final.key["pk"])
        for encoded in sorted(state.keys if state else ()):
            key = PostingKey.decode(encoded)
            requests.append({"PutRequest": {"Item": storage.to_item({"pk": key.list_id, "sk": key.sort, "id": final.item_id})}})
        report.repaired += 1
    write_requests(requests, report)
