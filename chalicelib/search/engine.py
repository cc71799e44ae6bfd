"""The read pipeline: typed query -> plan -> candidate lists -> exact check and score -> one collector.

A :class:`Query` (parsed once by the domain) is answered over the index of an
:class:`~chalicelib.search.index.IndexSpec` in steps; the reads of a step go out together
(:meth:`chalicelib.search.store.Store.read`), so the step count is the sequential round trips:

1. **Statistics and vocabulary** (one step): the sizes of the lists the plan may read, the
   document count of each scope and, for each query word, the vocabulary's terms it matches
   (:mod:`chalicelib.search.analysis`: its stem, the terms it starts, its typo reads), with
   their document counts (a typo candidate's count comes with the next step); in relevance
   order, the first block of each word's stem list too.
2. **Candidates**, by the order asked for, each a cheap approximation then an exact check
   (Lucene's ``TwoPhaseIterator``): a candidate list's entry carries the document's projection,
   so keyword, range and distance filters are checked on the entry; the entries that pass wait in
   a pool, and each step loads (the stored document and the domain's record) only those whose best
   possible key ranks within the page with the matches found (the exact key by age or distance; in
   relevance order, for each word the best entry read or the bound of the lists it was not read
   from, the Threshold Algorithm's upper bound), so a page loads about its own documents however
   large the blocks read; the loaded ones are checked whole:

   * **relevance**: every term a word matches has a list in impact order; the lists are read in
     blocks, all at once, and the top k is final when no unread entry can enter it: the
     threshold of the Threshold Algorithm (Fagin, Lotem & Naor, "Optimal aggregation
     algorithms for middleware", JCSS 2003), each list's bound being its next impact (block-max
     WAND's idea, Ding & Suel, SIGIR 2011);
   * **newest**: the list of the cheapest restriction (every document, a keyword, a range's
     buckets, or a word's terms), chosen from the list sizes, merged newest first;
   * **nearest**: squares of geohash cells around the centre, growing one cell at a time from
     the finest level whose cells may hold the page, until the k-th distance is within the
     distance of the cells not read.

3. **One collector** keeps the matches after the cursor in result order and yields the page,
   ``total`` with ``totalRelation`` and whether more follow.

The score is the quantized BM25F of :mod:`chalicelib.search.index`: for each word, its best
matching term's ``weight(kind) x idf x impact / 255`` (a completion's idf is that of the
word's most frequent stem or completion: :meth:`_Context.word_idf`), summed over the words; a typo
correction subtracts :data:`TYPO_PENALTY` per edit so that fewer corrections always rank first
(Meilisearch's ranking rules: words, typo, then relevance); ties newest first.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Literal

import pygeohash

from chalicelib.kernel.threads import ContextPool
from chalicelib.search import analysis, buckets, geo
from chalicelib.search.analysis import Kind, Word
from chalicelib.search.index import GEO_LEVELS, LEVELS, Document, IndexSpec, document_of, idf, impacts, projection, term_frequencies
from chalicelib.search.store import READ_PARALLEL, Item, Key, Range, Slice, Store

Order = Literal["relevance", "newest", "nearest"]
Direction = Literal["right", "left", "top", "bottom"]
#: Weight of a word's contribution by how it matched: an exact stem and a completion count fully
#: (FTS5 scores a prefix query as the word; ``teacher`` is as good an answer to ``teaching`` as
#: ``teaching``), a term the word may be still typing an ending of counts less.
WEIGHTS = {Kind.EXACT: 1.0, Kind.PREFIX: 1.0, Kind.UNFINISHED: 0.6, Kind.TYPO: 0.3, Kind.TYPO2: 0.3}
#: Subtracted from a document's score per correction (edit) of a word: larger than any score.
TYPO_PENALTY = 1000.0
#: Most entries one read of a list asks for.
MAX_BLOCK = 1000
#: Fewest entries one read of a list asks for (a read costs a call whatever it returns).
MIN_BLOCK = 5
#: With several words, each read takes an impact list this many times deeper: a document must hold
#: high impacts in every word's list before the threshold falls below the page, so the depth the
#: walk needs grows with the lists (bench/search_model.py, two common words). Quadrupling reaches it
#: in half the round trips of doubling and reads at most four times the entries it needs.
DEEPEN = 4
#: Standard normal quantile of the confidence with which a step's loads fill the page: a candidate
#: matches with probability ``rate``, so ``n`` of them hold a binomial count of matches, taken at its
#: mean less ``LOAD_Z`` standard deviations (the normal approximation; 1.28: 90 %). A load that falls
#: short costs a round trip for the few candidates missing.
LOAD_Z = 1.28
#: Radius (cells) of the largest square around the centre whose reach bounds the discs read at one
#: geohash level before the next coarser level: 7 x 7 cells, 5.4 times the 3 x 3 block, so a level
#: is left for one whose cells are 32 or 1,024 times larger only when 49 of its own cells hold less
#: than a page.
GEO_RINGS = 3
#: The lowest bucket exponent whose values a range takes as spread evenly (:func:`_overlap`): a
#: smaller bucket holds a few distinct values (levels, counts), which an even spread misjudges.
SPREAD_BUCKETS = 6
#: Most Queries step 1 sends before the typo keys' reads wait for the next step: the threads of a
#: step's reads (:data:`~chalicelib.search.store.READ_PARALLEL`); more would go out in two waves.
DEFER_ABOVE = READ_PARALLEL
#: The threads that load a step's records beside its reads.
_LOADERS = ContextPool(8, "search-load")
_INFINITY = float("inf")
#: Longest position (:attr:`Hit.key`) a page hands its cursor, in characters: the signed cursor that
#: holds it (JSON, base64url) stays within the API's 1,024 characters
#: (:data:`chalicelib.kernel.pagination.MAX_CURSOR_LENGTH`). A longer relevance position drops its
#: ceilings, then its statistics (:func:`_carrying`).
MAX_POSITION = 600

#: One statistic a relevance score reads (:meth:`_Context.slots`).
Slot = tuple[str, str | int]
#: The documents of the query's scopes (BM25's N).
_DOCUMENTS: Slot = ("n", "")


@dataclass(frozen=True)
class NumberRange:
    """``low <= number(name) <= high`` (``None``: open)."""

    name: str
    low: Decimal | None = None
    high: Decimal | None = None

    def holds(self, value: Decimal | None) -> bool:
        """Whether ``value`` lies in the range."""
        return value is not None and (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


@dataclass(frozen=True)
class Near:
    """A centre (degrees) and an optional radius (km)."""

    lat: float
    lng: float
    radius_km: float | None = None


@dataclass(frozen=True)
class Query:
    """A typed query: ``scopes`` searched, folded ``words`` (every one must match), ``keywords``
    (name, value; every one must be held), number ``ranges``, ``near`` (distance and radius)
    and the ``order`` of the results."""

    scopes: tuple[str, ...]
    words: tuple[str, ...] = ()
    keywords: tuple[tuple[str, str], ...] = ()
    ranges: tuple[NumberRange, ...] = ()
    near: Near | None = None
    order: Order = "newest"


@dataclass(frozen=True)
class Hit:
    """One result: the domain's ``record``, its ``score`` (relevance) or ``distance_km``
    (nearest), and ``key``, its position in the result order (a cursor continues after it)."""

    id: str
    record: Mapping[str, Any]
    score: float | None
    distance_km: float | None
    key: str


@dataclass(frozen=True)
class Result:
    """A page: ``hits`` in order, ``total`` (exact when ``relation`` is ``eq``, else a lower
    bound) and whether ``more`` results follow."""

    hits: list[Hit]
    total: int
    relation: Literal["eq", "gte"]
    more: bool


class InvalidPosition(ValueError):
    """A cursor position that this order never issues."""


# ------------------------------------------------------------------ matching and scoring


@dataclass
class _Context:
    """What the steps of one search share."""

    spec: IndexSpec
    store: Store
    query: Query
    words: dict[str, tuple[Word, ...]]
    sizes: dict[tuple[str, str], int] = field(default_factory=dict)
    df: dict[tuple[str, str], int] = field(default_factory=dict)
    expansions: dict[tuple[str, int], dict[str, Kind]] = field(default_factory=dict)
    deferred: list[Range] = field(default_factory=list)
    wanted: list[Key] = field(default_factory=list)
    completions: dict[tuple[int, bool], tuple[tuple[int, int], float]] = field(default_factory=dict)
    steps: int = 0
    #: The statistics a cursor's earlier pages scored with (:meth:`held`); ``None``: the index's own.
    frozen: dict[Slot, int] | None = None

    def defers(self) -> bool:
        """Whether the reads of the typo keys wait for the walk's first step: in relevance order,
        when step 1 would send more Queries than :data:`DEFER_ABOVE` (each word in each scope: its
        stem list, its vocabulary range and the typo keys it reads, at most
        :data:`~chalicelib.search.analysis.TYPO_KEYS`: :func:`~chalicelib.search.analysis.typo_reads`)."""
        queries = sum(2 + len(analysis.typo_lookups(word)) * word.corrects
                      for words in self.words.values() for word in words)
        return self.query.order == "relevance" and queries > DEFER_ABOVE

    def pending(self, scope: str) -> bool:
        """Whether some typo corrections of ``scope``'s words are still unknown (deferred reads)."""
        return any(r.pk.split("|")[1] == scope for r in self.deferred)

    def count(self, scope: str, name: str) -> int:
        """The size of list ``name`` of ``scope`` (0 when unknown)."""
        return self.sizes.get((scope, name), 0)

    def word_idf(self, index: int, kind: Kind, term: str) -> float:
        """The idf with which query word ``index`` scores a ``term`` it matches as ``kind``: the term's
        own (:meth:`idf`) for the word's stem; for a completion (a prefix match) the idf of the most
        frequent of the word's stem and completions in the query's scopes, and for a typo correction
        that of the word's most frequent correction. The expansions of a word are one query, as
        Lucene's ``BlendedTermQuery`` blends them (each term scored with the highest document
        frequency among them; ``FuzzyQuery`` rewrites to it by default) and as SQLite FTS5 scores a
        prefix query (one phrase: one idf): a rare completion ("saili" of "sailing") or a rare
        correction (a made-up word one edit from "python") otherwise outweighs the word itself, the
        default behaviour that "tends to give higher scores to rare terms" (Lucene's documentation).
        Cached per word and kind of match, recomputed when a read adds a term or a count (a
        correction's count comes with the step after the one that found it, :func:`_waits`)."""
        if kind == Kind.EXACT:
            return self.idf(term)
        version = (len(self.df), sum(len(matched) for matched in self.expansions.values()))
        key = (index, bool(kind.edits))
        cached = self.completions.get(key)
        if cached is None or cached[0] != version:
            held = self.held(("e" if kind.edits else "c", index))
            cached = self.completions[key] = (version, idf(max(1, held), self.held(_DOCUMENTS)))
        return cached[1]

    def idf(self, term: str) -> float:
        """The idf of ``term`` over the query's scopes: the documents holding it and the documents,
        each summed over the scopes, so that scores of documents of different scopes compare (a
        word common in one category and rare in another weighs the same in both)."""
        return idf(max(1, self.held(("t", term))), self.held(_DOCUMENTS))

    def slots(self) -> list[Slot]:
        """The statistics relevance scores read, in an order the query alone fixes: the documents
        (``("n", "")``), each word's stem's document count (``("t", stem)``) and, for a word that
        completes or corrects, the count its completions or corrections score with (``("c", index)``,
        ``("e", index)``)."""
        slots: dict[Slot, None] = {_DOCUMENTS: None}
        for words in self.words.values():
            for index, word in enumerate(words):
                slots[("t", word.stem)] = None
                if word.completes:
                    slots[("c", index)] = None
                if word.corrects:
                    slots[("e", index)] = None
        return list(slots)

    def held(self, slot: Slot) -> int:
        """One statistic (:meth:`slots`), summed over the query's scopes: the cursor's
        (:attr:`frozen`) when it carries it, so that every page of a query scores with the counts
        of its first (the documents' scores, and so the order the cursor continues, stay those of
        the first page while documents join or leave: Elasticsearch's point in time keeps its
        statistics the same way); else the counts read. A completion's or correction's count is
        the largest of the word's terms of that kind (:meth:`word_idf`)."""
        if self.frozen is not None and slot in self.frozen:
            return self.frozen[slot]
        kind, which = slot
        scopes = self.query.scopes
        if kind == "n":
            return sum(self.count(scope, "a") for scope in scopes)
        if kind == "t":
            return sum(self.df.get((scope, str(which)), 0) for scope in scopes)
        return max((sum(self.df.get((scope, t), 0) for scope in scopes)
                    for (_, i), matched in self.expansions.items() if i == which
                    for t, how in matched.items() if bool(how.edits) == (kind == "e")), default=0)


