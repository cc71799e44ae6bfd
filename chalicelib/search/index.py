"""The index of one document kind: its spec, its layout in the store, and the writer that keeps it.

A domain describes its documents with an :class:`IndexSpec` (namespace, text fields with their
BM25F boosts, a function from its record to a :class:`Document`, a loader of records by id) and
nothing else. For each document the index keeps, in partitions of the store
(``<namespace>|<scope>|...``):

====================  ======================================  =====================================
list                  sort key                                what reads it
====================  ======================================  =====================================
``t|<term>``          ``<255 - impact>|<age>|<id>``           relevance: impact order (one per term)
``a``                 ``<age>|<id>``                          newest first, every document
``k|<name>=<value>``  ``<age>|<id>``                          newest first, keyword filters
``n|<name>|<bucket>`` ``<age>|<id>``                          newest first, number ranges
``g<level>|<cell>``   ``<age>|<id>``                          nearest first (geohash cells)
====================  ======================================  =====================================

``<age>`` is :func:`age_key` (newest first in ascending order). Every entry carries the
document's **projection** (keywords, numbers, point, age): filters are checked on entries
before any document is loaded. Beside the lists: the **vocabulary** (``v``: one item per term,
``n`` = documents holding it; ``d|<partition>``: the term under its typo key, sort key
``<key>|<term>``, :func:`chalicelib.search.analysis.typo_partition`), **sizes** (``c``: one counter item per
non-term list, ``n`` = its entries) and one **stored document** per id (``<namespace>|s|<id>``:
version, scope, projection and term impacts), the version authority of the writer and what
the exact check and the scorer read.

Impacts (Anh & Moffat, "Pruned query evaluation using pre-computed impacts", SIGIR 2006): the
document's part of a term's BM25F contribution (Robertson & Zaragoza, "The Probabilistic
Relevance Framework: BM25 and Beyond", 2009, simple BM25F: ``k1`` 1.2, ``b`` 0.75, average
field lengths from the spec), ``tf / (k1 + tf)``, quantized to 1..255. It depends on the
document alone, so a replayed change writes the same keys; the term's idf multiplies it when
searching (one factor per list, so a list's order is its term's score order). The scorer is
this quantized BM25F, exactly.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from chalicelib.kernel import clock
from chalicelib.search import analysis, buckets, geo
from chalicelib.search.store import Item, Key, Range, Store

#: Quantization levels of an impact (8 bits; 0 is never stored).
LEVELS = 255
K1 = 1.2
B = 0.75
#: Geohash precisions a point is filed at (about 1.2 km, 39 km and 1,250 km cells).
GEO_LEVELS = (6, 4, 2)
#: Copies of a scope's document count: every search reads one (at random) and every indexed
#: document adds to all, so at 5,000 searches/s its reads stay under half of a partition's
#: 3,000 RCU/s (``bench/hot_keys.py``) for one write unit more per copy and document batch.
SCOPE_COUNT_COPIES = 3
#: Largest ``newest`` value (:func:`age_key`): microseconds until the year 5138.
MAX_NEWEST = 10**17


@dataclass(frozen=True)
class Document:
    """What the index knows of a document.

    ``newest``: its recency (e.g. creation time in microseconds since the epoch; larger is
    newer); ``text``: field name -> text; ``keywords``: name -> values (equality filters);
    ``numbers``: name -> value (ranges); ``point``: ``(lat, lng)`` in degrees or ``None``.
    """

    id: str
    version: int
    scope: str
    newest: int
    text: Mapping[str, str] = field(default_factory=dict)
    keywords: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    numbers: Mapping[str, Decimal] = field(default_factory=dict)
    point: tuple[float, float] | None = None


@dataclass(frozen=True)
class IndexSpec:
    """A document kind: ``namespace`` of its lists, BM25F ``boosts`` and ``lengths`` (average
    words) per text field, ``language`` of a scope, ``document`` (record -> :class:`Document`,
    ``None`` when the record is not searchable) and ``load`` (id -> its entry's projection
    (:func:`projection`) -> the records by id, missing ones absent). ``unlisted``: keyword names
    kept in the projection only (checked on entries, never read as a list)."""

    namespace: str
    boosts: Mapping[str, float]
    lengths: Mapping[str, float]
    language: Callable[[str], str]
    document: Callable[[Mapping[str, Any]], Document | None]
    load: Callable[[Mapping[str, Mapping[str, Any]]], Mapping[str, Mapping[str, Any]]]
    unlisted: frozenset[str] = frozenset()

    def list_key(self, scope: str, name: str) -> str:
        """The partition of list ``name`` of ``scope``."""
        return f"{self.namespace}|{scope}|{name}"

    def vocabulary_key(self, scope: str, term: str) -> Key:
        """The vocabulary item of ``term`` in ``scope``. The vocabulary is partitioned by the
        term's first character: indexing a scope's documents spreads its count updates over
        the partitions, and the terms a prefix starts still lie in one partition."""
        return self.list_key(scope, f"v|{term[:1]}"), term

    def size_keys(self, scope: str, name: str) -> list[Key]:
        """The size counters of list ``name`` of ``scope``: one partition per list (a scope's
        counters are all updated by each of its documents), and :data:`SCOPE_COUNT_COPIES`
        copies of the scope's document count (list ``a``), which every search reads. A write
        adds to each; a read takes any one (:func:`size_key`)."""
        copies = SCOPE_COUNT_COPIES if name == "a" else 1
        return [(self.list_key(scope, f"c|{copy}|{name}"), "n") for copy in range(copies)]

    def size_key(self, scope: str, name: str) -> Key:
        """The size counter of list ``name`` of ``scope`` a search reads: one of its copies
        (:func:`size_keys`) at random, so the reads of a scope's count spread over them."""
        return random.choice(self.size_keys(scope, name))

    def stored_key(self, doc_id: str) -> Key:
        """The key of a document's stored form."""
        return f"{self.namespace}|s|{doc_id}", "s"


