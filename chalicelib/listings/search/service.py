"""Listing search (DESIGN §1 "Search"; docs/search.md).

Access paths, never a Scan:

* **Native page** (no ``q``, ``meta`` or geo filter): the page straight from the write-sharded
  ``activeByCategoryShard`` / ``activeByRoleShard`` indexes of the category (every category
  without one), merged newest first (:mod:`chalicelib.search.merge`) from the cursor's
  position; ``total`` from the counters (:mod:`chalicelib.listings.counters`); items
  read ≈ pageSize.
* **Planned** (``q`` or ``meta`` filters, no geo): :mod:`chalicelib.listings.search.planner`
  picks the smallest path from the posting-list sizes (one BatchGetItem) and the category
  count: a newest-first posting list (word prefix, value) merged over the scope's categories,
  a number range probed in value order (at most :data:`READ_BUDGET` + 1 entries), or the
  category stream itself. Candidates of a posting list are read from the Listings table
  (BatchGetItem, so never a stale status) and every candidate of any path is verified by
  :func:`chalicelib.listings.search.filters.evaluate`. ``total``: the path's size when the path
  is exact for the whole query; else the matches counted until :data:`READ_BUDGET` candidates
  are verified (exact when the path ends within it, else a lower bound with
  ``totalRelation: "gte"``).
* **Geo** (a location filter): :mod:`chalicelib.listings.search.nearest` (its own module).

Results are nearest first with ``distanceKm`` (km, rounded to 0.01) when a geo filter is
given (ties newest first), otherwise newest first with ``distanceKm`` null.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeIs

from chalicelib import batch_reads, blocks, typo_dictionary, users
from chalicelib.categories.registry import all_categories
from chalicelib.listings import counters, repository, status
from chalicelib.listings.index import SHARDS, category_partition, newest_key, role_partition
from chalicelib.listings.models import ListingPage
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search import filters, nearest, planner, ranking
from chalicelib.listings.search.postings import NAMESPACE, OWNER, VALUE_TYPES, category_list, newest_of_number_sort
from chalicelib.listings.search.query import SearchQuery
from chalicelib.listings.service import view_fields
from chalicelib.pagination import Position
from chalicelib.search import join, postings, statistics
from chalicelib.search import planner as engine
from chalicelib.search.merge import Fetch, merge_newest
from chalicelib.text_analysis import typos
from chalicelib.users.records import UserRecord

#: Candidates a filtered search verifies before ``total`` becomes a lower bound (``"gte"``); also the
#: most entries a range probe reads. Small enough that a common filter's page reads the same
#: items at any table size, large enough that a rare filter's total is exact (docs/search.md).
READ_BUDGET = 200
#: A covered read whose path holds at most this many entries reads it whole and counts every match
#: (``total`` exact); a larger one stops one match past the page (``"gte"``).
COUNT_ENTRIES = 50
#: Most listings per BatchGetItem of candidates (DynamoDB's limit is 100 keys).
MAX_BATCH = 100
#: Candidates a relevance-ranked search scores: the first ones of the chosen path, newest first
#: (as OpenSearch's rescore ``window_size``). Equal to :data:`READ_BUDGET`, so a ranked page reads
#: what a filtered newest-first page verifies at most (docs/search.md, "Relevance").
SCORE_WINDOW = READ_BUDGET
#: Reads (posting entries and listings) a ranked search with filters spends on its window: the
#: driver's entries are checked against the filters and only those accepted are read and scored,
#: so the window is sized to stay within the page budget of docs/search.md whatever the
#: filters' selectivity; without filters the window is :data:`SCORE_WINDOW` candidates.
SCORE_READS = 150


def _partitions(query: SearchQuery) -> tuple[str, list[str]]:
    """The index and its partitions (every shard) holding the query's category (and role)."""
    category_keys = [query.category.key] if query.category else list(all_categories())
    if query.role:
        return "activeByRoleShard", [role_partition(c, query.role, s) for c in category_keys for s in range(SHARDS)]
    return "activeByCategoryShard", [category_partition(c, s) for c in category_keys for s in range(SHARDS)]


def is_index_native(query: SearchQuery) -> bool:
    """True when the page and its total need no verification (no q, meta or geo filter)."""
    return not query.terms and not query.filters and query.geo is None


@dataclass
class _Owners:
    """The owners of a page's listings read in the page's own BatchGetItem (their ids known from the
    index before the listings are read), and every id asked for; :meth:`of` reads the rest."""

    found: dict[str, UserRecord] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)

    def of(self, owner_ids: Iterable[str]) -> dict[str, UserRecord]:
        """The users ``owner_ids`` (unknown ids absent): those not read with the page in one BatchGetItem."""
        wanted = list(dict.fromkeys(owner_ids))
        rest = [i for i in wanted if i not in self.asked]
        if rest:
            self.found.update(users.get_users(rest))
            self.asked.update(rest)
        return {i: self.found[i] for i in wanted if i in self.found}


def _read_listings(ids: Sequence[str], owner_ids: Iterable[str | None], owners: _Owners | None) -> dict[str, ListingRecord]:
    """The listings ``ids`` by id (missing ones absent), one BatchGetItem; the users ``owner_ids`` (the
    listings' owners as the index filed them) are read in the same call into ``owners`` when they fit
    in it (:data:`MAX_BATCH` keys in all), saving the page a second call."""
    return _read_listings_with(ids, owner_ids, owners)[0]


