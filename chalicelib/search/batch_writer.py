"""Posting lists maintained in batches: a stream batch becomes a few DynamoDB calls (part 3).

:func:`chalicelib.search.postings.apply` files one item per call: a strongly consistent GetItem of its
state and one TransactWriteItems per 49 changed keys (entries, sizes and state together), about
three calls per listing, so the Listings-stream consumer kept up with 4-5 listings/s. This module
files a whole batch of items at once, in the same layout (entries, ``size|`` items, ``state|``
items of :mod:`chalicelib.search.postings`), and stays exact under replays, reordering and crashes:

1. **Coalesce.** Of several changes of one item in a batch only the newest version is applied
   (the keys an item is filed under depend on its newest version only).
2. **Read** every state in BatchGetItem calls (``ConsistentRead``, 100 keys per call) and drop
   the changes whose version is not newer than the state's (replayed or out-of-order records).
3. **Commit** the states with a **ledger** of their size changes: TransactWriteItems of up to
   :data:`TRANSACTION_ITEMS` - 1 state updates (each conditional on the ``step`` read, or on the
   state's absence; each sets ``version``, ``keys`` and ``ledger``) and one Put of a new ledger
   item ``{pk: "ledger|<uuid>", deltas: {<list id>: <delta>}, done: 0}`` summing the size change
   of every list over those items. A replayed or out-of-order record fails no condition (it was
   dropped in step 2); a state moved meanwhile cancels the transaction, and the batch is read and
   planned again.
4. **Sizes**, from the ledger, exactly once: its lists in name order, :data:`TRANSACTION_ITEMS` - 1
   ``ADD`` per transaction together with ``SET done = done + 1`` conditional on the ``done`` read
   (the last step deletes the ledger). So each list's size moves once per batch, not once per
   item, and a crash between steps resumes at the next one: an applier that finds a state naming a
   ledger that still exists finishes it before committing anything (so no ledger loses the last
   state that names it). Sizes thus equal the keys the states count plus the
   ledgers not yet applied (:func:`ledger_pending`), and exactly the keys once the batch is done.
5. **Entries** are written after that with BatchWriteItem (25 requests per call,
   :data:`WRITE_THREADS` calls at once, ``UnprocessedItems`` retried with jittered exponential
   backoff). Until then the state says so: every commit sets ``dirty`` and records in ``gone`` the
   keys removed while entries may still exist. The next applier of a dirty state re-puts every key
   of the state and deletes ``gone`` (both idempotent), so a crash between commit and entries is
   completed by the retry, whatever version it carries.
6. **Clean**: one TransactWriteItems per 100 states removes ``dirty``, ``gone`` and ``ledger``,
   conditional on the step committed. A state moved meanwhile by another applier (a backfill
   beside the stream) is not cleaned; its entries are re-put from the state as read afterwards
   (:func:`_repair`), so a late delete of this applier cannot leave a counted key without its
   entry. Such a race can leave an uncounted entry behind, which readers drop (every candidate
   is verified against its item).

So a batch of ``n`` items with ``k`` changed keys over ``l`` distinct lists costs
``ceil(n / 100)`` reads, ``ceil(n / 99)`` commits, ``ceil(l / 99)`` size steps, ``ceil(k / 25)``
batch writes (in parallel) and ``ceil(n / 100)`` cleanings; one by one it was ``n`` reads and
``k / 49`` transactions of two items per key. The ledger is why sizes are not in the states'
transaction: a transaction holds 100 actions, so sizes updated beside the states they count
moved once per key (measured on moto: 14,177 update actions in all for 300 listings, 2,174 with ledgers).

Domain-free: the caller computes the posting keys (:class:`chalicelib.search.postings.PostingKey`) of
its items. Sources: AWS docs, "TransactWriteItems" (100 actions, one action per item),
"BatchWriteItem" (25 requests; retry ``UnprocessedItems`` with exponential backoff),
"BatchGetItem" (100 keys, ``ConsistentRead``); AWS Architecture Blog, "Exponential Backoff And
Jitter" (full jitter).
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from chalicelib import errors, storage
from chalicelib.config import settings
from chalicelib.search.postings import PostingKey, entry_item, projection, size_key, state_key

#: Actions per TransactWriteItems (AWS limit).
TRANSACTION_ITEMS = 100
#: Requests per BatchWriteItem and keys per BatchGetItem (AWS limits).
WRITE_BATCH = 25
READ_BATCH = 100
#: BatchWriteItem calls in flight at once: the entries of a batch are thousands of independent
#: requests, and one call's round trip (not DynamoDB's capacity) is what bounds a sequential writer.
WRITE_THREADS = 8
#: Attempts of a BatchWriteItem / BatchGetItem round with unprocessed requests, and of the
#: whole commit when a transaction's condition failed (another applier moved a state).
ATTEMPTS = 8
#: First backoff, seconds (doubled per attempt, full jitter).
BASE_DELAY_SECONDS = 0.02

#: Most bytes of list names in one ledger item (DynamoDB items hold at most 400 KB).
LEDGER_BYTES = 300_000

_LEDGER_SK = "ledger"


def _table() -> str:
    return settings().SEARCH_INDEX_TABLE


@dataclass(frozen=True)
class Change:
    """One item to file under exactly ``keys`` as of its ``version``.

    Attributes
    ----------
    namespace:
        The kind of item (``"listings.v2"``, ``"profiles"``), as for :func:`chalicelib.search.postings.apply`.
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
    ledger: str | None = None


