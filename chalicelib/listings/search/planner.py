"""The query planner of listing search without a geo filter (pure; no store): which path to read.

A search's paths (each newest first unless noted, each a list per category of its scope, merged):

* the **category stream**: the newest-first index of the category (of category + role when
  ``role`` is given); its size is the ACTIVE count from the counters;
* a **value list** per equality filter (select, boolean, number, integer) and per option of a
  multiselect filter (``contains`` every option: each option's list holds every match);
* a **term union** per ``q`` term: the stem list of the term's stem, the stem lists of its
  corrections (:mod:`chalicelib.typo_dictionary`, at most :data:`MAX_CORRECTIONS`) and, for the
  last term, its prefix list (capped at five letters:
  :func:`chalicelib.listings.search.postings.word_list`), read together newest first; its size
  is the sum of theirs (an upper bound: a listing may sit in several). A term without such a
  union (a stop word that is not the last, a one-letter last term, a term with more
  corrections than :data:`MAX_CORRECTIONS`) is verified on another path;
* a **range** per number field filtered by ``_min`` / ``_max``: the field's value-sorted list
  between the bounds. Its size is not known before reading (the list's size counts every
  value), so the service probes it only when every other path is large (:func:`plan_ranges`);
* a **bucket union** per such range: the newest-first lists of the power-of-two buckets the
  range overlaps (:mod:`chalicelib.search.buckets`); the buckets at its ends are ``partial``
  (their candidates are verified), the others exact.

With several restrictions, :func:`join_paths` picks the ones worth intersecting by zigzag merge
join (:mod:`chalicelib.search.join`): the smallest, and every other that keeps at most
:data:`JOIN_FRACTION` of the scope (a restriction holding most listings filters too little to
pay for its reads; its candidates are verified instead), at most :data:`MAX_JOIN`.

:func:`choose` takes the smallest path by posting-list size: its listings are the fewest
candidates that can hold every match (Selinger et al., "Access path selection in a relational
database management system", SIGMOD 1979: cheapest access path by estimated cardinality; here
the cardinalities are exact counts). Every candidate is then verified by
:func:`chalicelib.listings.search.filters.evaluate`, the one matching rule. A path is **exact**
when its entries are exactly the query's matches (one filter or term, no role, and a list that
is exact for it), so ``total`` is its size without verifying it. A term union is never exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Literal

from chalicelib.categories.registry import all_categories
from chalicelib.listings.search.postings import (
    MIN_PREFIX,
    VALUE_TYPES,
    bucket_list,
    number_list,
    stem_list,
    value_list,
    word_list,
)
from chalicelib.listings.search.query import SearchQuery, language_of
from chalicelib.search import buckets, join
from chalicelib.search.postings import number_bounds
from chalicelib.text_analysis.analyzer import query_terms, stem

#: Most corrections of one ``q`` term read as lists; a term with more is verified on another path
#: (each correction is one more list to size and merge).
MAX_CORRECTIONS = 16
#: Restrictions a conjunction intersects at most, and the largest share of the scope's listings
#: a restriction may hold to be intersected rather than verified (docs/search.md, "Conjunctions").
MAX_JOIN = 4
JOIN_FRACTION = 0.5
#: No join when the smallest path holds at most this many listings: one Query reads it whole and
#: one BatchGetItem (at most 100 keys, AWS docs) verifies it, while a join would add seeks into
#: the larger lists (measured: ``bench/relevance.py``'s two-word queries with a rare word read
#: 139 and 194 items joined, against budgets of 137 and 179, and fit unjoined).
JOIN_MIN_SMALLEST = 100


@dataclass(frozen=True)
class Path:
    """One way to read a search's candidates."""

    #: ``"stream"`` (the category or role index), ``"list"`` (newest-first posting lists) or ``"range"`` (a value-sorted
    #: number list between ``low`` and ``high``).
    kind: Literal["stream", "list", "range"]
    #: What the path stands for, e.g. ``"category"``, ``"q:rust"``, ``"meta.employmentType"``.
    label: str
    #: The posting lists, one per category of the scope (empty for the stream).
    lists: tuple[str, ...] = ()
    #: Entries on the path (for a range: every value of the field, an upper bound).
    size: int = 0
    #: Every entry matches the whole query (``total`` = ``size``).
    exact: bool = False
    #: ``low``, ``high``: Sort bounds of a range (:func:`chalicelib.search.postings.number_bounds`), ``None`` = open.
    low: str | None = None
    high: str | None = None
    #: Lists whose entries may fail the restriction (a bucket reaching past the range's end).
    partial: tuple[str, ...] = ()

    def members(self) -> list[tuple[str, bool]]:
        """``(list, exact)`` of each list: whether its every entry satisfies this restriction."""
        whole = not self.label.startswith("q:")
        return [(name, whole and name not in self.partial) for name in self.lists]


@dataclass
class Plan:
    """The paths of one query before sizes are known: the lists to size and how they group."""

    scope: list[str]
    lists: list[Path] = field(default_factory=list)
    ranges: list[Path] = field(default_factory=list)
    #: Per ``q`` term (query order): the stem lists of the term itself, whose sizes are its
    #: document frequency (BM25's n_t).
    term_stems: list[tuple[str, ...]] = field(default_factory=list)

    def list_names(self) -> list[str]:
        """Every posting list whose size the choice (or the score) needs, without repeats."""
        names = (name for path in (*self.lists, *self.ranges) for name in path.lists)
        return list(dict.fromkeys([*names, *(n for stems in self.term_stems for n in stems)]))