def _read_listings_with(ids: Sequence[str], owner_ids: Iterable[str | None], owners: _Owners | None,
                        also: batch_reads.Part[dict[str, Any]] | None = None
                        ) -> tuple[dict[str, ListingRecord], dict[str, dict[str, Any]]]:
    """:func:`_read_listings`, with the items of ``also`` (another table's part, read even when
    ``ids`` is empty) in the same BatchGetItem: the listings by id, and ``also``'s items by their id."""
    if not ids and also is None:
        return {}, {}
    wanted = [] if owners is None else [i for i in dict.fromkeys(owner_ids) if i and i not in owners.asked]
    if len(set(ids)) + len(wanted) + (len(also.keys) if also else 0) > MAX_BATCH:
        wanted = []  # too many for one call: the owners are read after the page (_Owners.of)
    if not wanted and also is None:
        return repository.get_many(ids), {}
    listing_part, owner_part = repository.read_part(ids), users.read_part(wanted)
    found = batch_reads.read(listing_part, owner_part, *([also] if also else []))
    if owners is not None:
        owners.found.update(found.of(owner_part))
        owners.asked.update(wanted)
    return found.of(listing_part), found.of(also) if also else {}


@dataclass
class _Streamed:
    items: list[ListingRecord]
    total: int
    relation: Literal["eq", "gte"]
    has_more: bool
    last_key: str | None


@dataclass
class _Choice:
    """The planner's choice for one query: its plan, the lists' sizes, the path and the ACTIVE count."""

    paths: planner.Plan
    sizes: dict[str, int]
    best: planner.Path
    stream_size: int
    #: The newest keys of a range that ended within the budget (the path to read), if any.
    range_keys: list[str] | None = None
    range_exact: bool = False
    #: The owner of each listing of a probed range, as its entries name it (by listing id).
    range_owners: dict[str, str] = field(default_factory=dict)
    #: The paths intersected by merge join instead of reading ``best`` alone (none: no join).
    joined: list[planner.Path] = field(default_factory=list)
    #: The one path read with the query's other filters checked on its covering entries, and the
    #: engine planner's estimate (:mod:`chalicelib.search.planner`); ``None``: another way.
    driver: planner.Path | None = None
    drive: engine.Drive | None = None
    #: Planned from remembered sizes (:mod:`chalicelib.search.statistics`), not read for this query.
    remembered: bool = False


def _planned(query: SearchQuery, scope: list[str], fresh: bool) -> tuple[planner.Plan, list[str], dict[str, int], bool]:
    """The query's plan, the category lists of its scope (ACTIVE listings), the sizes of every list
    named, and whether those are remembered sizes (:mod:`chalicelib.search.statistics`) rather than
    read for this query (never when ``fresh``, nor for a query with ``q`` terms).

    The lists' sizes and the typo dictionary's buckets of the query's terms share a table and are
    read together (one BatchGetItem); only when a term has corrections (:mod:`chalicelib.typo_dictionary`)
    does the plan grow by their lists, whose sizes a second BatchGetItem reads.
    """
    eligible = [t for t in query.terms if typos.max_typos(t)]  # short terms have no corrections
    paths = planner.plan(query)
    categories = [category_list(c, query.role) for c in paths.scope]
    names = [*paths.list_names(), *categories]
    if not fresh and not query.terms:
        known = statistics.remembered(names)
        if known is not None:
            return paths, categories, known, True
    vocabulary_keys = typo_dictionary.correction_keys(NAMESPACE, scope, eligible) if eligible else []
    sizes, vocabulary = postings.sizes_with(names, vocabulary_keys) if names or vocabulary_keys else ({}, [])
    corrections = typo_dictionary.corrections_in(NAMESPACE, scope, eligible, vocabulary) if eligible else {}
    if any(corrections.values()):
        paths = planner.plan(query, corrections)
        missing = [name for name in paths.list_names() if name not in sizes]
        sizes.update(postings.sizes(missing) if missing else {})
    statistics.remember(sizes)
    return paths, categories, sizes, False


def _covered_drive(query: SearchQuery, paths: planner.Plan, sizes: dict[str, int], stream_size: int,
                   want: int) -> tuple[planner.Path, engine.Drive] | None:
    """The path to read alone with the other filters checked on its entries (:mod:`chalicelib.search.planner`),
    or ``None`` when the query has two ``q`` terms with lists (their merge join reads less)."""
    terms = [p for p in paths.lists if p.label.startswith("q:")]
    if len(terms) > 1:
        return None
    candidates = [planner.sized(p, sizes) for p in paths.lists]
    category = planner.Path("list", "category", tuple(category_list(c, query.role) for c in paths.scope))
    candidates.append(planner.sized(category, sizes))
    restrictions = [
        engine.Restriction(p.label, p.size, _expected_hits(p, sizes), covered=not p.label.startswith("q:"))
        for p in candidates
    ]
    if len(terms) < len(query.terms):  # a term without lists (a stop word, one letter): checked on the listing
        restrictions.append(engine.Restriction("q", 0, 0, covered=False, readable=False))
    chosen = engine.drive(restrictions, stream_size, want)
    if chosen is None or (candidates[chosen.index].label == "category" and not query.filters):
        return None  # nothing to check on an entry: the category's own index pages come with their listings
    return candidates[chosen.index], chosen