def contribution(kind: Kind, term_idf: float, impact: int) -> float:
    """One word's score from one matching term (the same expression bounds a list)."""
    return WEIGHTS[kind] * term_idf * impact / LEVELS - TYPO_PENALTY * kind.edits


def _passes(query: Query, data: Mapping[str, Any]) -> float | None:
    """The projection check (keywords, ranges, radius): ``None`` when it fails, else the
    distance in km to the centre (0.0 without one)."""
    held = data.get("kw") or {}
    for name, value in query.keywords:
        if value not in (held.get(name) or ()):
            return None
    numbers = data.get("num") or {}
    for wanted in query.ranges:
        raw = numbers.get(wanted.name)
        if not wanted.holds(Decimal(str(raw)) if raw is not None else None):
            return None
    if query.near is None:
        return 0.0
    point = data.get("pt")
    if not point:
        return None
    distance = geo.haversine_km(query.near.lat, query.near.lng, float(point[0]), float(point[1]))
    return None if query.near.radius_km is not None and distance > query.near.radius_km else distance


def matches(spec: IndexSpec, query: Query, doc: Document, terms: Mapping[str, int] | None = None) -> float | None:
    """Whether ``doc`` is a result of ``query`` by the checks a search applies to every candidate
    (no store is read; the percolator's one test of a document against a stored query).

    ``doc`` passes when it lies in one of the query's scopes, its projection passes the keyword,
    range and radius checks, and each query word matches one of its terms
    (:func:`chalicelib.search.analysis.kind`: stem, prefix of the last word, or one typo).

    Parameters
    ----------
    spec:
        The index spec of the document kind (its analyzer language and text fields).
    query:
        The typed query.
    doc:
        The document, with its text.
    terms:
        Its term impacts (:func:`chalicelib.search.index.impacts`) when the caller tests it against
        many queries; computed from ``doc`` when ``None``.

    Returns
    -------
    float or None
        The great-circle distance in km from the query's centre (0.0 without one), or ``None``
        when ``doc`` is not a result.
    """
    if doc.scope not in query.scopes:
        return None
    distance = _passes(query, projection(doc))
    if distance is None or not query.words:
        return distance
    held = impacts(term_frequencies(spec, doc)) if terms is None else terms
    words = analysis.query_words(query.words, spec.language(doc.scope))
    return distance if all(analysis.best(word, held) for word in words) else None


def _waits(ctx: _Context, doc: Document, weights: Mapping[str, int]) -> list[Key] | None:
    """``None`` when ``doc``'s score can be computed now; else the vocabulary keys to read before
    it can (possibly none: a typo key's read is still deferred). A word it matches only through
    typo corrections scores with the idf of the word's most frequent correction in the query's
    scopes (:meth:`_Context.word_idf`), so every correction must be found and counted first."""
    keys: list[Key] = []
    for index, word in enumerate(ctx.words[doc.scope]):
        found = analysis.best(word, weights)
        if not found:
            return None  # a word it does not match: no score to wait for
        if not all(how.edits for _, how in found):
            continue
        if ctx.deferred:
            return keys
        keys += [ctx.spec.vocabulary_key(scope, t) for (scope, i), matched in ctx.expansions.items() if i == index
                 for t, how in matched.items() if how.edits and (scope, t) not in ctx.df]
    return keys or None


def score(ctx: _Context, doc: Document, weights: Mapping[str, int]) -> float | None:
    """The document's score, or ``None`` when a word matches none of its terms."""
    total = 0.0
    for index, word in enumerate(ctx.words[doc.scope]):
        best = None
        for term, how in analysis.best(word, weights):
            value = contribution(how, ctx.word_idf(index, how, term), weights[term])
            best = value if best is None or value > best else best
        if best is None:
            return None
        total += best
    return total


# ------------------------------------------------------------------ step 1: statistics and vocabulary


def _vocabulary_reads(ctx: _Context) -> tuple[list[Range], list[Key]]:
    """Step 1's reads of each word's terms: its stem and the beginnings it may complete by key, the
    starts it completes and its typo range as range reads of the sorted vocabulary (a start inside
    another is read once), and the typo keys under which the vocabulary files each term without its
    second and third letters (:func:`chalicelib.search.analysis.typo_reads`)."""
    ranges: list[Range] = []
    keys: list[Key] = []
    for scope, words in ctx.words.items():
        for word in words:
            keys += [ctx.spec.vocabulary_key(scope, t) for t in (word.stem, *analysis.prefixes_of(word))]
            starts = {word.stem, word.text} if word.completes else set()
            if word.corrects:
                starts.add(analysis.typo_reads(word.stem)[1])
                reads = [Range(ctx.spec.list_key(scope, f"d|{part}"), begins=begins, limit=MAX_BLOCK)
                         for part, begins in analysis.typo_lookups(word)]
                if ctx.defers():
                    ctx.deferred += reads
                else:
                    ranges += reads
            starts = {s for s in starts if not any(s != o and s.startswith(o) for o in starts)}
            ranges += [Range(ctx.spec.vocabulary_key(scope, s)[0], begins=s, limit=MAX_BLOCK) for s in sorted(starts)]
    return ranges, keys