def age_key(newest: int, doc_id: str) -> str:
    """The newest-first sort key of a document: ascending order is newest first, ties by id."""
    return f"{MAX_NEWEST - newest:017d}|{doc_id}"


def impact_key(impact: int, newest: int, doc_id: str) -> str:
    """The impact-order sort key: highest impact first, then newest, then id."""
    return f"{LEVELS - impact:03d}|{age_key(newest, doc_id)}"


def idf(df: int, total: int) -> float:
    """BM25's idf, ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (never negative)."""
    total = max(total, df)
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def term_frequencies(spec: IndexSpec, doc: Document) -> dict[str, float]:
    """Each term's BM25F pseudo frequency ``sum_f boost_f x tf_f / (1 - b + b x len_f / avglen_f)``."""
    language = spec.language(doc.scope)
    weighted: defaultdict[str, float] = defaultdict(float)
    for name, text in doc.text.items():
        terms = analysis.terms_of(text, language)
        norm = 1 - B + B * len(terms) / spec.lengths.get(name, 10.0)
        for term, count in Counter(terms).items():
            weighted[term] += spec.boosts.get(name, 1.0) * count / norm
    return dict(weighted)


def impacts(frequencies: Mapping[str, float]) -> dict[str, int]:
    """Quantized impacts (1..:data:`LEVELS`) of a document's terms: ``tf / (k1 + tf)`` of each
    term's pseudo frequency, in 8 bits. A term's score is its idf (read when searching) times
    its impact / :data:`LEVELS`."""
    return {term: max(1, round(LEVELS * tf / (K1 + tf))) for term, tf in frequencies.items()}


def projection(doc: Document) -> dict[str, Any]:
    """The fields every entry of ``doc`` carries (filters are checked on them)."""
    data: dict[str, Any] = {"id": doc.id, "age": age_key(doc.newest, doc.id), "new": doc.newest}
    if doc.keywords:
        data["kw"] = {k: list(v) for k, v in doc.keywords.items()}
    if doc.numbers:
        data["num"] = {k: str(v) for k, v in doc.numbers.items()}
    if doc.point is not None:
        data["pt"] = [str(doc.point[0]), str(doc.point[1])]
    return data


def cells(point: tuple[float, float]) -> list[str]:
    """The geo lists of a point: its cell at each of :data:`GEO_LEVELS`."""
    return [f"g{level}|{geo.cell_of(point[0], point[1], level)}" for level in GEO_LEVELS]


def sorted_lists(spec: IndexSpec, doc: Document) -> list[str]:
    """The newest-first lists of ``doc`` (every list but its term lists)."""
    names = ["a", *(f"k|{k}={v}" for k, values in doc.keywords.items() if k not in spec.unlisted for v in values)]
    names += [f"n|{k}|{buckets.bucket_of(v)}" for k, v in doc.numbers.items()]
    return names + (cells(doc.point) if doc.point else [])


