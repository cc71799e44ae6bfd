"""Listing search (DESIGN §1 "Search", issue 13; docs/search.md).

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeIs

from chalicelib import typo_dictionary, users
from chalicelib.categories.registry import all_categories
from chalicelib.listings import counters, repository, status
from chalicelib.listings.index import SHARDS, category_partition, newest_key, role_partition
from chalicelib.listings.models import ListingPage
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search import filters, nearest, planner, ranking
from chalicelib.listings.search.postings import NAMESPACE, VALUE_TYPES, category_list, newest_of_number_sort
from chalicelib.listings.search.query import SearchQuery
from chalicelib.listings.service import view_fields
from chalicelib.pagination import Position
from chalicelib.search import join, postings
from chalicelib.search import planner as engine
from chalicelib.search.merge import Fetch, merge_newest
from chalicelib.text_analysis import typos

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
#: so the window is sized to stay within the page budget of docs/search.md (issue 20) whatever the
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
    #: The paths intersected by merge join instead of reading ``best`` alone (none: no join).
    joined: list[planner.Path] = field(default_factory=list)
    #: The one path read with the query's other filters checked on its covering entries, and the
    #: engine planner's estimate (:mod:`chalicelib.search.planner`); ``None``: another way.
    driver: planner.Path | None = None
    drive: engine.Drive | None = None


def _corrections(query: SearchQuery, scope: list[str]) -> dict[str, list[str]]:
    """The typo dictionary's corrections of the query's terms (one BatchGetItem; none for short terms)."""
    eligible = [t for t in query.terms if typos.max_typos(t)]
    return typo_dictionary.corrections(NAMESPACE, scope, eligible) if eligible else {}


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


def _expected_hits(path: planner.Path, sizes: dict[str, int]) -> float:
    """Entries of ``path`` expected to satisfy its restriction: a number bucket at a range's end about
    half; a ``q`` term's union about its largest list (a listing sits in its stem and prefix lists both)."""
    if path.label.startswith("q:"):
        return float(max((sizes.get(n, 0) for n in path.lists), default=0))
    return sum(sizes.get(n, 0) * (0.5 if n in path.partial else 1.0) for n in path.lists)


def _choose(query: SearchQuery, scope: list[str], want: int = READ_BUDGET) -> _Choice:
    """Plan the query, read the sizes and the ACTIVE count, probe ranges: the path to read."""
    paths = planner.plan(query, _corrections(query, scope) if query.terms else None)
    categories = [category_list(c, query.role) for c in paths.scope]
    names = [*paths.list_names(), *categories]
    sizes = postings.sizes(names) if names else {}
    # The ACTIVE count of the searched categories (and role): their key-only category lists' sizes, read
    # with the other sizes (the counters say the same once the index has caught up; this is an estimate).
    stream_size = sum(sizes.get(name, 0) for name in categories)
    best = planner.choose(paths, sizes, stream_size)
    choice = _Choice(paths, sizes, best, stream_size)
    covered = _covered_drive(query, paths, sizes, stream_size, want)
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


def _stream(query: SearchQuery, position: Position) -> _Streamed:
    """One newest-first page of a search without geo filter: the native page, or the planner's path."""
    scope = [query.category.key] if query.category else list(all_categories())
    if is_index_native(query):
        if position.key is None and position.offset:
            return _skipped_native_page(query, position, scope)
        return _category_stream(query, position, counters.read_counts(scope, query.role))
    choice = _choose(query, scope, (0 if position.key else position.offset) + position.page_size + 1)
    best, sizes = choice.best, choice.sizes
    if choice.driver is not None:
        return _covered_page(query, position, choice)
    if choice.range_keys is not None:
        found = choice.range_keys
        after = [key for key in found if position.key is None or key < position.key]
        ids = (key.rsplit("#", 1)[1] for key in after)
        return _verified_page(query, position, ids, len(found), exact=choice.range_exact)
    if choice.joined:
        return _joined_page(query, position, choice)
    if best.kind == "stream":
        return _category_stream(query, position, None, best.size)
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
        ids: Iterator[str] = (hit.item_id for hit in _covered_hits(query, choice, None, window, candidates=True))
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


def _ranked(query: SearchQuery, position: Position) -> _Ranked:
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
        fresh = {item["listingId"]: item for item in _fresh(query, [item for item, _ in page])}
        page = [(fresh[item["listingId"]], score) for item, score in page if item["listingId"] in fresh]
    return _Ranked(page, len(rows), "eq" if exhausted else "gte", len(rows) > need or not exhausted)