def _prepare(ctx: _Context, counters: Iterable[tuple[str, str]], early: Sequence[Range] = ()) -> tuple[list[Key], list[Slice]]:
    """Step 1: list sizes, scope counts and each word's matching terms with their counts, with the
    ``early`` ranges of the plan read along; returns the vocabulary items of matching terms whose
    counts are still unknown, and the slices of ``early``."""
    ranges, keys = _vocabulary_reads(ctx)
    sizes = {ctx.spec.size_key(s, n): (s, n) for s, n in [*counters, *((s, "a") for s in ctx.query.scopes)]}
    slices, found = _read(ctx, [*ranges, *early], [*keys, *sizes])
    slices, read_early = slices[:len(ranges)], slices[len(ranges):]
    slices = _finish(ctx, ranges, slices)
    for (pk, sk), item in found.items():
        if (pk, sk) in sizes:
            ctx.sizes[sizes[(pk, sk)]] = int(item.get("n", 0))
        else:
            ctx.df[(pk.split("|")[1], sk)] = int(item.get("n", 0))
    pools: dict[str, set[str]] = {scope: {t for (sc, t) in ctx.df if sc == scope} for scope in ctx.words}
    for wanted, got in zip(ranges, slices, strict=True):
        scope = wanted.pk.split("|")[1]
        for item in got.items:
            pools[scope].add(analysis.typo_term(str(item["sk"])))
            if "n" in item:
                ctx.df[(scope, str(item["sk"]))] = int(item["n"])
    unknown: list[Key] = []
    for scope, words in ctx.words.items():
        for index, word in enumerate(words):
            matched = {t: k for t in pools[scope] if (k := analysis.kind(word, t)) is not None}
            ctx.expansions[(scope, index)] = matched
            unknown += [ctx.spec.vocabulary_key(scope, t) for t in matched if (scope, t) not in ctx.df]
    return unknown, read_early


def _read(ctx: _Context, ranges: Sequence[Range], keys: Sequence[Key]) -> tuple[list[Slice], dict[Key, Item]]:
    ctx.steps += 1
    return ctx.store.read(ranges, keys)


def _step(ctx: _Context, ranges: Sequence[Range], keys: Sequence[Key], load: Mapping[str, Mapping[str, Any]]
          ) -> tuple[list[Slice], dict[Key, Item], Mapping[str, Mapping[str, Any]]]:
    """One step: the ranges and keys from the store, with the stored documents and the
    domain's records of ``load`` (id -> entry; read in parallel with the store)."""
    if not ranges and not keys and not load:
        return [], {}, {}
    if not load:
        slices, found = _read(ctx, ranges, keys)
        return slices, found, {}
    records = _LOADERS.submit(ctx.spec.load, load)
    stored = [ctx.spec.stored_key(i) for i in load] if ctx.words else []
    slices, found = _read(ctx, ranges, [*keys, *stored])
    return slices, found, records.result()


def _walk(ctx: _Context, collector: _Collector, reads: Callable[[], list[Range]],
          absorb: Callable[[list[Range], list[Slice]], list[Item]], bound: Callable[[], tuple[Any, ...] | None],
          keys: Sequence[Key] = (), early: Sequence[Item] | None = None,
          likely: Callable[[Item], tuple[Any, ...] | None] | None = None, rate: float = 1.0) -> None:
    """Read blocks until the collector is done before ``bound``. Each step loads the candidates
    of the previous block and reads the next one, so a block costs one round trip, unless the
    candidates being loaded are expected to complete the page (``likely``: the key an entry's
    document will have at worst, ``None`` when unknown; ``rate``: the share of them expected to
    match; :meth:`_Collector.settles`): then the step
    only loads, and reads on only if the loads fell short (a document changed or gone).
    ``early``: the entries of a first block read with step 1 (absorbed already), loaded by the
    walk's first step."""
    first = early is None
    collector.add(collector.prefilter(early or []))
    limit: tuple[Any, ...] | None = None if first else bound()
    while True:
        fresh = collector.select()
        hold = not first and limit is not None and likely is not None and collector.settles(fresh, limit, likely, rate)
        ranges = reads() if (first or limit is not None) and not hold else []
        wanted, ctx.wanted = ctx.wanted, []
        slices, found, records = _step(ctx, ranges, [*keys, *wanted], {i: collector.entries[i] for i in fresh})
        ctx.df.update(_term_counts(ctx, found))
        ctx.df.update({(pk.split("|")[1], sk): 0 for pk, sk in wanted if (pk, sk) not in found})  # a term just removed
        collector.resolve(fresh, found, records)
        if (not first and collector.done_before(limit)) or (not ranges and not fresh and not hold and not collector.waiting):
            return
        first = False
        collector.add(collector.prefilter(absorb(list(ranges), slices)))
        keys, limit = (), bound()


def _term_counts(ctx: _Context, found: Mapping[Key, Item]) -> dict[tuple[str, str], int]:
    """The ``(scope, term)`` document counts among ``found``'s vocabulary items."""
    scoped = ((pk.split("|")[1], pk, sk, item) for (pk, sk), item in found.items())
    return {(scope, sk): int(item.get("n", 0)) for scope, pk, sk, item in scoped if (pk, sk) == ctx.spec.vocabulary_key(scope, sk)}


def _finish(ctx: _Context, ranges: Sequence[Range], slices: list[Slice]) -> list[Slice]:
    """Read the rest of every range that had more (vocabulary ranges are read whole)."""
    slices = list(slices)
    while True:
        open_ = [i for i, s in enumerate(slices) if s.more and s.items]
        if not open_:
            return slices
        more, _ = _read(ctx, [Range(ranges[i].pk, str(slices[i].items[-1]["sk"]), ranges[i].begins, MAX_BLOCK) for i in open_], [])
        for i, extra in zip(open_, more, strict=True):
            slices[i] = Slice(slices[i].items + extra.items, extra.more)


# ------------------------------------------------------------------ loading and the collector