def _lone_range(paths: planner.Plan, sizes: dict[str, int], driver: planner.Path | None) -> planner.Path | None:
    """The range to probe instead of reading ``driver``, the range's cover (its groups and buckets,
    :mod:`chalicelib.search.buckets`), or ``None``.

    A query whose one restriction is a number range (``exact``: no other filter, term or role)
    either reads the newest-first list of every non-empty group or bucket of the cover, one Query
    each, or probes the value-sorted list between the bounds, one Query per category of the scope
    (:func:`_probe_range`). The cover holds every value of the range, so when its sizes sum to at
    most :data:`READ_BUDGET` the probe ends within its budget: it is the one with fewer calls (the
    probe reads only the range's own entries, which the buckets at its ends also hold) as soon as
    more lists of the cover than categories hold entries.
    """
    if driver is None or len(paths.ranges) != 1 or not paths.ranges[0].exact or driver.label != paths.ranges[0].label:
        return None
    filled = sum(1 for name in driver.lists if sizes.get(name, 0))
    if filled <= len(paths.ranges[0].lists) or planner.sized(driver, sizes).size > READ_BUDGET:
        return None
    return paths.ranges[0]


def _expected_hits(path: planner.Path, sizes: dict[str, int]) -> float:
    """Entries of ``path`` expected to satisfy its restriction: a number bucket at a range's end about
    half; a ``q`` term's union about its largest list (a listing sits in its stem and prefix lists both)."""
    if path.label.startswith("q:"):
        return float(max((sizes.get(n, 0) for n in path.lists), default=0))
    return sum(sizes.get(n, 0) * (0.5 if n in path.partial else 1.0) for n in path.lists)


def _total_is_size(query: SearchQuery, path: planner.Path) -> bool:
    """True when a covered page's ``total`` is ``path``'s size (it alone decides the query)."""
    return path.exact and not query.role and path.label != "category"


def _answers_from_reads(query: SearchQuery, driver: planner.Path | None) -> bool:
    """True when a covered page driven by ``driver`` answers from what it reads, whatever the sizes
    it was planned from (:mod:`chalicelib.search.statistics`): its entries decide the whole query
    and its total is counted rather than a size. (The lists it passes over as empty are checked
    with the page's listings, :func:`_covered_page`.)"""
    return driver is not None and filters.covered(query) and not _total_is_size(query, driver)


def _choose(query: SearchQuery, scope: list[str], want: int = READ_BUDGET, fresh: bool = False) -> _Choice:
    """Plan the query, read the sizes and the ACTIVE count (or plan from remembered ones where the
    answer cannot depend on them, :func:`_answers_from_reads`), probe ranges: the path to read."""
    paths, categories, sizes, remembered = _planned(query, scope, fresh)
    # The ACTIVE count of the searched categories (and role): their key-only category lists' sizes, read
    # with the other sizes (the counters say the same once the index has caught up; this is an estimate).
    stream_size = sum(sizes.get(name, 0) for name in categories)
    best = planner.choose(paths, sizes, stream_size)
    choice = _Choice(paths, sizes, best, stream_size, remembered=remembered)
    covered = _covered_drive(query, paths, sizes, stream_size, want)
    lone_range = _lone_range(paths, sizes, covered[0] if covered else None)
    if lone_range is not None:  # the probe's answer is what it reads: remembered sizes serve
        found = _probe_range(lone_range, READ_BUDGET, choice.range_owners)
        if found is not None:
            choice.range_keys, choice.range_exact = found, lone_range.exact
            return choice
    if remembered and not _answers_from_reads(query, covered[0] if covered else None):
        return _choose(query, scope, want, fresh=True)
    if covered is not None:
        choice.driver, choice.drive = covered
        return choice
    if best.kind != "stream" or best.size > READ_BUDGET:
        choice.joined = planner.join_paths(paths, sizes, stream_size)
    if choice.joined:
        return choice
    for path in planner.plan_ranges(paths, sizes, best, READ_BUDGET):
        found = _probe_range(path, READ_BUDGET)
        if found is not None:
            choice.range_keys, choice.range_exact = found, path.exact
            break
    return choice


def _stream(query: SearchQuery, position: Position, owners: _Owners) -> _Streamed:
    """One newest-first page of a search without geo filter: the native page, or the planner's path
    (``owners``: where the page's reads put the owners they read along, :func:`_read_listings`)."""
    scope = [query.category.key] if query.category else list(all_categories())
    if is_index_native(query):
        if position.key is None and position.offset:
            return _skipped_native_page(query, position, scope, owners)
        return _category_stream(query, position, counters.read_counts(scope, query.role), owners=owners)
    want = (0 if position.key else position.offset) + position.page_size + 1
    try:
        return _planned_page(query, position, _choose(query, scope, want), owners)
    except _StaleSizes:  # planned from remembered sizes, a list passed over as empty holds entries now
        return _planned_page(query, position, _choose(query, scope, want, fresh=True), owners)