def _probe_range(path: planner.Path, budget: int) -> list[str] | None:
    """The newest keys of every listing in a range, newest first, or ``None`` when it holds more than
    ``budget`` (at most ``budget`` + 1 entries read)."""
    keys: list[str] = []
    for name in path.lists:
        after: str | None = None
        while True:
            read = postings.read(name, budget + 1 - len(keys), after=after, descending=False, low=path.low, high=path.high,
                                 keys_only=True)
            keys += [newest_of_number_sort(p.sort) for p in read.postings]
            if len(keys) > budget:
                return None
            if not read.more or not read.postings:
                break
            after = read.postings[-1].sort
    return sorted(keys, reverse=True)


def _newest_ids(path: planner.Path, sizes: dict[str, int], before: str | None, want: int) -> Iterator[str]:
    """The listing ids of a newest-first list path, merged over its categories' lists from ``before``.

    Empty lists are not read. Each list's first Query asks for its share of the ``want``
    entries the caller expects (proportional to the list's size, plus one), so a page usually
    costs one Query per list; the merge asks a list again only when its share runs out.
    """
    total = sum(sizes.get(name, 0) for name in path.lists) or 1

    def fetch(name: str, after: str | None, limit: int) -> tuple[list[postings.Posting], bool]:
        if after == before:  # the first Query of this list
            limit = max(limit, math.ceil(want * sizes.get(name, 0) / total) + 1)
        read = postings.read(name, limit, after=after, keys_only=True)
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
                  candidates: bool = False) -> Iterator[join.Hit]:
    """The entries of the chosen driver that pass the query's entry checks, newest first from ``before``.

    The driver's lists are read together (one parallel step per refill), each Query sized by a
    :class:`chalicelib.search.join.Pace` from the planner's estimate of the share accepted;
    ``whole_list``: read every entry in the first step instead (a small list counted whole).
    ``want``: the matches expected, or (``candidates``) the accepted entries expected.
    """
    path, drive, sizes = choice.driver, choice.drive, choice.sizes
    if path is None or drive is None:
        return iter(())
    total = sum(sizes.get(name, 0) for name in path.lists) or 1
    members = [
        join.Member(name, sizes[name] + 1 if whole_list else 0, exact=name not in path.partial, share=sizes[name] / total)
        for name in path.lists if sizes.get(name, 0)
    ]
    if not members:
        return iter(())
    wanted = want if candidates else math.ceil(want / max(drive.item_rate, 0.05))
    pace = None if whole_list else join.Pace(wanted, drive.entry_rate)
    check = filters.entry_check(query)
    return join.intersect([members], postings.read, descending=True, after=before,
                          accept=lambda entry: check(entry.data), pace=pace)


def _covered_page(query: SearchQuery, position: Position, choice: _Choice) -> _Streamed:
    """A page read from one path, the query's other filters checked on its covering entries.

    When the entries decide the whole query (:func:`filters.covered`), matches before the page
    (``page=N`` without a cursor) and the one past it are counted from their entries, and only
    the page's listings are read (one BatchGetItem), re-verified by :func:`filters.evaluate`
    (a listing changed since it was filed is left out). Otherwise (``q`` terms) the accepted
    entries' listings are read in batches and verified until one match past the page.
    ``total``: the path's size when it is exact for the query; else the matches counted, exact
    when the path ended (a path of at most :data:`COUNT_ENTRIES` entries is read whole and
    counted), else ``"gte"``.
    """
    skip = 0 if position.key else position.offset
    need = skip + position.page_size
    path = choice.driver or choice.best
    exact = path.exact and not query.role and path.label != "category"
    size = sum(choice.sizes.get(name, 0) for name in path.lists)
    whole = filters.covered(query)
    whole_list = size <= min(COUNT_ENTRIES, READ_BUDGET)
    hits = _covered_hits(query, choice, position.key, need + 1, whole_list=whole_list)
    page: list[ListingRecord] = []
    matches = 0
    exhausted = True
    if whole:
        on_page: list[str] = []
        for hit in hits:
            matches += 1
            if skip < matches <= need:
                on_page.append(hit.item_id)
            elif matches > need and (exact or not whole_list):
                exhausted = False
                break
        page.extend(_matching(query, on_page))
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
    before = position.offset if position.key else 0
    last_key = newest_key(page[-1]) if page else position.key
    if exact:
        return _Streamed(page, size, "eq", position.after(size) and bool(page), last_key)
    return _Streamed(page, before + matches, "eq" if exhausted else "gte", matches > need, last_key)


def _is_match(item: ListingRecord | None, query: SearchQuery) -> TypeIs[ListingRecord]:
    """True when ``item`` (as read from the table, ``None`` if gone) is public and satisfies ``query``."""
    return item is not None and status.is_public(item["status"]) and filters.evaluate(query, item) is not None