@dataclass
class _Final:
    """An item whose commit is done: the entries to write and the step to clean at."""

    key: dict[str, str]
    puts: set[str]
    deletes: set[str]
    step: int
    item_id: str
    #: The item's namespace and every key it is filed under (its covering projection,
    #: :func:`chalicelib.search.postings.projection`, is computed from them).
    namespace: str = ""
    keys: set[str] = field(default_factory=set)


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


def _batch_read(keys: Sequence[Mapping[str, str]], report: BatchReport) -> dict[str, dict[str, Any]]:
    """Items by ``pk``: strongly consistent BatchGetItem calls of :data:`READ_BATCH` keys."""
    found: dict[str, dict[str, Any]] = {}
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
                found[str(item["pk"])] = item
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
            _backoff(attempt)
        else:
            raise errors.DependencyUnavailable(f"BatchGetItem left keys unprocessed after {ATTEMPTS} attempts")
    return found


def _read_states(keys: Sequence[Mapping[str, str]], report: BatchReport) -> dict[str, _State]:
    """States by ``pk`` (:func:`_batch_read`)."""
    return {
        pk: _State(int(item.get("version", 0)), int(item.get("step", 0)), set(item.get("keys") or ()),
                   set(item.get("gone") or ()), bool(item.get("dirty")), str(item["ledger"]) if item.get("ledger") else None)
        for pk, item in _batch_read(keys, report).items()
    }


def write_requests(requests: Sequence[Mapping[str, Any]], report: BatchReport | None = None) -> None:
    """BatchWriteItem ``requests`` (``{"PutRequest": ...}`` / ``{"DeleteRequest": ...}``, low-level
    format) on the SearchIndex table: :data:`WRITE_BATCH` per call, :data:`WRITE_THREADS` calls at once
    (the requests are independent: every key appears once; a boto3 client is thread-safe).

    Raises
    ------
    chalicelib.errors.DependencyUnavailable
        Requests still unprocessed (throttling) after :data:`ATTEMPTS` backed-off attempts.
    """
    table = _table()
    chunks = [list(requests[start : start + WRITE_BATCH]) for start in range(0, len(requests), WRITE_BATCH)]
    lock = threading.Lock()

    def write(chunk: list[Mapping[str, Any]]) -> None:
        pending: dict[str, Any] = {table: chunk}
        for attempt in range(ATTEMPTS):
            if report is not None:
                with lock:
                    report.calls["BatchWriteItem"] += 1
            pending = storage.dynamodb().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                return
            _backoff(attempt)  # unprocessed items mean throttling (AWS docs, BatchWriteItem)
        raise errors.DependencyUnavailable(f"BatchWriteItem left requests unprocessed after {ATTEMPTS} attempts")

    if len(chunks) <= 1 or WRITE_THREADS <= 1:
        for chunk in chunks:
            write(chunk)
        return
    with ThreadPoolExecutor(max_workers=min(WRITE_THREADS, len(chunks)), thread_name_prefix="postings-write") as pool:
        for done in [pool.submit(write, chunk) for chunk in chunks]:
            done.result()  # the first failure raises (the others have finished: the pool waits on exit)


