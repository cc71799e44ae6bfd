"""Posting lists in the SearchIndex table: the inverted index every search planner reads.

A posting list is the set of items (listings, users) that share one indexed property — a word
prefix, a select value, a country — kept sorted so that a page can be read from its start and
stop early. This module is domain-free: a domain module computes the posting keys of one of
its items (e.g. :mod:`chalicelib.listings.search.postings`), and this module files the item
under exactly those keys, counts each list's size, and reads lists back.

Items (SearchIndex table, ``pk`` / ``sk``):

* **entry** ``{pk: <list id>, sk: <sort>, id: <item id>, f: <projection>}``: one per item and list.
  Lists are read by ``sk`` (descending for newest first); a sort must be unique per item within
  a list, so callers end it with the item id (e.g. ``<createdAt>#<listingId>``). ``f`` is the
  item's **covering projection**: a small map of its filterable values that the
  domain derives from the item's own posting keys (:func:`register_projection`), so that a
  reader can check the query's other filters on the entry it already holds instead of reading
  the item. Because the projection is a function of the keys, an item whose keys did not change
  keeps its entries; when they changed, every entry of the item is re-put with the new
  projection (:func:`apply`, :mod:`chalicelib.search.batch_writer`).
* **size** ``{pk: "size|<list id>", sk: "size", n}``: the list's entry count, changed in the same
  transaction as its entries, so it is exact at every commit; read in one BatchGetItem
  (:func:`sizes`).
* **state** ``{pk: "state|<namespace>|<item id>", sk: "state", version, step, keys}``: the posting
  keys the item is filed under now (``keys``, a string set), the version of the item they were
  computed from, and a step counter. It stays as a small tombstone after a removal, so that an
  older record arriving late still finds the newer version.

Applying a change (:func:`apply`) is **idempotent and version-checked**: it compares the item's
target keys with the keys the state says are applied (not with the stream's old image), so a
replayed record (same version) or an out-of-order one (older version) changes nothing, and an
application interrupted half-way is completed exactly by the next attempt. A TransactWriteItems
holds at most 100 items (AWS docs, "TransactWriteItems"), each changed key costs two (entry and
size), so large changes go in chunks of :data:`CHUNK_KEYS` keys; every chunk updates the state
in the same transaction, conditional on the step it read, so the state always equals the
entries written and concurrent appliers of one item cannot interleave.

Sources: inverted index / posting list (C. D. Manning, P. Raghavan, H. Schütze, "Introduction to
Information Retrieval", 2008, ch. 1-2); DynamoDB transactions and their limits (AWS docs).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

from chalicelib import storage
from chalicelib.config import settings

#: Keys changed per transaction: 2 items each (entry, size) + the state item <= 100 (AWS limit).
CHUNK_KEYS = 49
#: Times :func:`apply` re-reads the state after a concurrent applier moved it.
APPLY_ATTEMPTS = 5
#: Separates a key's list id from its sort in the state's string set (never part of either).
_SEPARATOR = "\t"
_STATE_SK = "state"
_SIZE_SK = "size"


def _table() -> str:
    return settings().SEARCH_INDEX_TABLE


@dataclass(frozen=True, order=True)
class PostingKey:
    """Where an item is filed: in list ``list_id`` at position ``sort``.

    Attributes
    ----------
    list_id:
        The list's name, e.g. ``listings#jobs#q#rust`` (build it with :func:`list_id`).
    sort:
        The entry's sort key within the list, unique per item (end it with the item id).
    """

    list_id: str
    sort: str

    def encoded(self) -> str:
        """The key as stored in the state's string set (``<list id>\\t<sort>``)."""
        return f"{self.list_id}{_SEPARATOR}{self.sort}"

    @classmethod
    def decode(cls, text: str) -> PostingKey:
        """The inverse of :meth:`encoded`."""
        list_part, _, sort = text.partition(_SEPARATOR)
        return cls(list_part, sort)


class Posting(NamedTuple):
    """One entry read from a list: its sort key, the id of the item filed there and the item's
    covering projection (``None`` for an entry written without one).

    A named tuple, not a dataclass: a search page builds a few hundred of them, and a frozen
    dataclass's ``__init__`` costs several times a tuple's (``docs/search.md``, "Cheap pages").
    """

    sort: str
    item_id: str
    data: Mapping[str, str] | None = None