class _StaleSizes(Exception):
    """A page planned from remembered sizes passed over a list that holds entries now (:func:`_covered_page`)."""


def _planned_page(query: SearchQuery, position: Position, choice: _Choice, owners: _Owners) -> _Streamed:
    """The page of the planner's ``choice`` (:func:`_stream`).

    Raises
    ------
    _StaleSizes
        The choice was planned from remembered sizes that turned out stale where the answer
        depends on them (never for a choice planned from sizes read for it).
    """
    best, sizes = choice.best, choice.sizes
    if choice.driver is not None:
        return _covered_page(query, position, choice, owners)
    if choice.range_keys is not None:
        found = choice.range_keys
        after = [key for key in found if position.key is None or key < position.key]
        ids = (key.rsplit("#", 1)[1] for key in after)
        return _verified_page(query, position, ids, len(found), exact=choice.range_exact, owners=owners,
                              owner_of=choice.range_owners)
    if choice.joined:
        return _joined_page(query, position, choice)
    if best.kind == "stream":
        return _category_stream(query, position, None, best.size, owners)
    need = (0 if position.key else position.offset) + position.page_size
    want = need + 1 if best.exact or best.size > READ_BUDGET else max(need + 1, best.size)
    return _verified_page(query, position, _distinct(_newest_ids(best, sizes, position.key, want)), best.size, exact=best.exact)


@dataclass
class _Ranked:
    rows: list[tuple[ListingRecord, float]]
    total: int
    relation: Literal["eq", "gte"]
    has_more: bool


def _candidates(query: SearchQuery, choice: _Choice, chunk: Callable[[], int], window: int = SCORE_WINDOW) -> Iterator[ListingRecord]:
    """The chosen path's ACTIVE listings, newest first, unverified (those of a covered read passed
    their entry checks); ``chunk()`` sizes each BatchGetItem; ``window``: the candidates expected."""
    if choice.best.kind == "stream" and choice.range_keys is None and not choice.joined and choice.driver is None:
        index, partitions = _partitions(query)
        fetches: list[Fetch] = [functools.partial(repository.newest_page, index, p) for p in partitions]
        yield from merge_newest(fetches, SCORE_WINDOW + 1, None, key=newest_key)
        return
    if choice.driver is not None:
        ids: Iterator[str] = (hit.item_id for hit in _covered_hits(query, choice, None, window, candidates=True)[0])
    elif choice.joined:
        ids = (hit.item_id for hit in _hits(choice, None, SCORE_WINDOW + 1))
    elif choice.range_keys is not None:
        ids = (key.rsplit("#", 1)[1] for key in choice.range_keys)
    else:
        ids = _distinct(_newest_ids(choice.best, choice.sizes, None, SCORE_WINDOW + 1))
    while batch := list(itertools.islice(ids, chunk())):
        found = repository.get_many(batch)
        for listing_id in batch:
            item = found.get(listing_id)
            if item is not None and status.is_public(item["status"]):
                yield item


def _distinct(ids: Iterator[str]) -> Iterator[str]:
    """``ids`` without repeats (a listing sits in several lists of a term union; merged, they are adjacent)."""
    seen: set[str] = set()
    for listing_id in ids:
        if listing_id not in seen:
            seen.add(listing_id)
            yield listing_id


def _ranked(query: SearchQuery, position: Position, owners: _Owners) -> _Ranked:
    """One page ranked by relevance: the first :data:`SCORE_WINDOW` candidates of the chosen path
    (newest first) are verified, scored (BM25F, :mod:`chalicelib.listings.search.ranking`) and
    ordered; matches past the window follow newest first (as OpenSearch's rescore leaves the
    rest of the results in their first order), read only as far as the page needs."""
    scope = [query.category.key] if query.category else list(all_categories())
    need = position.offset + position.page_size
    choice = _choose(query, scope, need + 1)
    examined = 0
    size = SCORE_WINDOW
    if choice.drive is not None and (query.filters or query.role):
        # Filters checked on the entries: W candidates cost about W / rate entries and W listings; the window
        # is the W that spends SCORE_READS reads.
        rate = choice.drive.entry_rate
        size = max(need + 1, min(SCORE_WINDOW, math.floor(SCORE_READS * rate / (1 + rate))))

    def chunk() -> int:
        if examined < size:
            return max(1, min(MAX_BATCH, size - examined))
        return max(1, min(MAX_BATCH, need + 1 - len(window) - len(beyond)))

    window: list[ListingRecord] = []
    beyond: list[ListingRecord] = []
    exhausted = True
    for item in _candidates(query, choice, chunk, size):
        if examined >= size and len(window) + len(beyond) > need:
            exhausted = False  # a candidate past the page exists: its match is not needed to know there is more
            break
        examined += 1
        if filters.evaluate(query, item) is None:
            continue
        (window if examined <= size else beyond).append(item)
    holding = [sum(choice.sizes.get(name, 0) for name in stems) for stems in choice.paths.term_stems]
    rows = ranking.rank(query.terms, window, choice.stream_size, holding)
    if beyond:
        rest = ranking.rank(query.terms, beyond, choice.stream_size, holding)
        rows += sorted(rest, key=lambda row: newest_key(row[0]), reverse=True)
    page = rows[position.offset : need]
    if choice.best.kind == "stream" and not choice.joined and choice.driver is None:  # index items: re-read, as every page of the index is
        fresh = {item["listingId"]: item for item in _fresh(query, [item for item, _ in page], owners)}
        page = [(fresh[item["listingId"]], score) for item, score in page if item["listingId"] in fresh]
    return _Ranked(page, len(rows), "eq" if exhausted else "gte", len(rows) > need or not exhausted)