@dataclass
class _Collector:
    """The matches found so far, kept in result order, after the cursor's position."""

    ctx: _Context
    need: int
    after: tuple[Any, ...] | None
    seen: set[str] = field(default_factory=set)
    entries: dict[str, Item] = field(default_factory=dict)
    matches: list[tuple[tuple[Any, ...], Hit]] = field(default_factory=list)
    waiting: dict[str, tuple[float, Item, Mapping[str, Any]]] = field(default_factory=dict)
    pool: dict[str, float] = field(default_factory=dict)
    heap: list[tuple[tuple[Any, ...], str]] = field(default_factory=list)
    best: Callable[[str], tuple[tuple[Any, ...], bool] | None] | None = None
    rate: float = 1.0
    loading: dict[str, float] = field(default_factory=dict)

    def prefilter(self, entries: Sequence[Item]) -> dict[str, float]:
        """The ids of the new ``entries`` that pass the projection check, with their distances."""
        fresh: dict[str, float] = {}
        for entry in entries:
            doc_id = str(entry["id"])
            if doc_id in self.seen:
                continue
            self.seen.add(doc_id)
            distance = _passes(self.ctx.query, entry)
            if distance is not None:
                fresh[doc_id] = distance
                self.entries[doc_id] = entry
        return fresh

    def best_key(self, doc_id: str) -> tuple[tuple[Any, ...], bool] | None:
        """The best key candidate ``doc_id`` may have once loaded and whether it is its key (``None``:
        it cannot match): its exact key by age or distance, a bound of it in relevance order (:attr:`best`)."""
        if self.best is not None:
            return self.best(doc_id)
        return _key(self.ctx.query.order, 0.0, self.pool.get(doc_id, 0.0), str(self.entries[doc_id]["age"])), True

    def add(self, fresh: Mapping[str, float]) -> None:
        """Pool the ``fresh`` candidates (id -> distance), each in :attr:`heap` at its best key now;
        one that cannot match (:meth:`best_key` ``None``, which stays so) is dropped."""
        for doc_id, distance in fresh.items():
            self.pool[doc_id] = distance
            best = self.best_key(doc_id)
            if best is None:
                del self.pool[doc_id]
            else:
                heapq.heappush(self.heap, (best[0], doc_id))

    def rekey(self) -> None:
        """Key every pooled candidate afresh (when a key may have improved, :meth:`_top`)."""
        keyed = [(doc_id, self.best_key(doc_id)) for doc_id in list(self.pool)]
        self.heap = [(best[0], doc_id) for doc_id, best in keyed if best is not None]
        heapq.heapify(self.heap)
        for doc_id, best in keyed:
            if best is None:
                del self.pool[doc_id]

    def _top(self) -> tuple[tuple[Any, ...], str] | None:
        """The pooled candidate with the best key, as ``(key, id)``, or ``None`` when none is left.

        A key by age or distance never changes; in relevance order a candidate's best key only
        worsens as the walk reads on (a list's bound falls with each block, an idf falls as its
        count arrives, a sighting replaces a bound by an impact below it), so every key in the
        heap is at most its candidate's current key. The top is re-keyed until its current key
        still precedes the next one's in the heap: then it precedes every current key (lazy
        evaluation; no step re-sorts the pool). A candidate that cannot match, or whose exact key
        does not follow the cursor (an earlier page's), leaves the pool."""
        while self.heap:
            key, doc_id = self.heap[0]
            best = (key, True) if self.best is None else self.best(doc_id)
            if best is None or (best[1] and self.after is not None and best[0] <= self.after):
                heapq.heappop(self.heap)
                del self.pool[doc_id]
                continue
            if best[0] != key:
                heapq.heapreplace(self.heap, (best[0], doc_id))
                if self.heap[0][1] != doc_id:
                    continue
            return best[0], doc_id
        return None

    def select(self) -> dict[str, float]:
        """The pooled candidates to load now, taken from the pool in order of best key until, with the
        matches before them, they fill :attr:`need` with 90 % confidence (:data:`LOAD_Z`; each
        matches with probability :attr:`rate`, below 1 when words must still match; 0 loads every
        candidate that may enter the page), so a page loads about its own documents however many
        candidates the lists' blocks brought (the rest wait and bound the walk,
        :meth:`done_before`); once the matches hold a page, every candidate that may still enter it."""
        keys = [key for key, _ in self.matches]
        chosen: dict[str, float] = {}
        expected = spread = 0.0  # the mean and variance of the chosen candidates' matches (a binomial)
        while (top := self._top()) is not None:
            # With a page found, every candidate that could still enter it is loaded (it would hold the walk open).
            confident = expected - LOAD_Z * math.sqrt(spread)
            if bisect.bisect_left(keys, top[0]) + (confident if len(keys) < self.need else 0) >= self.need:
                break
            heapq.heappop(self.heap)
            chosen[top[1]] = self.pool.pop(top[1])
            expected += self.rate
            spread += self.rate * (1 - self.rate)
        self.loading = chosen
        return chosen

    def holds_more(self) -> bool:
        """Whether a pooled candidate may still match after the cursor (never loaded: a page before
        it was full). Stops at the first one: only ``totalRelation`` asks, and it needs no count."""
        keys = (best[0] for doc_id in self.pool if (best := self.best_key(doc_id)) is not None)
        return any(self.after is None or key > self.after for key in keys)

    def resolve(self, fresh: Mapping[str, float], stored: Mapping[Key, Item], records: Mapping[str, Mapping[str, Any]]) -> None:
        """Check the loaded documents of ``fresh`` whole and keep the matches after the cursor. In
        relevance order a document that matches a word only through typo corrections whose counts
        were not read waits for them (requested for the next step; its score needs their idf)."""
        waiting, self.waiting = self.waiting, {}
        loaded: list[tuple[str, float, Item | None, Mapping[str, Any] | None]] = [
            (doc_id, distance, item, record) for doc_id, (distance, item, record) in waiting.items()]
        for doc_id, distance in fresh.items():
            # Without words the entry's projection decides; with words the stored document does.
            item = stored.get(self.ctx.spec.stored_key(doc_id)) if self.ctx.words else {"v": 0, **self.entries[doc_id]}
            loaded.append((doc_id, distance, item, records.get(doc_id)))
        for doc_id, distance, item, record in loaded:
            if item is None or record is None or item.get("gone") or _passes(self.ctx.query, item) is None:
                continue
            # Only a relevance score needs every idf; in the other orders the words just have to match.
            waits = _waits(self.ctx, *document_of(item)) if self.ctx.words and self.ctx.query.order == "relevance" else None
            if waits is not None:
                self.waiting[doc_id] = (distance, item, record)
                self.ctx.wanted += waits
                continue
            value = score(self.ctx, *document_of(item)) if self.ctx.words else 0.0
            if value is None:
                continue
            key = _key(self.ctx.query.order, value, distance, str(item["age"]))
            if self.after is not None and key <= self.after:
                continue
            shown = value % TYPO_PENALTY if self.ctx.query.order == "relevance" else None  # the BM25F part
            near = distance if self.ctx.query.near is not None else None
            self.matches.append((key, Hit(doc_id, record, shown, near, _position(key))))
        self.matches.sort(key=lambda m: m[0])

    def _likely_keys(self, ids: Iterable[str], likely: Callable[[Item], tuple[Any, ...] | None]) -> list[tuple[Any, ...]]:
        """The ``likely`` keys of the candidates ``ids`` (the key each one's document has at worst)
        that follow the cursor; a candidate without one is left out."""
        keys = (likely(self.entries[doc_id]) for doc_id in ids)
        return [key for key in keys if key is not None and (self.after is None or key > self.after)]

    def settles(self, fresh: Mapping[str, float], bound: tuple[Any, ...],
                likely: Callable[[Item], tuple[Any, ...] | None], rate: float = 1.0) -> bool:
        """Whether the matches before ``bound`` with the ``fresh`` candidates expected there (their
        ``likely`` keys; a share ``rate`` of them matching) make a page (a hint: the loads decide)."""
        found = sum(1 for key, _ in self.matches if key < bound)
        ahead = sum(1 for key in self._likely_keys(fresh, likely) if key < bound)
        return found + ahead * rate >= self.need

    def last_at_worst(self, likely: Callable[[Item], tuple[Any, ...] | None] | None) -> tuple[Any, ...] | None:
        """The key the page's last document has at worst: the :attr:`need`-th of the matches' keys
        and the ``likely`` keys (:meth:`settles`) of the candidates being loaded (:meth:`select`), or
        ``None`` while they hold less than a page."""
        keys = [key for key, _ in self.matches] + (self._likely_keys(self.loading, likely) if likely is not None else [])
        return sorted(keys)[self.need - 1] if len(keys) >= self.need else None

    def full_without_corrections(self) -> bool:
        """Whether the ``need`` first matches score without a typo correction (relevance order):
        then no document matching a word only through one can enter the page."""
        return len(self.matches) >= self.need and not _corrected(self.matches[self.need - 1][0])

    def done_before(self, bound: tuple[Any, ...] | None) -> bool:
        """True when the ``need``-th match precedes ``bound`` (the best key an unread candidate
        may have; ``None``: none remains) and no waiting document (one matching a word only
        through corrections, :func:`_waits`) can enter the page."""
        if self.waiting and not self.full_without_corrections():
            return False
        top = self._top()
        if top is not None:  # a candidate not loaded yet bounds what follows like an unread entry
            bound = top[0] if bound is None else min(bound, top[0])
        if bound is None:
            return True
        return len(self.matches) >= self.need and self.matches[self.need - 1][0] < bound


def _key(order: Order, value: float, distance: float, age: str) -> tuple[Any, ...]:
    if order == "relevance":
        return (-value, age)
    if order == "nearest":
        return (distance, age)
    return (age,)


def _position(key: tuple[Any, ...], ceilings: Sequence[int] | None = None, statistics: Sequence[int] | None = None) -> str:
    """The key as text. In relevance order marks may follow the score, each after ``~``: ``n`` and
    the statistics the page scored with (:meth:`_Context.slots`, decimal, ``.`` between), so the next
    page scores with them; ``c`` and the stem lists' ceilings (:func:`_stem_ceilings`, two hex
    digits each: :data:`~chalicelib.search.index.LEVELS` is 255), so its first step reads them from there."""
    text = "|".join(repr(part) if isinstance(part, float) else str(part) for part in key)
    if ceilings is None and statistics is None:
        return text
    score, rest = text.split("|", 1)
    marks = ([f"n{'.'.join(map(str, statistics))}"] if statistics is not None else []) + (
        [f"c{bytes(ceilings).hex()}"] if ceilings is not None else [])
    return "~".join([score, *marks]) + f"|{rest}"


def _carrying(key: tuple[Any, ...], ceilings: Sequence[int], statistics: Sequence[int]) -> str:
    """A relevance position with its ceilings and statistics, within :data:`MAX_POSITION`: a query
    of very many words drops the ceilings (its next page reads every list from the top: more reads,
    the same hits), then the statistics (its next page scores with the index's own counts)."""
    for carried in ((ceilings, statistics), (None, statistics)):
        text = _position(key, *carried)
        if len(text) <= MAX_POSITION:
            return text
    return _position(key)


@dataclass(frozen=True)
class CursorPosition:
    """A cursor's position parsed (:func:`parse_position`): the collector's ``key`` and, in
    relevance order, the stem lists' ``ceilings`` and the ``statistics`` it carries (``None``: none)."""

    key: tuple[Any, ...]
    ceilings: tuple[int, ...] | None = None
    statistics: tuple[int, ...] | None = None