class WireProjection(Mapping[str, str]):
    """An entry's covering projection as DynamoDB sent it (``{name: {"S": value}}``), read as
    ``{name: value}`` on access.

    A covered read checks one or two of an entry's values and drops most entries it reads
    (``contract+salary_min``: about 20 of 110 pass), so the values are decoded when the check
    asks for them, not all of every entry's (``docs/search.md``, "Cheap pages").
    """

    __slots__ = ("_wire",)

    def __init__(self, wire: Mapping[str, Mapping[str, str]]) -> None:
        self._wire = wire

    def __getitem__(self, name: str) -> str:
        return self._wire[name]["S"]

    def get(self, name: str, default: Any = None) -> Any:
        """The value of ``name``, or ``default`` when the projection has none."""
        value = self._wire.get(name)
        return default if value is None else value["S"]

    def __iter__(self) -> Iterator[str]:
        return iter(self._wire)

    def __len__(self) -> int:
        return len(self._wire)


#: ``project(keys) -> {name: value}``: the covering projection of an item from its posting keys.
Projection = Callable[[Iterable[PostingKey]], dict[str, str]]
_PROJECTIONS: dict[str, Projection] = {}


def register_projection(namespace: str, project: Projection) -> None:
    """Declare the covering projection of a domain's items (its index module calls this at import).

    Parameters
    ----------
    namespace:
        The namespace the domain files its items under (the ``namespace`` of :func:`apply`).
    project:
        Pure function of an item's posting keys to a small ``{name: value}`` map (string values),
        stored in every entry of the item as ``f``. It must be derived from the keys alone, so
        that unchanged keys mean an unchanged projection.
    """
    _PROJECTIONS[namespace] = project


def projection(namespace: str, keys: Iterable[PostingKey]) -> dict[str, str] | None:
    """The registered covering projection of an item filed under ``keys`` (``None``: no projection
    registered, or no keys)."""
    project = _PROJECTIONS.get(namespace)
    materialized = list(keys)
    if project is None or not materialized:
        return None
    return project(materialized)


def entry_item(key: PostingKey, item_id: str, data: Mapping[str, str] | None) -> dict[str, Any]:
    """The stored entry of ``item_id`` at ``key`` (with its projection ``f`` when there is one)."""
    item: dict[str, Any] = {"pk": key.list_id, "sk": key.sort, "id": item_id}
    if data is not None:  # an empty projection is stored too: "no filterable value", not "unknown"
        item["f"] = dict(data)
    return item


@dataclass(frozen=True)
class PostingPage:
    """Up to ``limit`` entries of one list in the order asked for, and whether more may follow."""

    postings: list[Posting]
    more: bool


def list_id(namespace: str, *parts: str) -> str:
    """The id of a posting list: ``<namespace>#<part>#...`` (parts must not contain a tab)."""
    return "#".join((namespace, *parts))


def size_key(list_name: str) -> dict[str, str]:
    """The key of a list's size item (``size|<list id>``); :mod:`chalicelib.search.batch_writer` writes the same items."""
    return {"pk": f"size|{list_name}", "sk": _SIZE_SK}


def state_key(namespace: str, item_id: str) -> dict[str, str]:
    """The key of an item's state (``state|<namespace>|<item id>``); :mod:`chalicelib.search.batch_writer` writes the same items."""
    return {"pk": f"state|{namespace}|{item_id}", "sk": _STATE_SK}


def applied_keys(namespace: str, item_id: str) -> tuple[int, set[PostingKey]]:
    """``(version, keys)`` the item is filed under now (``(0, set())`` for an item never applied).

    One strongly consistent GetItem of the state item.
    """
    state = storage.get(_table(), state_key(namespace, item_id), consistent=True)
    if state is None:
        return 0, set()
    return int(state.get("version", 0)), {PostingKey.decode(k) for k in state.get("keys", [])}