def _probe_range(path: planner.Path, budget: int, owners: dict[str, str] | None = None) -> list[str] | None:
    """The newest keys of every listing in a range, newest first, or ``None`` when it holds more than
    ``budget`` (at most ``budget`` + 1 entries read). ``owners``: filled with the owner of each listing
    its entry names (the entries are then read with their owner, else key-only)."""
    keys: list[str] = []
    for name in path.lists:
        after: str | None = None
        while True:
            read = postings.read(name, budget + 1 - len(keys), after=after, descending=False, low=path.low, high=path.high,
                                 keys_only=owners is None, fields=(OWNER,))
            keys += [newest_of_number_sort(p.sort) for p in read.postings]
            if owners is not None:
                owners.update((p.item_id, p.data[OWNER]) for p in read.postings if p.data and OWNER in p.data)
            if len(keys) > budget:
                return None
            if not read.more or not read.postings:
                break
            after = read.postings[-1].sort
    return sorted(keys, reverse=True)


def _newest_ids(path: planner.Path, sizes: dict[str, int], before: str | None, want: int,
                owners: dict[str, str] | None = None) -> Iterator[str]:
    """The listing ids of a newest-first list path, merged over its categories' lists from ``before``.

    Empty lists are not read. Each list's first Query asks for its share of the ``want``
    entries the caller expects (proportional to the list's size, plus one), so a page usually
    costs one Query per list; the merge asks a list again only when its share runs out.
    ``owners``: filled with the owner each entry names (by listing id; the entries are then
    read with that one value of their projection, else key-only).
    """
    total = sum(sizes.get(name, 0) for name in path.lists) or 1

    def fetch(name: str, after: str | None, limit: int) -> tuple[list[postings.Posting], bool]:
        if after == before:  # the first Query of this list
            limit = max(limit, math.ceil(want * sizes.get(name, 0) / total) + 1)
        read = postings.read(name, limit, after=after, keys_only=owners is None, fields=(OWNER,))
        if owners is not None:
            owners.update((p.item_id, p.data[OWNER]) for p in read.postings if p.data and OWNER in p.data)
        return read.postings, read.more

    fetches: list[Fetch] = [functools.partial(fetch, name) for name in path.lists if sizes.get(name, 0)]
    return (entry.item_id for entry in merge_newest(fetches, want, before, key=lambda entry: entry.sort))


def _hits(choice: _Choice, before: str | None, want: int) -> Iterator[join.Hit]:
    """The listings held by every joined path, newest first from ``before`` (zigzag merge join)."""
    sizes = [path.size for path in choice.joined]
    restrictions = [
        join.members(path.members(), choice.sizes, limit)
        for path, limit in zip(choice.joined, join.limits(sizes, choice.stream_size, want), strict=True)
    ]
    return join.intersect(restrictions, functools.partial(postings.read, keys_only=True), descending=True, after=before)


def _covered_hits(query: SearchQuery, choice: _Choice, before: str | None, want: int, whole_list: bool = False,
                  candidates: bool = False) -> tuple[Iterator[join.Hit], _Observed]:
    """The entries of the chosen driver that pass the query's entry checks, newest first from
    ``before``, and the count of the entries checked so far and of those accepted.

    The driver's lists are read together (one parallel step per refill), each Query sized by a
    :class:`chalicelib.search.join.Pace` from the share of entries accepted: the share the same
    read accepted last (:func:`chalicelib.search.statistics.share`, :func:`_share_key`), else the
    planner's estimate; ``whole_list``: read every entry in the first step instead (a small list
    counted whole). ``want``: the matches expected, or (``candidates``) the accepted entries expected.
    """
    path, drive, sizes = choice.driver, choice.drive, choice.sizes
    observed = _Observed(_share_key(query, path) if path is not None else "")
    if path is None or drive is None:
        return iter(()), observed
    total = sum(sizes.get(name, 0) for name in path.lists) or 1
    members = [
        join.Member(name, sizes[name] + 1 if whole_list else 0, exact=name not in path.partial, share=sizes[name] / total)
        for name in path.lists if sizes.get(name, 0)
    ]
    if not members:
        return iter(()), observed
    wanted = want if candidates else math.ceil(want / max(drive.item_rate, 0.05))
    learned = None if whole_list else statistics.share(observed.key)
    pace = None if whole_list else join.Pace(wanted, drive.entry_rate if learned is None else learned)
    check = filters.entry_check(query)
    read = functools.partial(postings.read, fields=(*filters.entry_fields(query), OWNER))

    def accept(entry: postings.Posting) -> bool:
        passed = check(entry.data)
        observed.checked += 1
        observed.accepted += passed
        return passed

    return join.intersect([members], read, descending=True, after=before, accept=accept, pace=pace), observed