def entries(spec: IndexSpec, doc: Document, weights: Mapping[str, int]) -> dict[Key, Item]:
    """Every posting entry of ``doc`` given its term impacts ``weights``, by key."""
    data = projection(doc)
    out: dict[Key, Item] = {}
    for term, impact in weights.items():
        pk, sk = spec.list_key(doc.scope, f"t|{term}"), impact_key(impact, doc.newest, doc.id)
        out[(pk, sk)] = {"pk": pk, "sk": sk, **data, "imp": impact}
    for name in sorted_lists(spec, doc):
        pk = spec.list_key(doc.scope, name)
        out[(pk, data["age"])] = {"pk": pk, "sk": data["age"], **data}
    return out


def stored(spec: IndexSpec, doc: Document, weights: Mapping[str, int]) -> Item:
    """The stored form of ``doc`` (:func:`document_of` reads it back)."""
    pk, sk = spec.stored_key(doc.id)
    return {"pk": pk, "sk": sk, "v": doc.version, "scope": doc.scope, **projection(doc), "terms": dict(weights)}


def document_of(item: Mapping[str, Any]) -> tuple[Document, dict[str, int]]:
    """A stored document (:func:`stored`) as its :class:`Document` (without text) and term impacts."""
    point = item.get("pt")
    doc = Document(
        id=str(item["id"]), version=int(item["v"]), scope=str(item["scope"]), newest=int(item["new"]),
        keywords={k: tuple(v) for k, v in (item.get("kw") or {}).items()},
        numbers={k: Decimal(str(v)) for k, v in (item.get("num") or {}).items()},
        point=(float(point[0]), float(point[1])) if point else None,
    )
    return doc, {str(t): int(i) for t, i in (item.get("terms") or {}).items()}


@dataclass(frozen=True)
class Change:
    """One document's change from a stream: ``doc`` at ``version``, or ``None`` when it left the index."""

    id: str
    version: int
    doc: Document | None


def apply(spec: IndexSpec, store: Store, changes: Sequence[Change]) -> int:
    """File a batch of changes; returns how many documents changed.

    Changes of one document coalesce to its highest version; a change whose version is not
    newer than the stored form's (a replay, an out-of-order record) writes nothing. The stored
    forms and the vocabulary items of the new forms' terms are read in one step. For the
    changed documents, in one step (every call in parallel): the entries of the stored form
    that the new one lacks are deleted and the new ones put (BatchWriteItem; impacts depend on
    the document alone, so a retry after a crash writes the same keys), the vocabulary and list
    sizes move by the difference (UpdateItem ``ADD``) and the terms the vocabulary did not hold
    are filed under their typo keys; then a term the additions show new that the read still saw (another batch
    removed it meanwhile) is filed under its typo key, and a term whose
    list became empty leaves the vocabulary; last the stored form is put, conditional on its
    version (so a document is found by its words as soon as by its filters). A removal is
    stored as a tombstone (version kept, no terms) so that an older change arriving later is
    refused; it expires by the table's TTL (``expiresAt``, Unix seconds) after
    :data:`TOMBSTONE_SECONDS`, when no stream can still deliver an older change.
    """
    newest: dict[str, Change] = {}
    for change in changes:
        if change.id not in newest or change.version > newest[change.id].version:
            newest[change.id] = change
    weights = {c.id: impacts(term_frequencies(spec, c.doc)) if c.doc is not None else {} for c in newest.values()}
    terms = {(c.doc.scope, t) for c in newest.values() if c.doc is not None for t in weights[c.id]}
    vocabulary = {spec.vocabulary_key(scope, t): (scope, t) for scope, t in terms}
    _, before = store.read([], [*(spec.stored_key(c) for c in newest), *sorted(vocabulary)])
    known = {term for key, term in vocabulary.items() if int(before.get(key, {}).get("n", 0)) > 0}
    olds = {i: before.get(spec.stored_key(i)) for i in newest}
    batch = [c for c in newest.values() if olds[c.id] is None or int(olds[c.id]["v"]) < c.version]  # type: ignore[index]
    forms: list[Item] = []
    moves: list[tuple[Item | None, Document | None, Mapping[str, int]]] = []
    for c in batch:
        pk, sk = spec.stored_key(c.id)
        forms.append(stored(spec, c.doc, weights[c.id]) if c.doc is not None else _tombstone(pk, sk, c.version))
        moves.append((olds[c.id], c.doc, weights[c.id]))
    _move(spec, store, moves, known)
    return sum(store.put_newer(forms))


#: How long a removal's tombstone is kept, in seconds: DynamoDB Streams keep a record 24 hours
#: (DynamoDB Developer Guide, "Change data capture for DynamoDB Streams"), so no older change of
#: the document can arrive after that.
TOMBSTONE_SECONDS = 24 * 3600