def parse_position(order: Order, text: str) -> CursorPosition:
    """A cursor position (:attr:`Hit.key`) back as the collector's key with what it carries
    (:func:`_position`; a position of decimal ceilings without a mark is read too).

    Raises
    ------
    InvalidPosition
        ``text`` is not a position of ``order``.
    """
    try:
        if order == "newest":
            if "|" not in text:
                raise ValueError(text)
            return CursorPosition((text,))
        head, rest = text.split("|", 1)
        score, *marks = head.split("~")
        carried: dict[str, tuple[int, ...]] = {}
        for mark in marks:
            if mark[:1] == "n":
                carried["n"] = tuple(int(n) for n in mark[1:].split("."))
            elif mark[:1] == "c":
                carried["c"] = tuple(bytes.fromhex(mark[1:]))
            else:  # decimal ceilings, ``.`` between
                carried["c"] = tuple(int(c) for c in mark.split(".") if c)
        if len(carried) != len(marks) or not all(0 <= c <= LEVELS for c in carried.get("c", ())) or any(
                n < 0 for n in carried.get("n", ())):
            raise ValueError(text)
        return CursorPosition((float(score), rest), carried.get("c"), carried.get("n"))
    except (ValueError, IndexError) as exc:
        raise InvalidPosition(text) from exc


# ------------------------------------------------------------------ relevance: the threshold algorithm


@dataclass
class _List:
    """One list being read: its buffered position and the scoring of its entries."""

    pk: str
    scope: str
    word: int
    kind: Kind
    term: str
    last: str | None = None
    head: Item | None = None
    read: int = 0
    ceiling: int = LEVELS
    done: bool = False

    def bound(self, ctx: _Context) -> float | None:
        """The best contribution an unread entry can bring (``None``: none left); before the first
        read, that of the ``ceiling`` impact (the highest one a cursor's page may still hold)."""
        if self.done:
            return None
        impact = self.ceiling if self.head is None else int(self.head["imp"])
        return contribution(self.kind, ctx.word_idf(self.word, self.kind, self.term), impact)


def _floors(ctx: _Context) -> dict[tuple[str, int], float]:
    """The lowest contribution of each ``(scope, word)``: its weakest term at impact 1."""
    floors: dict[tuple[str, int], float] = {}
    for (scope, index), matched in ctx.expansions.items():
        for term, how in matched.items():
            low = contribution(how, ctx.word_idf(index, how, term), 1)
            floors[(scope, index)] = min(low, floors.get((scope, index), low))
        if ctx.pending(scope) and ctx.words[scope][index].corrects:  # a correction not known yet
            floors[(scope, index)] = min(-TYPO_PENALTY, floors.get((scope, index), 0.0))  # one edit: a key's term
    return floors


def _ceiling(ctx: _Context, floors: Mapping[tuple[str, int], float], scope: str, word: int, kind: Kind, term: str,
             after: float) -> int:
    """The highest impact of ``term``'s list (word ``word`` of ``scope``) whose entries may follow a
    cursor at score ``after``: a document in the list scores at least the entry's contribution
    plus, for every other word of its scope, that word's floor (:func:`_floors`), so an entry whose
    sum exceeds ``after`` (beyond a float's rounding) was on an earlier page."""
    others = sum(low for (sc, index), low in floors.items() if sc == scope and index != word)
    limit = after + 1e-9 * max(1.0, abs(after))
    term_idf = ctx.word_idf(word, kind, term)
    return next((i for i in range(LEVELS, 0, -1) if contribution(kind, term_idf, i) + others <= limit), 0)


def _start(ceiling: int) -> str | None:
    """The exclusive start of an impact list's read below ``ceiling`` ("}" sorts after "|")."""
    return None if ceiling >= LEVELS else f"{LEVELS - ceiling - 1:03d}}}"


def _resume(ctx: _Context, lists: Sequence[_List], after: float) -> None:
    """Start each list at its ceiling for the cursor's score ``after`` (:func:`_ceiling`), so a
    later page reads what the earlier ones left."""
    floors = _floors(ctx)
    for lst in lists:
        lst.ceiling = _ceiling(ctx, floors, lst.scope, lst.word, lst.kind, lst.term, after)
        lst.done, lst.last = lst.ceiling == 0, _start(lst.ceiling)


def _stem_ceilings(ctx: _Context, value: float) -> list[int]:
    """Each stem list's (:func:`_stem_lists`) ceiling for a cursor at score ``value``
    (:data:`~chalicelib.search.index.LEVELS` for a stem the vocabulary lacks)."""
    floors, out = _floors(ctx), []
    for _, scope, index, stem in _stem_keys(ctx):
        how = ctx.expansions.get((scope, index), {}).get(stem)
        out.append(LEVELS if how is None else _ceiling(ctx, floors, scope, index, how, stem, value))
    return out


def _open(ctx: _Context, lists: Sequence[_List], collector: _Collector,
          likely: Callable[[Item], tuple[Any, ...] | None] | None) -> list[_List]:
    """The lists worth reading next: every one not read to its end until the matches and the
    candidates being loaded hold a page (:meth:`_Collector.last_at_worst`); then those whose bound,
    with the best bound of each other word of its scope, reaches the page's last score at worst
    (an unseen document found through any other list scores below it). The threshold still
    decides the end, so this only saves reads."""
    unread = [lst for lst in lists if not lst.done]
    worst = collector.last_at_worst(likely)
    if worst is None:
        return unread
    last = -worst[0]
    best: dict[tuple[str, int], float] = {}
    for lst in unread:
        bound = lst.bound(ctx) or 0.0  # not None: the list is not done
        best[(lst.scope, lst.word)] = max(bound, best.get((lst.scope, lst.word), bound))
    wanted = []
    for lst in unread:
        others = [best.get((lst.scope, word)) for word in range(len(ctx.words[lst.scope])) if word != lst.word]
        if None not in others and best[(lst.scope, lst.word)] + sum(o or 0.0 for o in others) >= last:
            wanted.append(lst)
    return wanted


def _threshold(ctx: _Context, lists: Sequence[_List]) -> tuple[Any, ...] | None:
    """The best key a document not read yet can have, or ``None`` when none can match. A document
    scoring a scope's best total holds, in each word, that word's best bound in a list whose bound
    it is, after the list's head (the entries of one impact lie newest first): it is no newer than
    the newest such head of any word, which is the key's age."""
    best: tuple[Any, ...] | None = None
    for scope, words in ctx.words.items():
        total, age = 0.0, ""
        for index in range(len(words)):
            bounds = [(b, str(lst.head["age"]) if lst.head is not None else "")
                      for lst in lists if lst.scope == scope and lst.word == index if (b := lst.bound(ctx)) is not None]
            if ctx.pending(scope):  # a correction not known yet: at most the best idf's, at the top impact
                bounds.append((contribution(Kind.TYPO, ctx.idf(""), LEVELS), ""))
            if not bounds:
                break
            top = max(b for b, _ in bounds)
            total += top
            age = max(age, min(a for b, a in bounds if b == top))
        else:
            best = min(best, (-total, age)) if best is not None else (-total, age)
    return best


def _list_block(ctx: _Context, lists: Sequence[_List], lst: _List, need: int, round_: int) -> int:
    """Entries of ``lst``'s next read: its share (by document count) of the word's lists of every
    scope, of ``1.25 x need x words / passing`` entries (:func:`_passing`) doubled each round,
    less what it read already; with several words at least enough to take the list :data:`DEEPEN`
    times deeper."""
    sizes = [max(1, ctx.df.get((other.scope, other.term), 1)) for other in lists if other.word == lst.word]
    share = max(1, ctx.df.get((lst.scope, lst.term), 1)) / sum(sizes)
    words = max(1, len(ctx.words[lst.scope]))
    target = math.ceil(1.25 * need * words * share * (1 << round_) / _passing(ctx)) + 1
    deeper = (DEEPEN - 1) * lst.read if words > 1 else 0
    return min(MAX_BLOCK, max(MIN_BLOCK, target - lst.read, deeper))


def _first_block(ctx: _Context, need: int) -> int:
    """Entries of an impact list's first read. Several words need deeper reads before the threshold
    falls (an unseen document must beat the sum of every word's bound): it grows with the words."""
    return min(MAX_BLOCK, max(10, need + 1) * max(1, len(next(iter(ctx.words.values())))))


def _stem_keys(ctx: _Context) -> list[tuple[str, str, int, str]]:
    """Each word's stem list in each scope, once: ``(pk, scope, word, stem)``."""
    keys: dict[str, tuple[str, str, int, str]] = {}
    for scope, words in ctx.words.items():
        for index, word in enumerate(words):
            pk = ctx.spec.list_key(scope, f"t|{word.stem}")
            keys.setdefault(pk, (pk, scope, index, word.stem))
    return list(keys.values())