def _state_op(key: Mapping[str, str], state: _State, version: int, keys: set[str], gone: set[str],
              ledger: str | None) -> dict[str, Any]:
    """The state's move to ``version``: conditional on the step read (on its absence for a new state)."""
    sets = ["#s = :next", "#d = :dirty", "#v = :v"]
    removes: list[str] = []
    names = {"#s": "step", "#d": "dirty", "#v": "version"}
    vals: dict[str, Any] = {"next": (state.step or 0) + 1, "dirty": True, "v": version}
    for attribute, placeholder, value in (("keys", "#k", keys), ("gone", "#g", gone), ("ledger", "#l", ledger)):
        names[placeholder] = attribute
        if value:
            sets.append(f"{placeholder} = :{attribute}")
            vals[attribute] = value
        else:  # DynamoDB has no empty string set
            removes.append(placeholder)
    expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
    if state.step is None:
        condition = "attribute_not_exists(pk)"
    else:
        condition = "#s = :step"
        vals["step"] = state.step
    return storage.update_op(_table(), key, expression, condition=condition,
                             ExpressionAttributeNames=names, ExpressionAttributeValues=storage.values(**vals))


def _size_op(list_name: str, delta: int) -> dict[str, Any]:
    return storage.update_op(_table(), size_key(list_name), "ADD n :d", ExpressionAttributeValues=storage.values(d=delta))


@dataclass
class _Plan:
    pk: str
    change: Change
    state: _State
    target: set[str]
    gone: set[str]
    deltas: Counter[str]


def _ledger_bytes(deltas: Mapping[str, int]) -> int:
    return sum(len(name) + 8 for name in deltas)


def _chunks(plans: list[_Plan]) -> list[list[_Plan]]:
    """Plans packed into commit transactions: at most :data:`TRANSACTION_ITEMS` - 1 states (the ledger
    is the last action) and a ledger of at most :data:`LEDGER_BYTES`."""
    chunks: list[list[_Plan]] = []
    current: list[_Plan] = []
    summed: Counter[str] = Counter()
    for plan in plans:
        merged = summed + plan.deltas
        if current and (len(current) + 1 > TRANSACTION_ITEMS - 1 or _ledger_bytes(merged) > LEDGER_BYTES):
            chunks.append(current)
            current, merged = [], Counter(plan.deltas)
        current.append(plan)
        summed = merged
    if current:
        chunks.append(current)
    return chunks


def _commit(chunk: list[_Plan], report: BatchReport) -> tuple[str | None, dict[str, int]]:
    """One transaction: every state of ``chunk`` (conditional) and the ledger of their summed size deltas.

    Returns ``(ledger pk, deltas)`` (``None``: no size changes). Raises ``storage.TransactionConflict``.
    """
    summed: Counter[str] = Counter()
    for plan in chunk:
        summed.update(plan.deltas)
    deltas = {name: delta for name, delta in summed.items() if delta}
    ledger = f"ledger|{uuid.uuid4().hex}" if deltas else None
    ops = [_state_op(state_key(p.change.namespace, p.change.item_id), p.state, p.change.version, p.target, p.gone, ledger)
           for p in chunk]
    if ledger is not None:
        ops.append(storage.put_op(_table(), {"pk": ledger, "sk": _LEDGER_SK, "deltas": deltas, "done": 0},
                                  condition="attribute_not_exists(pk)"))
    report.calls["TransactWriteItems"] += 1
    storage.transact(ops)
    return ledger, deltas