def _tombstone(pk: str, sk: str, version: int) -> Item:
    """The stored form of a removed document: its version, and the time DynamoDB's TTL deletes it."""
    return {"pk": pk, "sk": sk, "v": version, "gone": True, "expiresAt": clock.epoch_seconds() + TOMBSTONE_SECONDS}


def _diff(spec: IndexSpec, moves: Sequence[tuple[Item | None, Document | None, Mapping[str, int]]]
          ) -> tuple[dict[Key, Item], set[Key], Counter[Key], Counter[tuple[str, str]]]:
    """The entries to put and delete, the counter changes that take the old forms to the new,
    and the vocabulary's part of them by ``(scope, term)``."""
    puts: dict[Key, Item] = {}
    deletes: set[Key] = set()
    counts: Counter[Key] = Counter()
    terms: Counter[tuple[str, str]] = Counter()
    for old_item, new_doc, weights in moves:
        old: dict[Key, Item] = {}
        if old_item is not None and not old_item.get("gone"):
            old_doc, old_weights = document_of(old_item)
            old = entries(spec, old_doc, old_weights)
            _count(spec, counts, terms, old_doc, old_weights, -1)
        new = entries(spec, new_doc, weights) if new_doc is not None else {}
        if new_doc is not None:
            _count(spec, counts, terms, new_doc, weights, +1)
        deletes.update(k for k in old if k not in new)
        puts.update({k: v for k, v in new.items() if old.get(k) != v})
    return puts, deletes, counts, terms


def _move(spec: IndexSpec, store: Store, moves: Sequence[tuple[Item | None, Document | None, Mapping[str, int]]],
          known: set[tuple[str, str]]) -> None:
    """Delete the entries the old forms had and the new ones lack, put the new ones, move the
    vocabulary and list sizes by the difference, and file the terms new to the vocabulary
    (``known``: the ``(scope, term)`` it held when the batch began) under their typo keys.

    Every count moves by ``ADD``, a term new to the vocabulary too: a put decided by the batch's
    read would lose the count of another shard's batch filing the same term in between."""
    puts, deletes, counts, terms = _diff(spec, moves)
    changed = [(k, n) for k, n in counts.items() if n]
    filed = {(scope, term) for (scope, term), n in terms.items() if n > 0 and (scope, term) not in known}
    added = store.write_and_add([*puts.values(), *_typo_items(spec, filed)], sorted(deletes - set(puts)), changed)
    values = dict(zip((k for k, _ in changed), added, strict=True))
    vocabulary = [(scope, term, n, values[spec.vocabulary_key(scope, term)]) for (scope, term), n in terms.items() if n]
    born = {(scope, term) for scope, term, n, value in vocabulary if value > 0 and value - n <= 0}
    store.write(_typo_items(spec, born - filed), [])
    _forget(spec, store, [(scope, term) for scope, term, n, _ in vocabulary if n < 0])


def _typo_items(spec: IndexSpec, terms: Iterable[tuple[str, str]]) -> list[Item]:
    """The typo-key items of ``terms`` (``(scope, term)``): one each, in its key's partition."""
    return [{"pk": pk, "sk": sk} for pk, sk in (_typo_item(spec, scope, term) for scope, term in sorted(terms))]


def _typo_item(spec: IndexSpec, scope: str, term: str) -> Key:
    key = analysis.typo_key(term)
    return spec.list_key(scope, f"d|{analysis.typo_partition(key)}"), f"{key}|{term}"


def _count(spec: IndexSpec, counts: Counter[Key], terms: Counter[tuple[str, str]], doc: Document,
           weights: Mapping[str, int], sign: int) -> None:
    for term in weights:
        counts[spec.vocabulary_key(doc.scope, term)] += sign
        terms[(doc.scope, term)] += sign
    for name in sorted_lists(spec, doc):
        for key in spec.size_keys(doc.scope, name):
            counts[key] += sign


def _forget(spec: IndexSpec, store: Store, vocabulary: Sequence[tuple[str, str]]) -> None:
    """Remove the terms whose list is empty from the vocabulary (``vocabulary``: the ``(scope,
    term)`` some document just stopped holding), with their typo keys. Decided by the list,
    not the count, so the vocabulary never keeps a term no document holds."""
    if not vocabulary:
        return
    slices, _ = store.read([Range(spec.list_key(scope, f"t|{term}"), limit=1) for scope, term in vocabulary], [])
    gone = [(scope, term) for (scope, term), found in zip(vocabulary, slices, strict=True) if not found.items]
    deletes = [spec.vocabulary_key(scope, term) for scope, term in gone]
    deletes += [_typo_item(spec, scope, term) for scope, term in gone]
    store.write([], deletes)