@dataclass
class _Observed:
    """Entries a covered read checked and accepted: the share it learns (:func:`statistics.remember_share`).

    Counted as entries are checked, not read, so entries a Query returned past the last one
    taken do not lower the share (each read would then ask for more than the last).
    """

    #: The read's :func:`_share_key`.
    key: str
    checked: int = 0
    accepted: int = 0


def _share_key(query: SearchQuery, path: planner.Path) -> str:
    """What a covered read's share of accepted entries depends on: the lists read and the checks."""
    checks = sorted(f"{f.key}:{f.op}:{f.value}" for f in query.filters)
    return "\t".join([*path.lists, f"role:{query.role}", *checks])


def _covered_page(query: SearchQuery, position: Position, choice: _Choice, owners: _Owners) -> _Streamed:
    """A page read from one path, the query's other filters checked on its covering entries.

    When the entries decide the whole query (:func:`filters.covered`), matches before the page
    (``page=N`` without a cursor) and the one past it are counted from their entries, and only
    the page's listings are read, with their owners as the entries name them (one BatchGetItem,
    :func:`_read_listings`), and re-verified by :func:`filters.evaluate` (a listing changed since
    it was filed is left out). Otherwise (``q`` terms) the accepted
    entries' listings are read in batches and verified until one match past the page.
    ``total``: the path's size when it is exact for the query; else the matches counted, exact
    when the path ended (a path of at most :data:`COUNT_ENTRIES` entries is read whole and
    counted), else ``"gte"``.

    Raises
    ------
    _StaleSizes
        Planned from remembered sizes (:mod:`chalicelib.search.statistics`), a list of the path
        passed over as empty holds entries now (checked with the page's listings).
    """
    skip = 0 if position.key else position.offset
    need = skip + position.page_size
    path = choice.driver or choice.best
    exact = _total_is_size(query, path)
    size = sum(choice.sizes.get(name, 0) for name in path.lists)
    whole = filters.covered(query)
    whole_list = size <= min(COUNT_ENTRIES, READ_BUDGET)
    hits, observed = _covered_hits(query, choice, position.key, need + 1, whole_list=whole_list)
    page: list[ListingRecord] = []
    matches = 0
    exhausted = True
    if whole:
        on_page: list[join.Hit] = []
        for hit in hits:
            matches += 1
            if skip < matches <= need:
                on_page.append(hit)
            elif matches > need and (exact or not whole_list):
                exhausted = False
                break
        owner_ids = (hit.data.get(OWNER) if hit.data else None for hit in on_page)
        ids = [hit.item_id for hit in on_page]
        # Planned from remembered sizes: the lists passed over as empty are checked with the page's read.
        passed_over = [name for name in path.lists if not choice.sizes.get(name, 0)] if choice.remembered else []
        if not passed_over:
            page.extend(_matching(query, ids, owners, owner_ids))
        else:
            found, index_items = _read_listings_with(ids, owner_ids, owners, batch_reads.index_part(passed_over, []))
            fresh, _ = postings.sizes_in(index_items.values(), passed_over)
            if any(fresh.values()):  # one holds entries now: the page is planned again from read sizes
                statistics.remember(fresh)
                raise _StaleSizes(", ".join(name for name, size in fresh.items() if size))
            page.extend(item for listing_id in ids if _is_match(item := found.get(listing_id), query))
    else:
        while exhausted:
            take = MAX_BATCH if whole_list else max(1, min(MAX_BATCH, need + 1 - matches))
            chunk = [hit.item_id for hit in itertools.islice(hits, take)]
            if not chunk:
                break
            for item in _matching(query, chunk):
                matches += 1
                if skip < matches <= need:
                    page.append(item)
                elif matches > need and not whole_list:
                    exhausted = False
                    break
    if not whole_list:
        statistics.remember_share(observed.key, observed.accepted, observed.checked)
    before = position.offset if position.key else 0
    last_key = newest_key(page[-1]) if page else position.key
    if exact:
        return _Streamed(page, size, "eq", position.after(size) and bool(page), last_key)
    return _Streamed(page, before + matches, "eq" if exhausted else "gte", matches > need, last_key)


def _is_match(item: ListingRecord | None, query: SearchQuery) -> TypeIs[ListingRecord]:
    """True when ``item`` (as read from the table, ``None`` if gone) is public and satisfies ``query``."""
    return item is not None and status.is_public(item["status"]) and filters.evaluate(query, item) is not None


def _matching(query: SearchQuery, ids: list[str], owners: _Owners | None = None,
              owner_ids: Iterable[str | None] = ()) -> list[ListingRecord]:
    """The listings of ``ids`` that match ``query`` now, in the order of ``ids``: one BatchGetItem
    (none for no ids; with the users ``owner_ids`` into ``owners`` when they fit, :func:`_read_listings`),
    each verified by :func:`_is_match` (never a stale status or content)."""
    found = _read_listings(ids, owner_ids, owners)
    return [item for listing_id in ids if _is_match(item := found.get(listing_id), query)]