def apply(namespace: str, item_id: str, version: int, keys: Iterable[PostingKey]) -> bool:
    """File item ``item_id`` under exactly ``keys``, as of its ``version``.

    Parameters
    ----------
    namespace:
        The kind of item (``"listings"``, ``"profiles"``): separates the states of ids that
        could repeat across domains.
    item_id:
        The item's id (stored in each entry as ``id``).
    version:
        The item's version the keys were computed from; strictly increasing per item (for a
        removal pass the last version + 1). Nothing is written unless it is newer than the
        version applied.
    keys:
        The target posting keys (empty: remove the item from every list).

    Returns
    -------
    bool
        True when this call brought the item to ``version``; False when the state already
        had this version or a newer one (a replayed or out-of-order record).

    Raises
    ------
    chalicelib.storage.Contention
        Concurrent appliers of the same item kept moving its state (:data:`APPLY_ATTEMPTS`
        re-reads), or DynamoDB kept cancelling the transactions.
    """
    target = {k.encoded() for k in keys}
    for _ in range(APPLY_ATTEMPTS):
        state = storage.get(_table(), state_key(namespace, item_id), consistent=True)
        if state is not None and int(state.get("version", 0)) >= version:
            return False
        applied = set(state.get("keys", [])) if state is not None else set()
        step = int(state.get("step", 0)) if state is not None else None
        data = projection(namespace, (PostingKey.decode(k) for k in target))
        old = projection(namespace, (PostingKey.decode(k) for k in applied))
        # A changed projection re-puts every kept entry too (they carry the old one); sizes move for new keys only.
        rewritten = sorted(target & applied) if data != old else []
        try:
            _write_changes(namespace, item_id, version, step, sorted(applied - target), sorted(target - applied), data, rewritten)
        except storage.TransactionConflict:
            continue  # another applier moved the state: read it again
        return True
    raise storage.Contention(f"posting state of {namespace} {item_id} kept changing")


def _write_changes(namespace: str, item_id: str, version: int, step: int | None, removed: list[str], added: list[str],
                   data: Mapping[str, str] | None = None, rewritten: Sequence[str] = ()) -> None:
    """Removals first (a paused item leaves its lists as early as possible), then additions,
    :data:`CHUNK_KEYS` per transaction; the last transaction also sets ``version``. ``rewritten``
    keys (kept, but with a changed projection ``data``) are re-put in further chunks that move
    no size."""
    chunks: list[tuple[int, list[str]]] = [(-1, removed[i : i + CHUNK_KEYS]) for i in range(0, len(removed), CHUNK_KEYS)]
    chunks += [(+1, added[i : i + CHUNK_KEYS]) for i in range(0, len(added), CHUNK_KEYS)]
    chunks += [(0, list(rewritten[i : i + CHUNK_KEYS])) for i in range(0, len(rewritten), CHUNK_KEYS)]
    if not chunks:
        chunks = [(+1, [])]  # nothing to move: record the version only
    for index, (delta, chunk) in enumerate(chunks):
        last = index == len(chunks) - 1
        ops = [_state_op(namespace, item_id, step, delta, chunk, version if last else None)]
        moved: Counter[str] = Counter()
        for text in chunk:
            key = PostingKey.decode(text)
            entry = {"pk": key.list_id, "sk": key.sort}
            if delta >= 0:
                ops.append(storage.put_op(_table(), entry_item(key, item_id, data)))
            else:
                ops.append(storage.delete_op(_table(), entry))
            moved[key.list_id] += delta
        # One size update per list: a transaction may not touch one item twice (AWS docs, TransactWriteItems).
        ops += [storage.update_op(_table(), size_key(name), "ADD n :d", ExpressionAttributeValues=storage.values(d=n))
                for name, n in moved.items() if n]
        storage.transact(ops)
        step = (step or 0) + 1


def _state_op(namespace: str, item_id: str, step: int | None, delta: int, chunk: list[str], version: int | None) -> dict[str, Any]:
    """The state's update in one chunk: conditional on the step read (absent for a new state)."""
    sets = ["step = :next"]
    vals: dict[str, Any] = {"next": (step or 0) + 1}
    if version is not None:
        sets.append("version = :v")
        vals["v"] = version
    expression = "SET " + ", ".join(sets)
    if chunk and delta:
        expression += f" {'ADD' if delta > 0 else 'DELETE'} #k :keys"
        vals["keys"] = set(chunk)
    if step is None:
        condition = "attribute_not_exists(pk)"
    else:
        condition = "#s = :step"
        vals["step"] = step
    names = {"#s": "step"} if step is not None else {}
    if chunk and delta:
        names["#k"] = "keys"
    return storage.update_op(
        _table(), state_key(namespace, item_id), expression, condition=condition,
        ExpressionAttributeValues=storage.values(**vals), **({"ExpressionAttributeNames": names} if names else {}),
    )