def _matching(query: SearchQuery, ids: list[str]) -> list[ListingRecord]:
    """The listings of ``ids`` that match ``query`` now, in the order of ``ids``: one BatchGetItem
    (none for no ids), each verified by :func:`_is_match` (never a stale status or content)."""
    found = repository.get_many(ids) if ids else {}
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


def _verified_page(query: SearchQuery, position: Position, ids: Iterator[str], size: int, exact: bool) -> _Streamed:
    """A page from candidate listing ids (newest first, ``size`` of them on the whole path): each
    read from the table (BatchGetItem, so never a stale status) and verified by :func:`filters.evaluate`.

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
        for item in _matching(query, chunk):
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


def _category_stream(query: SearchQuery, position: Position, exact: int | None, size: int = 0) -> _Streamed:
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
        return _Streamed(_fresh(query, page), exact, "eq", position.after(exact) and bool(page), last_key)
    return _Streamed(_fresh(query, page), before + matches, "eq" if exhausted else "gte", matches > need, last_key)


def _skipped_native_page(query: SearchQuery, position: Position, scope: list[str]) -> _Streamed:
    """``page=N`` (N > 1) of a page without filters and without a cursor: the skipped listings are
    passed over as key-only entries of the category lists (:func:`category_list`), never read;
    the page's listings are read by one BatchGetItem. ``total``: the counters (exact). While the
    lists' sizes differ from the counters (the stream-maintained index lags a change), the page
    is read from the write-sharded indexes as a cursorless page always was."""
    names = [category_list(c, query.role) for c in scope]
    sizes, total = join.both(lambda: postings.sizes(names), lambda: counters.read_counts(scope, query.role))
    if sum(sizes.values()) != total:  # the index lags the table (a change not yet filed): read the table's index
        return _category_stream(query, position, total)
    need = position.offset + position.page_size
    path = planner.Path("list", "category", tuple(names), sum(sizes.values()))
    ids = list(itertools.islice(_distinct(_newest_ids(path, sizes, None, need)), position.offset, need))
    found = repository.get_many(ids) if ids else {}
    page = [item for i in ids if (item := found.get(i)) is not None and status.is_public(item["status"])]
    last_key = newest_key(page[-1]) if page else None
    return _Streamed(page, total, "eq", position.after(total) and bool(page), last_key)


def _fresh(query: SearchQuery, page: list[ListingRecord]) -> list[ListingRecord]:
    """The page re-read from the table (one BatchGetItem): a listing paused, edited or deleted
    since the index was read (the index lags by a moment) is left out."""
    found = repository.get_many([item["listingId"] for item in page]) if page else {}
    fresh: list[ListingRecord] = []
    for item in page:
        current = found.get(item["listingId"])
        unchanged = current is not None and status.is_public(current["status"]) and current.get("version") == item.get("version")
        if unchanged and current is not None and filters.evaluate(query, current) is not None:
            fresh.append(current)
    return fresh


def search_listings(query: SearchQuery) -> ListingPage:
    """Run a search and return one page of ``{listings, total, totalRelation, page, pageSize, nextCursor}``.

    Raises
    ------
    RuleViolation
        The cursor is malformed, edited or belongs to another query (field ``cursor``).
    """
    position = query.page.position(query.scope)
    relation: Literal["eq", "gte"] = "eq"
    scores: dict[str, float] = {}
    if query.ranked:
        if position.key is not None:  # a relevance page is positioned by its offset, never by a key
            position = Position(position.scope, position.page, position.page_size)
        ranked = _ranked(query, position)
        rows: list[tuple[float | None, ListingRecord]] = [(None, item) for item, _ in ranked.rows]
        scores = {item["listingId"]: round(score, 4) for item, score in ranked.rows}
        total, relation = ranked.total, ranked.relation
        next_cursor = position.next_cursor(ranked.has_more)
    elif query.geo is None:
        streamed = _stream(query, position)
        rows = [(None, item) for item in streamed.items]
        total, relation = streamed.total, streamed.relation
        next_cursor = position.next_cursor(streamed.has_more, streamed.last_key)
    else:
        found = nearest.page(query, position)
        rows = nearest.rows_of(found, functools.partial(_fresh, query))
        total, relation = found.total, found.relation
        next_cursor = position.next_cursor(found.has_more, found.last_key)
    owners = users.get_users(list({item["ownerId"] for _, item in rows}))
    listings = [
        {**view_fields(item, owners.get(item["ownerId"])),
         "distanceKm": None if distance is None else round(distance, 2), "score": scores.get(item["listingId"])}
        for distance, item in rows
    ]
    return ListingPage.model_validate({  # one validation for the page, not one per listing
        "listings": listings, "total": total, "totalRelation": relation, "page": position.page,
        "pageSize": position.page_size, "nextCursor": next_cursor,
    })