def _stem_lists(ctx: _Context, need: int, ceilings: Sequence[int] | None) -> list[Range]:
    """The first block of each word's stem list in each scope: read with step 1 (a list's key needs
    no vocabulary), so a word that matches its stem alone is answered in two steps. After a cursor
    each starts at the ceiling the cursor carries (none without them)."""
    keys = _stem_keys(ctx)
    if ceilings is None:
        return [Range(pk, limit=_first_block(ctx, need)) for pk, *_ in keys]
    if len(ceilings) != len(keys):
        return []
    return [Range(pk, _start(c), limit=_first_block(ctx, need)) for (pk, *_), c in zip(keys, ceilings, strict=True) if c > 0]


def _relevance(ctx: _Context, collector: _Collector, unknown: Sequence[Key], early: Sequence[Range],
               read: Sequence[Slice]) -> bool:
    """Walk the impact lists until the threshold; returns whether every list was read to its end.
    ``unknown``: vocabulary counts still to read (they come with the first block); ``early`` and
    ``read``: the stem lists' first blocks, read with step 1. After a cursor every list starts at
    its ceiling (:func:`_resume`); a first block read from a higher one (the cursor's, while the
    counts moved) is kept, one read from a lower one is read again. A term that two words match
    has a list for each (read twice: each word keeps its own position and bound)."""
    lists = [_List(ctx.spec.list_key(scope, f"t|{term}"), scope, index, how, term)
             for (scope, index), matched in ctx.expansions.items() for term, how in sorted(matched.items())]
    if collector.after is not None and not unknown:  # the ceilings need every term's idf
        _resume(ctx, lists, -float(collector.after[0]))
    rounds = [0]
    reading: list[_List] = []
    sent: list[Range] = []
    sightings: dict[str, dict[tuple[str, int], int]] = {}
    collector.best = functools.partial(_best_key, ctx, lists, sightings, collector.entries)
    # Several words: every candidate that may enter the page is loaded at once (the random access of
    # the Threshold Algorithm): loading fewer would leave most of them waiting on the other words'
    # lists and cost a round trip per block.
    collector.rate = 1.0 if all(len(w) == 1 for w in ctx.words.values()) else 0.0
    likely = _likely_score(ctx, lists)

    def reads() -> list[Range]:
        reading[:] = _open(ctx, lists, collector, likely)
        sent[:] = ctx.deferred if _corrections_due(ctx, lists, collector) else []
        wanted = [Range(lst.pk, lst.last, limit=_list_block(ctx, lists, lst, collector.need, rounds[0])) for lst in reading]
        rounds[0] += 1
        return [*sent, *wanted]

    def absorb(_: list[Range], slices: list[Slice]) -> list[Item]:
        if not slices:  # no read: nothing to absorb
            return []
        found = _discover(ctx, sent, slices[:len(sent)])
        lists.extend(found)
        if any(not lst.kind.edits for lst in found):
            # A correction's list bounds no more than the unknown corrections' bound it replaces; a term
            # matched otherwise (a vocabulary read mid-indexing) may raise a pooled candidate's key.
            collector.rekey()
        entries: list[Item] = []
        for lst, got in zip(reading, slices[len(sent):], strict=True):
            for item in got.items:
                sightings.setdefault(str(item["id"]), {})[(lst.pk, lst.word)] = int(item["imp"])
            entries += got.items
            lst.read += len(got.items)
            lst.done = not got.more or not got.items
            lst.last = str(got.items[-1]["sk"]) if got.items else lst.last
            lst.head = got.items[-1] if got.items else None
        return entries

    # A stem list of the vocabulary starts read; one the vocabulary lacks is left (an indexing in flight).
    kept = [(lst, got) for wanted, got in zip(early, read, strict=True) for lst in lists
            if lst.pk == wanted.pk and not lst.done and (wanted.after or "") <= (lst.last or "")]
    reading[:], sent[:] = [lst for lst, _ in kept], []
    entries = absorb([], [got for _, got in kept]) if kept else []
    _walk(ctx, collector, reads, absorb, lambda: _threshold(ctx, lists), unknown, entries, likely)
    return not ctx.deferred and all(lst.done for lst in lists)


def _corrections_due(ctx: _Context, lists: Sequence[_List], collector: _Collector) -> bool:
    """Whether the deferred typo keys are read in the next step: when a document matching a word only
    through a correction may still enter the page, i.e. the page does not hold :attr:`_Collector.need`
    matches free of corrections and no unread entry can bring one (the threshold is in a typo tier:
    every word's own lists are read past what scores above a correction). A page of common words
    is then answered without the typo keys' reads."""
    if not ctx.deferred or collector.full_without_corrections():
        return False
    threshold = _threshold(ctx, lists)
    return threshold is None or _corrected(threshold)


def _corrected(key: tuple[Any, ...]) -> bool:
    """Whether a relevance key is in a typo tier: each correction costs :data:`TYPO_PENALTY`, more
    than every word's best contribution together, so a corrected score is negative."""
    return -float(key[0]) < 0


def _best_key(ctx: _Context, lists: Sequence[_List], sightings: Mapping[str, Mapping[tuple[str, int], int]],
              entries: Mapping[str, Item], doc_id: str) -> tuple[tuple[Any, ...], bool] | None:
    """The best key a candidate may have and whether it is its key: for each word of its scope, the
    best of its entries read (``sightings``: ``(list pk, word) -> impact``) and of the bounds of the
    word's lists it was not read from (an unread correction's too, as :func:`_threshold`), exact when
    an entry read is the best of them; ``None`` when a word can no longer match. Each word's value
    is :func:`score`'s expression, summed in its order: a document that scores the bound has this
    very key."""
    seen = sightings.get(doc_id, {})
    scopes = {lst.scope for lst in lists if (lst.pk, lst.word) in seen}
    if len(scopes) != 1:
        return None
    scope = scopes.pop()
    total, exact = 0.0, True
    for index in range(len(ctx.words[scope])):
        read = [contribution(lst.kind, ctx.word_idf(lst.word, lst.kind, lst.term), seen[(lst.pk, lst.word)])
                for lst in lists if lst.scope == scope and lst.word == index and (lst.pk, lst.word) in seen]
        bounds = [b for lst in lists if lst.scope == scope and lst.word == index and (lst.pk, lst.word) not in seen
                  if (b := lst.bound(ctx)) is not None]
        if ctx.pending(scope):
            bounds.append(contribution(Kind.TYPO, ctx.idf(""), LEVELS))
        if not read and not bounds:
            return None
        value = max(read + bounds)
        exact = exact and bool(read) and value == max(read)  # no unread entry of the word can do better
        total += value
    return (-total, str(entries[doc_id]["age"])), exact


def _discover(ctx: _Context, sent: Sequence[Range], slices: Sequence[Slice]) -> list[_List]:
    """The lists of the typo corrections the deferred typo keys' reads (``sent``) name: added to the
    words' expansions, their counts requested for the next step; a key with more terms than one
    read stays deferred from where it stopped."""
    found: list[_List] = []
    if not sent:
        return found
    ctx.deferred = [Range(r.pk, str(got.items[-1]["sk"]), r.begins, MAX_BLOCK) for r, got in zip(sent, slices, strict=True)
                    if got.more and got.items]
    for wanted, got in zip(sent, slices, strict=True):
        scope = wanted.pk.split("|")[1]
        for term in (analysis.typo_term(str(item["sk"])) for item in got.items):
            for index, word in enumerate(ctx.words[scope]):
                matched = ctx.expansions.setdefault((scope, index), {})
                how = analysis.kind(word, term)
                if how is None or term in matched:
                    continue
                matched[term] = how
                found.append(_List(ctx.spec.list_key(scope, f"t|{term}"), scope, index, how, term))
                if (scope, term) not in ctx.df:
                    ctx.wanted.append(ctx.spec.vocabulary_key(scope, term))
    return found


def _likely_score(ctx: _Context, lists: Sequence[_List]) -> Callable[[Item], tuple[Any, ...] | None] | None:
    """With one word, an entry's document scores at least the entry's contribution: its key at
    worst (for :meth:`_Collector.settles`); ``None`` with more words (the others may not match)."""
    if any(len(words) != 1 for words in ctx.words.values()):
        return None
    by_pk = {lst.pk: lst for lst in lists}

    def likely(entry: Item) -> tuple[Any, ...] | None:
        lst = by_pk.get(str(entry.get("pk", "")))
        if lst is None:
            return None
        return (-contribution(lst.kind, ctx.word_idf(lst.word, lst.kind, lst.term), int(entry["imp"])), str(entry["age"]))
    return likely


# ------------------------------------------------------------------ newest first: the cheapest driver