def ledger_pending(ledger: Mapping[str, Any]) -> dict[str, int]:
    """The size deltas of a stored ledger item not yet applied (its lists in order, :data:`TRANSACTION_ITEMS` - 1 per step)."""
    names = sorted(ledger.get("deltas") or {})
    per_step = TRANSACTION_ITEMS - 1
    return {name: int(ledger["deltas"][name]) for name in names[int(ledger.get("done", 0)) * per_step :]}


def _apply_ledger(pk: str, deltas: Mapping[str, int], done: int, report: BatchReport) -> None:
    """Add a ledger's deltas to the list sizes, exactly once: each step's transaction adds the next
    :data:`TRANSACTION_ITEMS` - 1 lists (in name order) and moves the ledger's ``done`` on, conditional
    on the step it read; the last one deletes the ledger. A step another applier took first is read again."""
    names = sorted(deltas)
    per_step = TRANSACTION_ITEMS - 1
    steps = max(1, -(-len(names) // per_step))
    key = {"pk": pk, "sk": _LEDGER_SK}
    for _ in range(ATTEMPTS * steps):
        if done >= steps:
            return
        ops = [_size_op(name, deltas[name]) for name in names[done * per_step : (done + 1) * per_step]]
        if done == steps - 1:
            ops.append(storage.delete_op(_table(), key, condition="#n = :done",
                                         ExpressionAttributeNames={"#n": "done"}, ExpressionAttributeValues=storage.values(done=done)))
        else:
            ops.append(storage.update_op(_table(), key, "SET #n = :next", condition="#n = :done", ExpressionAttributeNames={"#n": "done"},
                                         ExpressionAttributeValues=storage.values(done=done, next=done + 1)))
        report.calls["TransactWriteItems"] += 1
        try:
            storage.transact(ops)
        except storage.TransactionConflict:  # another applier took this step: continue from where it is
            stored = _batch_read([key], report).get(pk)
            if stored is None:
                return
            done = int(stored.get("done", 0))
            continue
        done += 1
    raise storage.Contention(f"ledger {pk} kept moving")


def _recover_ledgers(pks: Iterable[str], report: BatchReport) -> None:
    """Finish the ledgers an earlier applier committed but did not apply (states still name them)."""
    wanted = sorted(set(pks))
    if not wanted:
        return
    for pk, ledger in _batch_read([{"pk": pk, "sk": _LEDGER_SK} for pk in wanted], report).items():
        _apply_ledger(pk, {k: int(v) for k, v in (ledger.get("deltas") or {}).items()}, int(ledger.get("done", 0)), report)


def apply_batch(changes: Iterable[Change]) -> BatchReport:
    """File every item of ``changes`` under exactly its keys, as of its version, in few calls.

    Parameters
    ----------
    changes:
        Any number of changes, several of one item allowed (the newest version wins). Items
        applied concurrently by another caller stay exact (see the module docstring); the
        stream hands one item's records to one invocation at a time.

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
    chalicelib.errors.DependencyUnavailable
        Batch reads or writes stayed unprocessed (throttling).
    """
    report = BatchReport()
    pending = {state_key(c.namespace, c.item_id)["pk"]: c for c in coalesce(changes)}
    finals: dict[str, _Final] = {}
    ledgers: list[tuple[str, dict[str, int]]] = []
    recovered: set[str] = set()
    # Keys whose entries are known to exist (the state was clean when first read); None: unknown.
    written: dict[str, set[str] | None] = {}
    for attempt in range(ATTEMPTS):
        states = _read_states([state_key(c.namespace, c.item_id) for c in pending.values()], report)
        # Before a state's ledger pointer is overwritten: a ledger no state names would never be applied.
        found = {st.ledger for st in states.values() if st.ledger} - recovered
        _recover_ledgers(found, report)
        recovered |= found
        plans: list[_Plan] = []
        for pk, change in list(pending.items()):
            state = states.get(pk) or _State(0, None, set(), set(), False)
            if state.version >= change.version:
                del pending[pk]
                report.skipped += 1
                if state.dirty:  # an earlier applier committed but may not have written its entries
                    finals[pk] = _Final(state_key(change.namespace, change.item_id), set(state.keys),
                                        state.gone - state.keys, state.step or 0, change.item_id, change.namespace,
                                        set(state.keys))
                continue
            written[pk] = (None if state.dirty else set(state.keys)) if pk not in written else None
            target = {k.encoded() for k in change.keys}
            deltas: Counter[str] = Counter()
            for encoded in state.keys - target:
                deltas[PostingKey.decode(encoded).list_id] -= 1
            for encoded in target - state.keys:
                deltas[PostingKey.decode(encoded).list_id] += 1
            plans.append(_Plan(pk, change, state, target, (state.gone | state.keys) - target, deltas))
        try:
            for chunk in _chunks(plans):
                ledger, summed = _commit(chunk, report)
                if ledger is not None:
                    ledgers.append((ledger, summed))
                for plan in chunk:
                    known = written.get(plan.pk)
                    if known is not None and _projection(plan.change.namespace, known) != _projection(plan.change.namespace, plan.target):
                        known = None  # the kept entries carry the old projection: re-put them too
                    puts = plan.target - known if known is not None else set(plan.target)
                    finals[plan.pk] = _Final(state_key(plan.change.namespace, plan.change.item_id), puts, plan.gone,
                                             (plan.state.step or 0) + 1, plan.change.item_id, plan.change.namespace,
                                             plan.target)
                    report.applied += 1
                    del pending[plan.pk]
        except storage.TransactionConflict:
            if attempt == ATTEMPTS - 1:
                raise storage.Contention("posting states kept changing under a batch") from None
            _backoff(attempt)
            continue
        break
    for pk, summed in ledgers:
        _apply_ledger(pk, summed, 0, report)
    _write_entries(finals, report)
    _clean(finals, report)
    return report


def _projection(namespace: str, encoded: Iterable[str]) -> dict[str, str] | None:
    return projection(namespace, (PostingKey.decode(text) for text in encoded))


def _put(encoded: str, final: _Final, data: Mapping[str, str] | None) -> dict[str, Any]:
    return {"PutRequest": {"Item": storage.to_item(entry_item(PostingKey.decode(encoded), final.item_id, data))}}


def _write_entries(finals: Mapping[str, _Final], report: BatchReport) -> None:
    requests: list[dict[str, Any]] = []
    for final in finals.values():
        for encoded in sorted(final.deletes - final.puts):
            key = PostingKey.decode(encoded)
            requests.append({"DeleteRequest": {"Key": storage.to_item({"pk": key.list_id, "sk": key.sort})}})
        data = _projection(final.namespace, final.keys)
        requests += [_put(encoded, final, data) for encoded in sorted(final.puts)]
    write_requests(requests, report)


def _clean_op(final: _Final) -> dict[str, Any]:
    return storage.update_op(_table(), final.key, "REMOVE #d, #g, #l", condition="#s = :step",
                             ExpressionAttributeNames={"#d": "dirty", "#g": "gone", "#l": "ledger", "#s": "step"},
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
        kept = state.keys if state else set()
        data = _projection(final.namespace, kept)
        requests += [_put(encoded, final, data) for encoded in sorted(kept)]
        report.repaired += 1
    write_requests(requests, report)