def _joined_page(query: SearchQuery, position: Position, choice: _Choice) -> _Streamed:
    """A page of a conjunction answered by merge join (:func:`_hits`).

    A hit is verified on its listing (BatchGetItem, :func:`filters.evaluate`) unless it is exact
    and the join covers the whole query; exact hits before the page (``page=N`` without a cursor)
    and past it are counted from their key-only entries, never read. ``total`` is exact when the
    smallest joined path holds at most :data:`READ_BUDGET` listings (the join is walked to its
    end), else the matches up to one past the page (``"gte"``).
    """
    skip = 0 if position.key else position.offset
    need = skip + position.page_size
    covered = not query.role and not query.terms and len(choice.joined) == len(choice.paths.lists) and all(
        f.type in VALUE_TYPES for f in query.filters
    )
    count_all = choice.joined[0].size <= READ_BUDGET
    hits = _hits(choice, position.key, need + 1)
    page: list[ListingRecord] = []
    matches = 0
    exhausted = True
    batch = need + 1
    while exhausted:
        chunk = list(itertools.islice(hits, batch))
        if not chunk:
            break
        batch = min(MAX_BATCH, 2 * batch)
        trusted = [covered and hit.exact for hit in chunk]
        # Read what must be verified, and the exact hits that may land on the page.
        wanted = [h.item_id for h, ok in zip(chunk, trusted, strict=True) if not ok or matches + len(chunk) > skip]
        found = repository.get_many(wanted) if wanted else {}
        for hit, ok in zip(chunk, trusted, strict=True):
            item = found.get(hit.item_id)
            if ok and (matches < skip or matches >= need):
                matches += 1  # counted from its entry: before or past the page
            elif not _is_match(item, query):
                continue
            else:
                matches += 1
                if skip < matches <= need:
                    page.append(item)
            if not count_all and matches > need:
                exhausted = False
                break
    before = position.offset if position.key else 0
    last_key = newest_key(page[-1]) if page else position.key
    return _Streamed(page, before + matches, "eq" if exhausted else "gte", matches > need, last_key)


def _verified_page(query: SearchQuery, position: Position, ids: Iterator[str], size: int, exact: bool,
                   owners: _Owners | None = None, owner_of: Mapping[str, str] | None = None) -> _Streamed:
    """A page from candidate listing ids (newest first, ``size`` of them on the whole path): each
    read from the table (BatchGetItem, so never a stale status) and verified by :func:`filters.evaluate`;
    the owners ``owner_of`` names (by listing id) are read along into ``owners`` (:func:`_read_listings`).

    An ``exact`` path's size is the total: the read stops when the page is full. Otherwise a
    path of at most :data:`READ_BUDGET` candidates is verified whole (``total`` exact), and a
    longer one only until one match past the page proves a next page (``total`` a lower
    bound, ``"gte"``).
    """
    skip = 0 if position.key else position.offset
    need = skip + position.page_size
    count_all = not exact and size <= READ_BUDGET
    page: list[ListingRecord] = []
    matches = 0
    exhausted = True
    batch = need + 1
    while exhausted:
        chunk = list(itertools.islice(ids, batch))
        if not chunk:
            break
        batch = min(MAX_BATCH, 2 * batch)
        owner_ids = [owner_of.get(listing_id) for listing_id in chunk] if owner_of else []
        for item in _matching(query, chunk, owners, owner_ids):
            matches += 1
            if skip < matches <= need:
                page.append(item)
            if (exact and matches >= need) or (not count_all and matches > need):
                exhausted = False
                break
    before = position.offset if position.key else 0
    last_key = newest_key(page[-1]) if page else position.key
    if exact and not exhausted:
        return _Streamed(page, size, "eq", position.after(size), last_key)
    return _Streamed(page, before + matches, "eq" if exhausted else "gte", matches > need, last_key)


def _category_stream(query: SearchQuery, position: Position, exact: int | None, size: int = 0,
                     owners: _Owners | None = None) -> _Streamed:
    """The page from the category's (or role's) newest-first index of ``size`` listings; ``exact``: its
    counted total (no filters). With filters, matches are counted past the page until
    :data:`READ_BUDGET` listings are verified, unless the index holds more than that anyway."""
    native = exact is not None
    skip = 0 if position.key else position.offset
    need = skip + position.page_size
    index, partitions = _partitions(query)
    fetches: list[Fetch] = [functools.partial(repository.newest_page, index, p) for p in partitions]
    want = need if native else need + 1 if size > READ_BUDGET else max(need + 1, READ_BUDGET)
    entries = merge_newest(fetches, want, position.key, key=newest_key)
    page: list[ListingRecord] = []
    matches = examined = 0
    exhausted = True
    for item in entries:
        examined += 1
        if filters.evaluate(query, item) is None:
            continue
        matches += 1
        if matches <= skip:
            continue
        if matches <= need:
            page.append(item)
            if native and matches == need:
                break  # the counters say whether more follow
        elif examined >= READ_BUDGET or size > READ_BUDGET:
            exhausted = False  # one match past the page proves there is a next page
            break
    before = position.offset if position.key else 0
    last_key = newest_key(page[-1]) if page else position.key
    if exact is not None:
        return _Streamed(_fresh(query, page, owners), exact, "eq", position.after(exact) and bool(page), last_key)
    return _Streamed(_fresh(query, page, owners), before + matches, "eq" if exhausted else "gte", matches > need, last_key)