@dataclass
class _Driver:
    """A union of newest-first lists (or impact lists read whole, ``whole``), its size and each
    list's (``sizes``: pk -> entries, from the counters)."""

    pks: list[str]
    size: int
    whole: bool = False
    sizes: dict[str, int] = field(default_factory=dict)
    held: int | None = None

    @property
    def matches(self) -> int:
        """The documents it holds at least (a word's terms' lists overlap: the largest of each scope)."""
        return self.size if self.held is None else self.held

    def share(self, pk: str, entries: int) -> int:
        """The entries of list ``pk`` in a read of ``entries`` from the union: in proportion to its
        size (lists of a union hold entries of the same ages alike), at least :data:`MIN_BLOCK`."""
        if self.whole or not self.size:
            return entries
        return min(MAX_BLOCK, max(MIN_BLOCK, math.ceil(entries * self.sizes.get(pk, 0) / self.size) + 1))


def _drivers(ctx: _Context) -> list[_Driver]:
    """Every newest-first driver of the query. A list whose counter says it is empty is not read
    (as a geo cell's): an open number range spans dozens of buckets, most of them empty."""
    query, out = ctx.query, []

    def lists(names: Sequence[str]) -> _Driver:
        sized = {ctx.spec.list_key(s, n): ctx.count(s, n) for s in query.scopes for n in names}
        return _Driver([pk for pk, size in sized.items() if size > 0], sum(sized.values()), sizes=sized)

    out.append(lists(["a"]))
    out += [lists([f"k|{name}={value}"]) for name, value in query.keywords if name not in ctx.spec.unlisted]
    for wanted in query.ranges:
        driver = lists([f"n|{wanted.name}|{b}" for b in _cover(wanted)])
        driver.held = math.ceil(sum(ctx.count(s, f"n|{wanted.name}|{b}") * _overlap(wanted, b)
                                    for s in query.scopes for b in _cover(wanted)))
        out.append(driver)
    for index in range(max((len(w) for w in ctx.words.values()), default=0)):
        terms = [(s, t) for (s, i), m in ctx.expansions.items() if i == index for t in m]
        held = sum(max((ctx.df.get((s, t), 1) for t in m), default=0) for (s, i), m in ctx.expansions.items() if i == index)
        out.append(_Driver([ctx.spec.list_key(s, f"t|{t}") for s, t in terms],
                           sum(max(1, ctx.df.get((s, t), 1)) for s, t in terms), whole=True, held=held))
    return out


def _overlap(wanted: NumberRange, label: str) -> float:
    """The share of bucket ``label``'s span that the range covers (values taken as spread evenly
    in a bucket; 1 for the buckets without a finite span)."""
    if not label.startswith("p") or label in ("p00", f"p{buckets.TOP:02d}") or int(label[1:]) < SPREAD_BUCKETS:
        return 1.0
    low, high = Decimal(2) ** int(label[1:]), Decimal(2) ** (int(label[1:]) + 1)
    start = max(low, wanted.low) if wanted.low is not None else low
    end = min(high, wanted.high) if wanted.high is not None else high
    return max(0.0, min(1.0, float((end - start) / (high - low))))


def _passing(ctx: _Context) -> float:
    """The share of documents expected to pass the keyword and range filters (their lists' sizes
    taken as independent; at least 1 %)."""
    drivers = _drivers(ctx)
    total = max(1, drivers[0].size)
    return max(0.01, math.prod(min(1.0, d.matches / total) for d in drivers[1:] if not d.whole))


def _cover(wanted: NumberRange) -> list[str]:
    """The number buckets that may hold values of the range (ascending)."""
    labels = list(buckets.ALL)
    low = labels.index(buckets.bucket_of(wanted.low)) if wanted.low is not None else 0
    high = labels.index(buckets.bucket_of(wanted.high)) if wanted.high is not None else len(labels) - 1
    return labels[low:high + 1]


def _cost(driver: _Driver, matches: float, need: int) -> float:
    if driver.whole:
        return 2.0 * driver.size
    return min(driver.size, need * driver.size / max(matches, 1.0))


def _choose(ctx: _Context, need: int) -> tuple[_Driver, int, float]:
    """The cheapest driver, the size of its first block (the entries expected to hold ``need``
    matches, from the restrictions' sizes taken as independent) and the share of its entries that
    pass the projection check expected to match the words too."""
    drivers = _drivers(ctx)
    total = max(1, drivers[0].size)
    matches = float(total)
    for driver in drivers[1:]:
        matches *= min(1.0, driver.matches / total)
    best = min(drivers, key=lambda d: _cost(d, matches, need))
    expected = math.ceil(1.25 * need * best.size / max(matches, 1.0)) + 1
    rate = math.prod(min(1.0, d.matches / total) for d in drivers if d.whole and d is not best)
    return best, min(MAX_BLOCK, max(10, need + 1, expected)), rate


def _newest(ctx: _Context, collector: _Collector, after: str | None) -> bool:
    """Walk the cheapest driver newest first; returns whether it was read to its end."""
    driver, first, rate = _choose(ctx, collector.need)
    lasts: dict[str, str | None] = dict.fromkeys(driver.pks, None if driver.whole else after)
    done: set[str] = set()
    block = [first]
    read = dict.fromkeys(driver.pks, 0)

    def reads() -> list[Range]:
        # A union's lists read up to their share of a target that doubles each round (what they
        # read counts); a word's lists read whole take blocks that double.
        wanted = [Range(pk, lasts[pk], limit=max(MIN_BLOCK, driver.share(pk, block[0]) - (0 if driver.whole else read[pk])))
                  for pk in driver.pks if pk not in done]
        block[0] = min(MAX_BLOCK, block[0] * 2)
        return wanted

    def absorb(ranges: list[Range], slices: list[Slice]) -> list[Item]:
        entries: list[Item] = []
        for wanted, got in zip(ranges, slices, strict=True):
            entries += got.items
            read[wanted.pk] += len(got.items)
            if not got.more or not got.items:
                done.add(wanted.pk)
            if got.items:
                lasts[wanted.pk] = str(got.items[-1]["sk"])
        return sorted(entries, key=lambda e: str(e["age"]))

    def bound() -> tuple[Any, ...] | None:
        open_ = [str(lasts[pk]) for pk in driver.pks if pk not in done]
        if not open_:
            return None
        return ("",) if driver.whole else (min(open_),)

    likely = None if driver.whole else (lambda entry: (str(entry["age"]),))
    collector.rate = rate
    _walk(ctx, collector, reads, absorb, bound, likely=likely, rate=rate)
    return len(done) == len(driver.pks)


# ------------------------------------------------------------------ nearest first: geohash cells, finest first


def _adjacent(cells: set[str], directions: tuple[Direction, Direction]) -> set[str]:
    found = set(cells)
    for cell in cells:
        for direction in directions:
            if not geo.touches_pole(cell, direction):  # none beyond a pole (pygeohash would log an error, then raise)
                found.add(pygeohash.get_adjacent(cell, direction))
    return found


def _square(centre: str, radius: int) -> set[str]:
    """The cells within ``radius`` steps of ``centre`` in both axes (none beyond a pole)."""
    cells = {centre}
    for _ in range(radius):
        cells = _adjacent(cells, ("right", "left"))
    for _ in range(radius):
        cells = _adjacent(cells, ("top", "bottom"))
    return cells


@functools.lru_cache(maxsize=4096)
def _square_at(lat: float, lng: float, level: int, radius: int) -> tuple[frozenset[str], float]:
    """The cells within ``radius`` steps of the centre's cell at ``level`` and the distance (km)
    from the centre to the nearest point outside them (the reach of a read of those cells)."""
    centre = geo.cell_of(lat, lng, level)
    square = _square(centre, radius)
    outside = _square(centre, radius + 1) - square
    return frozenset(square), min((geo.min_distance_km(lat, lng, c) for c in outside), default=_INFINITY)


def _block(lat: float, lng: float, level: int) -> tuple[tuple[str, ...], float]:
    """The 3 x 3 cells around the centre's cell at ``level`` (their sizes are read in step 1) and
    their reach (:func:`_square_at`)."""
    cells, reach = _square_at(lat, lng, level, 1)
    return tuple(sorted(cells)), reach


def _area_km2(cells: Iterable[str]) -> float:
    """The area of geohash cells (km², each taken as a rectangle at its mid latitude)."""
    return sum(geo.cell_area_km2(c) for c in cells)


def _disc(lat: float, lng: float, level: int, radius_km: float) -> tuple[frozenset[str], float]:
    """The cells at ``level`` whose nearest point lies within ``radius_km`` of the centre (its own
    cell always) and the distance (km) from the centre to the nearest cell outside them (the reach
    of a read of those cells). Found outwards from the centre's cell: the cells a disc meets are
    connected."""
    centre = geo.cell_of(lat, lng, level)
    cells, frontier, outside = {centre}, [centre], dict[str, float]()
    while frontier:
        found = []
        for cell in frontier:
            for other in _square(cell, 1) - cells:
                if other in outside:
                    continue
                distance = geo.min_distance_km(lat, lng, other)
                if distance >= radius_km:
                    outside[other] = distance
                    continue
                cells.add(other)
                found.append(other)
        frontier = found
    return frozenset(cells), min(outside.values(), default=_INFINITY)