def term_lists(category_key: str, position: int, terms: list[str], corrections: list[str]) -> list[str] | None:
    """The lists of the union of ``q`` term ``terms[position]`` in a category, or ``None`` without one."""
    term = query_terms(terms, language_of(category_key))[position]
    if term.ignored or (term.prefix and len(term.word) < MIN_PREFIX) or len(corrections) > MAX_CORRECTIONS:
        return None
    language = language_of(category_key)
    names = [stem_list(category_key, term.stem)]
    if term.prefix:
        names.append(word_list(category_key, term.word) or "")
    for entry in corrections:  # a word (its stem's list) or a stem (its own list)
        names += [stem_list(category_key, stem(entry, language)), stem_list(category_key, entry)]
    return list(dict.fromkeys(names))


def _restrictions(query: SearchQuery) -> int:
    """How many filters and terms the query has (``_min`` and ``_max`` of one field count once)."""
    ranged = {f.key for f in query.filters if f.op in ("min", "max")}
    return len(query.terms) + len([f for f in query.filters if f.op not in ("min", "max")]) + len(ranged)


def searched_categories(query: SearchQuery) -> list[str]:
    """The categories that can hold a match: the query's, or every category having each filtered field
    (a listing without a field fails its filter, so a category without it has no match to read)."""
    categories = all_categories()
    keys = [query.category.key] if query.category else list(categories)
    wanted = {f.key for f in query.filters}
    return [key for key in keys if wanted <= {f.key for f in categories[key].fields}]


def plan(query: SearchQuery, corrections: dict[str, list[str]] | None = None) -> Plan:
    """The candidate paths of ``query`` (no geo filter), sizes not yet known.

    ``corrections``: per ``q`` term, its corrections from the typo dictionary (none when absent).
    """
    scope = searched_categories(query)
    single = _restrictions(query) == 1 and not query.role
    result = Plan(scope)
    for position, term in enumerate(query.terms):
        fixes = (corrections or {}).get(term, [])
        unions = [term_lists(c, position, query.terms, fixes) for c in scope]
        result.term_stems.append(tuple(stem_list(c, stem(term, language_of(c))) for c in scope))
        if all(u is not None for u in unions):
            result.lists.append(Path("list", f"q:{term}", tuple(n for u in unions for n in u or [])))
    bounds: dict[str, dict[str, str]] = {}
    for meta in query.filters:
        if meta.op in ("min", "max"):
            bounds.setdefault(meta.key, {})[meta.op] = meta.value
        elif meta.type in VALUE_TYPES:
            options = meta.value.split(",") if meta.op == "contains" else [meta.value]
            for option in options:
                result.lists.append(Path(
                    "list", f"meta.{meta.key}={option}", tuple(value_list(c, meta.key, option) for c in scope),
                    exact=single and len(options) == 1,
                ))
    for key, ends in bounds.items():  # the parser allows _min / _max on number and integer fields only
        low, high = number_bounds(ends.get("min"), ends.get("max"))
        result.ranges.append(Path("range", f"meta.{key}", tuple(number_list(c, key) for c in scope), exact=single, low=low, high=high))
        found = buckets.overlapping(*(Decimal(ends[end]) if end in ends else None for end in ("min", "max")))
        partial = tuple(bucket_list(c, key, label) for c in scope for label, inside in found if not inside)
        result.lists.append(Path(
            "list", f"meta.{key}", tuple(bucket_list(c, key, label) for c in scope for label, _ in found),
            exact=single and not partial, partial=partial,
        ))
    return result


def sized(path: Path, sizes: dict[str, int]) -> Path:
    """``path`` with its size: the sum of its lists' sizes."""
    return replace(path, size=sum(sizes.get(n, 0) for n in path.lists))


def join_paths(paths: Plan, sizes: dict[str, int], stream_size: int) -> list[Path]:
    """The list paths to intersect by merge join, smallest first (fewer than two: no join).

    None when the smallest path holds at most :data:`JOIN_MIN_SMALLEST` listings. Else the
    smallest path always; each other path only when it holds at most :data:`JOIN_FRACTION`
    of the scope's ``stream_size`` ACTIVE listings and lowers the weighted read cost
    (:func:`chalicelib.search.join.worth_joining`); at most :data:`MAX_JOIN`.
    """
    ordered = sorted((sized(p, sizes) for p in paths.lists), key=lambda p: p.size)
    if len(ordered) < 2 or ordered[0].size >= stream_size or ordered[0].size <= JOIN_MIN_SMALLEST:
        return []
    chosen = [ordered[0], *(p for p in ordered[1:] if p.size <= JOIN_FRACTION * stream_size)]
    count = join.worth_joining([min(1.0, p.size / max(stream_size, 1)) for p in chosen], MAX_JOIN)
    return chosen[:count] if count > 1 else []


def choose(paths: Plan, sizes: dict[str, int], stream_size: int) -> Path:
    """The smallest newest-first path: the category stream (``stream_size`` listings) or a list.

    Ties prefer the stream (its items come with the index read; a list's candidates are read
    again from the table) and then exact paths.
    """
    stream = Path("stream", "category", size=stream_size)
    candidates = [stream, *(sized(p, sizes) for p in paths.lists)]
    return min(candidates, key=lambda p: (p.size, p.kind != "stream", not p.exact))


def plan_ranges(paths: Plan, sizes: dict[str, int], best: Path, budget: int) -> list[Path]:
    """The ranges worth probing before reading ``best``, smallest field first.

    A range is read in value order, so it must be read whole before its newest listing is
    known; it is worth it only when ``best`` is larger than ``budget`` (else ``best`` is read
    whole anyway). The caller probes each with at most ``budget`` + 1 entries and keeps the
    first that ends within them.
    """
    if best.size <= budget:
        return []
    return sorted((sized(p, sizes) for p in paths.ranges), key=lambda p: p.size)