def read(
    list_name: str, limit: int, *, after: str | None = None, descending: bool = True,
    low: str | None = None, high: str | None = None, keys_only: bool = False,
    fields: Sequence[str] | None = None,
) -> PostingPage:
    """One Query of list ``list_name``: up to ``limit`` entries in sort order.

    Parameters
    ----------
    list_name:
        The list id.
    limit:
        Most entries to return (DynamoDB ``Limit``; items read = entries returned).
    after:
        Exclusive start: the sort of the last entry already read (a cursor position).
    descending:
        Largest sort first (newest first for ``<createdAt>#<id>`` sorts).
    low, high:
        Inclusive bounds on the sort (``BETWEEN`` when both are given).
    keys_only:
        Read the entries' sorts and ids only (no projection).
    fields:
        The names of the covering projection to read (DynamoDB document paths ``f.<name>`` in
        the ``ProjectionExpression``), ``None`` for the whole projection. A reader that checks two
        values of each entry reads those (and the owner) rather than every filterable value: about
        half the bytes of a listing's entry. Only for a namespace whose entries all carry a
        projection (:func:`register_projection`): an entry holding none of ``fields`` reads as
        an empty projection, not as an entry without one.

    Returns
    -------
    PostingPage
        The entries and whether DynamoDB says more may follow (``LastEvaluatedKey``).
    """
    condition = "pk = :p"
    vals: dict[str, Any] = {"p": list_name}
    if low is not None and high is not None:
        condition += " AND sk BETWEEN :lo AND :hi"
        vals.update(lo=low, hi=high)
    elif low is not None:
        condition += " AND sk >= :lo"
        vals["lo"] = low
    elif high is not None:
        condition += " AND sk <= :hi"
        vals["hi"] = high
    params: dict[str, Any] = {
        "KeyConditionExpression": condition, "ExpressionAttributeValues": storage.values(**vals),
        "ScanIndexForward": not descending, "Limit": limit,
    }
    if after is not None:
        params["ExclusiveStartKey"] = storage.to_item({"pk": list_name, "sk": after})
    # Never the partition key: every entry of the list repeats it (a fifth of a covering entry's bytes).
    names = {"#i": "id"}
    if keys_only:
        params["ProjectionExpression"] = "sk, #i"
    elif fields is None:
        params["ProjectionExpression"] = "sk, #i, f"
    else:
        names.update((f"#f{n}", name) for n, name in enumerate(fields))
        params["ProjectionExpression"] = ", ".join(["sk", "#i", *(f"f.#f{n}" for n in range(len(fields)))])
    params["ExpressionAttributeNames"] = names
    items, more = storage.query_wire_page(_table(), **params)
    if fields is not None and not keys_only:  # none of the fields present: DynamoDB leaves "f" out
        return PostingPage([_posting(item, _EMPTY) for item in items], more)
    return PostingPage([_posting(item) for item in items], more)


_EMPTY: Mapping[str, Any] = {"M": {}}


def _posting(item: Mapping[str, Any], missing: Mapping[str, Any] | None = None) -> Posting:
    """An entry as DynamoDB sent it (attribute values in DynamoDB JSON) as a :class:`Posting`.

    Decoded here rather than by :func:`chalicelib.storage.from_item`: an entry's shape is fixed
    (:func:`entry_item`: ``sk``, ``id`` strings, ``f`` a map of strings), and a page reads
    hundreds of entries, so the general converter's per-value dispatch was a visible share of a
    search page's CPU. The projection's values are decoded on access (:class:`WireProjection`).
    ``missing``: the stored projection of an entry sent without ``f`` (``None``: it has none).
    """
    stored = item.get("f", missing)
    return Posting(item["sk"]["S"], item["id"]["S"], None if stored is None else WireProjection(stored["M"]))


def sizes(list_names: Sequence[str]) -> dict[str, int]:
    """The entry count of each list (0 for a list never written): one BatchGetItem per 100 lists."""
    return sizes_with(list_names, [])[0]