def _discs(lat: float, lng: float, level: int, radius: float) -> Iterator[tuple[frozenset[str], float]]:
    """The discs of cells (:func:`_disc`) of one level, nearest first: the one of ``radius`` km, then
    each time one of twice the area, up to the reach of the largest square of :data:`GEO_RINGS` (a
    disc within it), as the cells each adds and its reach (km)."""
    widest = _square_at(lat, lng, level, GEO_RINGS)[1]
    radius, read = min(widest, radius), frozenset[str]()
    while True:
        cells, reach = _disc(lat, lng, level, radius)
        yield cells - read, reach
        if radius >= widest:
            return
        read, radius = cells, min(widest, max(radius, reach) * math.sqrt(2))


def _rings(ctx: _Context, need: int) -> Iterator[tuple[list[str], float]]:
    """The geo reads of a nearest-first search, nearest first: at each level from the finest whose
    largest square may hold ``need`` documents (by the density of its 3 x 3 block), its discs of
    cells (:func:`_discs`), the first one's circle expected to hold ``need`` documents at that
    density (the cells it meets reach past it, so they hold a page more often than not); then
    every document. Yields each read's lists and its reach (km): no document outside what was
    read lies nearer. A cell of a 3 x 3 block whose size is 0 is not read, nor a scope whose
    3 x 3 block at the next coarser level (which holds every disc of this one) is empty."""
    near = ctx.query.near
    assert near is not None

    def known(level: int, scopes: Sequence[str] = ctx.query.scopes) -> int:
        return sum(ctx.count(s, f"g{level}|{c}") for s in scopes for c in _block(near.lat, near.lng, level)[0])

    start = next((i for i, lvl in enumerate(GEO_LEVELS) if known(lvl) * (2 * GEO_RINGS + 1) ** 2 >= 9 * need),
                 len(GEO_LEVELS) - 1)
    if near.radius_km is not None:  # a level whose block holds the whole circle answers it completely
        start = min(start, next((i for i, lvl in enumerate(GEO_LEVELS) if _block(near.lat, near.lng, lvl)[1] >= near.radius_km), start))
    for i in range(start, len(GEO_LEVELS)):
        level, coarser = GEO_LEVELS[i], GEO_LEVELS[i + 1] if i + 1 < len(GEO_LEVELS) else None
        scopes = [s for s in ctx.query.scopes if coarser is None or known(coarser, (s,)) > 0]
        block = _block(near.lat, near.lng, level)[0]
        density = known(level) / max(_area_km2(block), 1e-9)  # documents per km²
        radius = math.sqrt(need / (math.pi * density)) if density else _INFINITY
        for cells, reach in _discs(near.lat, near.lng, level, radius):
            yield [ctx.spec.list_key(s, f"g{level}|{c}") for s in scopes for c in sorted(cells)
                   if c not in block or ctx.count(s, f"g{level}|{c}") > 0], reach
    yield [ctx.spec.list_key(s, "a") for s in ctx.query.scopes], _INFINITY


def _nearest(ctx: _Context, collector: _Collector, skipped: int) -> bool:
    """Read the squares of cells of :func:`_rings` (sized for the page and the ``skipped`` results
    before the cursor) until the k-th distance is within the reach of what was read (incremental
    nearest neighbours: a document is final once no unread cell lies nearer; Hjaltason & Samet,
    "Distance browsing in spatial databases", ACM TODS 24(2), 1999), each step loading the
    candidates of the read before. Returns whether every match was read."""
    near = ctx.query.near
    assert near is not None
    plan = _rings(ctx, collector.need + skipped)
    reach = [0.0]
    complete = [False]

    def reads() -> list[Range]:
        # A square whose new cells are all known to be empty widens the reach without a read.
        for pks, step_reach in plan:
            reach[0] = step_reach
            complete[0] = step_reach == _INFINITY or (near.radius_km is not None and near.radius_km <= step_reach)
            if pks or complete[0]:
                return [Range(pk, limit=MAX_BLOCK) for pk in pks]
        return []

    def absorb(ranges: list[Range], slices: list[Slice]) -> list[Item]:
        return [e for s in _finish(ctx, ranges, slices) for e in s.items]

    def bound() -> tuple[Any, ...] | None:
        return None if complete[0] else (reach[0], "")

    def likely(entry: Item) -> tuple[Any, ...] | None:
        distance = _passes(ctx.query, entry)
        return None if distance is None else (distance, str(entry["age"]))

    _walk(ctx, collector, reads, absorb, bound, likely=likely)
    return complete[0]


# ------------------------------------------------------------------ the search


def search(spec: IndexSpec, store: Store, query: Query, size: int, offset: int = 0, after: str | None = None,
           skipped: int = 0) -> Result:
    """One page of ``query``: ``size`` hits after ``offset`` more (or after the position ``after``,
    ``skipped`` being the results before it, counted into a counted ``total``).

    Raises
    ------
    InvalidPosition
        ``after`` is not a position of the query's order.
    """
    cursor = parse_position(query.order, after) if after is not None else None
    words = {s: analysis.query_words(query.words, spec.language(s)) for s in query.scopes} if query.words else {}
    ctx = _Context(spec, store, query, words)
    ranked = query.order == "relevance" and bool(words)
    if cursor is not None and cursor.statistics is not None and len(cursor.statistics) == len(ctx.slots()):
        ctx.frozen = dict(zip(ctx.slots(), cursor.statistics, strict=True))  # else (another analysis): the counts read
    position = cursor.key if cursor is not None else None
    collector = _Collector(ctx, offset + size + 1, position)
    early = _stem_lists(ctx, collector.need, cursor.ceilings if cursor is not None else None) if ranked else []
    unknown, read = _prepare(ctx, _counters(ctx), early)
    if ranked:
        complete = _relevance(ctx, collector, unknown, early, read)
    elif query.order == "nearest" and query.near is not None:
        complete = _nearest(ctx, collector, skipped if position else 0)
    else:
        complete = _newest(ctx, collector, position[0] if position else None)
    return _result(ctx, collector, complete, offset, size, skipped)


def _result(ctx: _Context, collector: _Collector, complete: bool, offset: int, size: int, skipped: int) -> Result:
    """The page of the collector's matches after ``offset``, with ``total`` and its relation; in
    relevance order each hit's position carries the ceilings and statistics (:func:`_carrying`)."""
    found = [hit for _, hit in collector.matches]
    page, more = found[offset:offset + size], len(found) > offset + size
    if ctx.query.order == "relevance" and ctx.words:  # the ceilings from every count the walk read
        statistics = [ctx.held(slot) for slot in ctx.slots()]
        page = [replace(hit, key=_carrying(key, _stem_ceilings(ctx, -key[0]), statistics))
                for key, hit in collector.matches[offset:offset + size]]
    counted = _counted_total(ctx)
    if counted is not None:
        return Result(page, counted, "eq", more)
    # Candidates never loaded (a full page came before them) are not verified (the index may lag the
    # records): the matches found are then a lower bound. A walk that ends with fewer matches than it
    # needed ended because no unread entry could match (its bound was none): it found them all.
    exact = (complete or len(found) < collector.need) and not collector.holds_more()
    return Result(page, skipped + len(found), "eq" if exact else "gte", more)


def _counted_total(ctx: _Context) -> int | None:
    """The exact number of matches when one list holds them all, from its size: no restriction
    (every document), one keyword filter, or one word that matches a single term; else None."""
    query = ctx.query
    if query.ranges or query.near is not None or len(query.keywords) + bool(ctx.words) > 1 or ctx.deferred:
        return None  # (deferred: typo corrections never looked up)
    if query.keywords or not ctx.words:
        name = f"k|{query.keywords[0][0]}={query.keywords[0][1]}" if query.keywords else "a"
        return sum(ctx.count(s, name) for s in query.scopes)
    terms = {scope: list(ctx.expansions.get((scope, 0), {})) for scope in query.scopes}
    if any(len(words) != 1 for words in ctx.words.values()) or any(len(t) > 1 for t in terms.values()):
        return None
    if any((scope, t[0]) not in ctx.df for scope, t in terms.items() if t):
        return None  # a term whose vocabulary count step 1 did not read (a typo correction)
    return sum(ctx.df[(scope, t[0])] for scope, t in terms.items() if t)


def _counters(ctx: _Context) -> list[tuple[str, str]]:
    """The ``(scope, list)`` sizes the plan may need (read in step 1)."""
    names = [f"k|{n}={v}" for n, v in ctx.query.keywords]
    names += [f"n|{r.name}|{b}" for r in ctx.query.ranges for b in _cover(r)]
    if ctx.query.near is not None:
        names += [f"g{lvl}|{c}" for lvl in GEO_LEVELS for c in _block(ctx.query.near.lat, ctx.query.near.lng, lvl)[0]]
    return [(s, n) for s in ctx.query.scopes for n in names]