def _skipped_native_page(query: SearchQuery, position: Position, scope: list[str], owners: _Owners) -> _Streamed:
    """``page=N`` (N > 1) of a page without filters and without a cursor: the skipped listings are
    passed over as entries of the category lists (:func:`category_list`) read with their owner
    alone, never as listings. ``total``: the counters (exact). While the lists' sizes differ from
    the counters (the stream-maintained index lags a change), the page is read from the
    write-sharded indexes as a cursorless page always was.

    One category (one list): its entries first, then the page's listings, their owners, the
    list's size and the counters in one BatchGetItem (two calls). Several: the sizes and the
    counters first (the merge reads each list its share), then the entries and the page.
    """
    names = [category_list(c, query.role) for c in scope]
    need = position.offset + position.page_size
    index_keys = counters.count_keys(scope)
    if len(names) == 1:
        sizes = {names[0]: need}  # one list: its share of the merge is the whole read
    else:
        sizes, counter_items = postings.sizes_with(names, index_keys)  # one BatchGetItem: they share a table
        total = counters.counted(counter_items, query.role)
        if sum(sizes.values()) != total:  # the index lags the table (a change not yet filed): read the table's index
            return _category_stream(query, position, total, owners=owners)
    path = planner.Path("list", "category", tuple(names), sum(sizes.values()))
    owner_of: dict[str, str] = {}  # the page's owners as its entries name them: read with its listings
    ids = list(itertools.islice(_distinct(_newest_ids(path, sizes, None, need, owner_of)), position.offset, need))
    index = batch_reads.index_part(names, index_keys) if len(names) == 1 else None
    found, index_items = _read_listings_with(ids, (owner_of.get(i) for i in ids), owners, index)
    if index is not None:
        sizes, counter_items = postings.sizes_in(index_items.values(), names)
        total = counters.counted(counter_items, query.role)
        if sizes[names[0]] != total:  # as above, found after the entries were read
            return _category_stream(query, position, total, owners=owners)
    page = [item for i in ids if (item := found.get(i)) is not None and status.is_public(item["status"])]
    last_key = newest_key(page[-1]) if page else None
    return _Streamed(page, total, "eq", position.after(total) and bool(page), last_key)


def _fresh(query: SearchQuery, page: list[ListingRecord], owners: _Owners | None = None) -> list[ListingRecord]:
    """The page re-read from the table (one BatchGetItem, with the owners into ``owners``,
    :func:`_read_listings`): a listing paused, edited or deleted since the index was read (the
    index lags by a moment) is left out."""
    found = _read_listings([item["listingId"] for item in page], (item["ownerId"] for item in page), owners)
    fresh: list[ListingRecord] = []
    for item in page:
        current = found.get(item["listingId"])
        unchanged = current is not None and status.is_public(current["status"]) and current.get("version") == item.get("version")
        if unchanged and current is not None and filters.evaluate(query, current) is not None:
            fresh.append(current)
    return fresh


def search_listings(query: SearchQuery, viewer_id: str | None = None) -> ListingPage:
    """Run a search and return one page of ``{listings, total, totalRelation, page, pageSize, nextCursor}``.

    The listings of ``viewer_id``'s blocks (users they block or are blocked by, one Query) are
    left out of the page after it is read: a page may then hold fewer listings than
    ``pageSize``, and ``total`` counts them (the indexes are shared by every viewer).

    Raises
    ------
    RuleViolation
        The cursor is malformed, edited or belongs to another query (field ``cursor``).
    """
    position = query.page.position(query.scope)
    relation: Literal["eq", "gte"] = "eq"
    owners = _Owners()
    scores: dict[str, float] = {}
    if query.ranked:
        if position.key is not None:  # a relevance page is positioned by its offset, never by a key
            position = Position(position.scope, position.page, position.page_size)
        ranked = _ranked(query, position, owners)
        rows: list[tuple[float | None, ListingRecord]] = [(None, item) for item, _ in ranked.rows]
        scores = {item["listingId"]: round(score, 4) for item, score in ranked.rows}
        total, relation = ranked.total, ranked.relation
        next_cursor = position.next_cursor(ranked.has_more)
    elif query.geo is None:
        streamed = _stream(query, position, owners)
        rows = [(None, item) for item in streamed.items]
        total, relation = streamed.total, streamed.relation
        next_cursor = position.next_cursor(streamed.has_more, streamed.last_key)
    else:
        found = nearest.page(query, position)
        rows = nearest.rows_of(found, functools.partial(_fresh, query, owners=owners))
        total, relation = found.total, found.relation
        next_cursor = position.next_cursor(found.has_more, found.last_key)
    hidden = blocks.hidden_from(viewer_id) if viewer_id else frozenset()
    rows = [(distance, item) for distance, item in rows if item["ownerId"] not in hidden]
    people = owners.of(item["ownerId"] for _, item in rows)
    listings = [
        {**view_fields(item, people.get(item["ownerId"])),
         "distanceKm": None if distance is None else round(distance, 2), "score": scores.get(item["listingId"])}
        for distance, item in rows
    ]
    return ListingPage.model_validate({  # one validation for the page, not one per listing
        "listings": listings, "total": total, "totalRelation": relation, "page": position.page,
        "pageSize": position.page_size, "nextCursor": next_cursor,
    })