def sizes_with(list_names: Sequence[str], keys: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], list[Mapping[str, Any]]]:
    """:func:`sizes` of ``list_names`` and the items at ``keys`` of the index's table (a domain's
    counters, which share it), read together: one BatchGetItem per 100 keys in all.

    Returns the sizes by list name and the other items found (in no particular order; missing
    keys absent).
    """
    found = storage.batch_get(_table(), [*(size_key(name) for name in dict.fromkeys(list_names)), *keys])
    return sizes_in(found, list_names)


def sizes_in(found: Iterable[Mapping[str, Any]], list_names: Sequence[str]) -> tuple[dict[str, int], list[Mapping[str, Any]]]:
    """The sizes of ``list_names`` among items read from the index's table at their :func:`size_key`
    (0 for a list whose size item is absent), and the other items found, in the order read."""
    counted: dict[str, int] = {}
    others: list[Mapping[str, Any]] = []
    for item in found:
        if item.get("sk") == _SIZE_SK and str(item["pk"]).startswith("size|"):
            counted[str(item["pk"]).removeprefix("size|")] = int(item.get("n", 0))
        else:
            others.append(item)
    return {name: counted.get(name, 0) for name in list_names}, others


def bulk_items(namespace: str, filed: Iterable[tuple[str, int, Iterable[PostingKey]]]) -> list[dict[str, Any]]:
    """The entry, size and state items of many items at once, for loading an **empty** index.

    ``filed`` yields ``(item_id, version, keys)``. The result holds plain items (put them with
    BatchWriteItem); sizes are the absolute counts. Used by the bulk load of the benchmark and
    by tests; an index that may hold entries already is brought up to date with :func:`apply`.
    """
    items: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for item_id, version, keys in filed:
        unique = set(keys)
        data = projection(namespace, unique)
        for key in unique:
            items.append(entry_item(key, item_id, data))
            counts[key.list_id] += 1
        state: dict[str, Any] = {**state_key(namespace, item_id), "version": version, "step": 1}
        if unique:
            state["keys"] = {k.encoded() for k in unique}
        items.append(state)
    items.extend({**size_key(name), "n": n} for name, n in counts.items())
    return items


#: Exponent offset of :func:`sortable_number` (accepted values have |exponent| < 100).
_EXPONENT_OFFSET = 500


def sortable_number(text: str) -> str:
    """An order-preserving text key of a decimal number, for sorts that range queries read.

    ``sortable_number(a) < sortable_number(b)`` (as strings) exactly when ``a < b`` (as
    decimals), also when a ``#``-separated suffix follows each key, and ``BETWEEN`` bounds built
    with :func:`number_bounds` select exactly the numbers in a closed interval. The key is
    ``1`` for zero; ``2`` + the exponent (offset by 500, 3 digits) + the significant digits for
    a positive number; for a negative one ``0`` + the complemented exponent and digits and a
    ``~`` terminator (so a shorter mantissa sorts after a longer one it prefixes, as
    -1.2 > -1.23 needs). The same idea as the order-preserving encodings of Bigtable-style
    stores (e.g. FoundationDB's tuple layer, "Integer" and "Decimal" encodings).

    Parameters
    ----------
    text:
        A finite decimal string (``"85000"``, ``"-1.5"``) whose exponent lies within +-499.

    Raises
    ------
    decimal.InvalidOperation
        ``text`` is not a decimal number.
    ValueError
        The number is not finite or its exponent is out of range.
    """
    number = Decimal(text).normalize()
    if not number.is_finite():
        raise ValueError(f"not a finite number: {text}")
    if number.is_zero():
        return "1"
    sign, digits, _ = number.as_tuple()
    exponent = number.adjusted() + _EXPONENT_OFFSET
    if not 0 <= exponent < 1000:
        raise ValueError(f"exponent out of range: {text}")
    mantissa = "".join(str(d) for d in digits)
    if not sign:
        return f"2{exponent:03d}{mantissa}"
    return f"0{999 - exponent:03d}{''.join(str(9 - int(d)) for d in mantissa)}~"


def number_bounds(low: str | None, high: str | None) -> tuple[str | None, str | None]:
    """``(low, high)`` sort bounds selecting the entries whose sort starts with the
    :func:`sortable_number` of a number within ``[low, high]`` followed by ``#`` (``None``: open end)."""
    return (sortable_number(low) if low is not None else None,
            sortable_number(high) + "$" if high is not None else None)  # "$" sorts right after "#"
