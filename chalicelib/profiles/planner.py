"""The profile search planner: which posting lists to read for a query (pure; no DynamoDB here).

Every filter of a query can be served by a *source*: one posting list, or a union of lists
read merged in sort-key order (:mod:`chalicelib.profiles.index`). :func:`sources` lists the
sources of a query's filters; :func:`choose` picks the one with the fewest members from the
lists' sizes (read by the caller in one BatchGetItem of the counts of :func:`size_lists`),
the classic "start from the rarest term" rule of query evaluation over inverted indexes
(Manning, Raghavan, Schütze, *Introduction to Information Retrieval*, §1.3). Candidates of
that source are then verified against the other filters by
:func:`chalicelib.profiles.search.matches` unless the source alone is the whole query.

Sources, by filter:

* each ``q`` word (:func:`chalicelib.profiles.text.searched`: a dropped stop word has none):
  the list of its stem, and for the last word also the list of its prefix (capped at
  :data:`~chalicelib.profiles.index.MAX_PREFIX` characters), read merged. The union holds every
  profile with the same word, a word of the same stem or (last word) a word it starts; it is
  never exact (a stem list also holds words of the same stem with another first letter, and the
  sum of the two sizes counts a profile in both twice), so its candidates are verified;
* the last ``q`` word, when its stem starts with it (``grace``, ``pyth``, ``python``: most
  words being typed), also: its prefix list merged with the stem's exception list
  (:func:`chalicelib.profiles.index.stem_exception_list`). A word of that stem either starts
  with the stem, hence with the ``q`` word, or is an exception, so this union holds every
  match; when the exception list is empty it is the prefix list alone, exact for words of at
  most :data:`~chalicelib.profiles.index.MAX_PREFIX` characters (``q=grace`` alone: ``total``
  from the list's size, no verification);
* each skill: its list; for two skills among the first :data:`PAIR_CANDIDATES` of the query,
  their pair list merged with the ``many-skills`` list of one of them (a superset);
* ``country``, ``seniority``, ``openToWork``, ``remote``, ``channel``: their list;
* ``minVerifiedLevel=k`` (and a query without filters, ``k = 0``): the level lists
  ``3, 2, .., k`` read one after the other (their keys are disjoint and ordered).

Every list is ordered by level first, so a read from any source stops at the first member
below ``minVerifiedLevel``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from chalicelib.profiles import index
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.profiles.text import searched
from chalicelib.search import join
from chalicelib.users.models import MAX_VERIFIED_LEVEL

#: Skills of a query (in the given order) whose pairs are considered: 5 skills, 10 pair lists.
PAIR_CANDIDATES = 5
#: Sources a conjunction intersects at most, and the largest share of all profiles a source may
#: hold to be intersected rather than verified (docs/search.md, "Conjunctions").
MAX_JOIN = 4
JOIN_FRACTION = 0.5


@dataclass(frozen=True)
class Source:
    """A way to read candidates: the members of ``lists`` in sort-key order."""

    #: The filter it serves, for logs and tests (``"skills=go,rust"``, ``"q=eng"``, ``"level>=0"``).
    name: str
    #: Posting list names.
    lists: tuple[str, ...]
    #: True when its members are exactly the users passing that filter (else a superset).
    exact: bool = True
    #: True when each list's keys all sort before the next list's (the level lists): read one after the other instead of
    #: merged.
    concatenated: bool = False
    #: For concatenated lists, an inclusive upper bound of each list's keys: a list whose ceiling sorts before a
    #: cursor's position holds nothing after it and is not read.
    ceilings: tuple[str, ...] = ()
    #: Lists of ``lists`` that make the source inexact unless they are empty; when they are (by the sizes),
    #: :func:`settle` leaves them out and the source is ``exact``.
    exact_when_empty: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The chosen source and how to read it."""

    #: What to read.
    source: Source
    #: Members of its lists (from the counts): the most candidates it can yield.
    size: int
    #: True when candidates must pass :func:`chalicelib.profiles.search.matches` for more than the source guarantees
    #: (several filters, or an inexact source); False means ``size`` is the query's exact total.
    verify: bool
    #: The reading stops at the first member below this verification level.
    min_level: int
    #: Sources intersected by merge join instead of reading ``source`` alone (smallest first;
    #: empty: no join). Their candidates are verified like ``source``'s.
    joined: tuple[Source, ...] = ()


def level_source(min_level: int) -> Source:
    """The users at ``min_level`` or above: level lists 3 down to ``min_level``, concatenated."""
    levels = range(MAX_VERIFIED_LEVEL, min_level - 1, -1)
    return Source(
        f"level>={min_level}", tuple(index.level_list(level) for level in levels), concatenated=True,
        ceilings=tuple(index.level_bound(level) for level in levels),
    )


def _skills(query: ProfileSearchQuery) -> list[str]:
    return list(dict.fromkeys(query.skills or []))


def conditions(query: ProfileSearchQuery, terms: Sequence[str]) -> int:
    """How many independent conditions ``query`` sets (each ``q`` word and each skill count once)."""
    single = (query.country, query.openToWork, query.seniority, query.remote, query.channel)
    return (
        len(searched(terms)) + len(_skills(query)) + sum(value is not None for value in single)
        + (1 if query.minVerifiedLevel else 0)
    )


def sources(query: ProfileSearchQuery, terms: Sequence[str]) -> list[Source]:
    """Every source that can serve one filter of ``query`` (``terms``: the folded words of ``q``).

    A query without any filter gets the level source of everyone.
    """
    found = [
        Source(f"q={term.word}", (index.stem_list(term.stem), *([index.word_list(term.word)] if term.prefix else [])), exact=False)
        for term in searched(terms)
    ]
    found += [
        Source(f"q={term.word}", (index.word_list(term.word), exception), exact=len(term.word) <= index.MAX_PREFIX,
               exact_when_empty=(exception,))
        for term in searched(terms)
        if term.prefix and term.stem.startswith(term.word) and (exception := index.stem_exception_list(term.stem))
    ]
    skills = _skills(query)
    found += [Source(f"skills={skill}", (index.skill_list(skill),)) for skill in skills]
    for first, second in combinations(skills[:PAIR_CANDIDATES], 2):
        pair = index.skill_pair_list(first, second)
        for overflow in (first, second):
            found.append(Source(f"skills={first},{second}", (pair, index.many_skills_list(overflow)), exact=False))
    if query.country is not None:
        found.append(Source(f"country={query.country}", (index.country_list(query.country),)))
    if query.seniority is not None:
        found.append(Source(f"seniority={query.seniority}", (index.seniority_list(query.seniority),)))
    if query.openToWork is not None:
        found.append(Source(f"openToWork={query.openToWork}", (index.open_list(query.openToWork),)))
    if query.remote is not None:
        found.append(Source(f"remote={query.remote}", (index.remote_list(query.remote),)))
    if query.channel is not None:
        found.append(Source(f"channel={query.channel.value}", (index.channel_list(query.channel.value),)))
    if query.minVerifiedLevel or not found:
        found.append(level_source(query.minVerifiedLevel or 0))
    return found


def size_lists(options: Sequence[Source]) -> list[str]:
    """The distinct lists whose sizes :func:`choose` needs, in a stable order."""
    return list(dict.fromkeys(name for source in options for name in source.lists))


def settle(source: Source, sizes: Mapping[str, int]) -> Source:
    """``source`` without its :attr:`~Source.exact_when_empty` lists when they are all empty
    (keeping its exactness), else with them and inexact."""
    if not source.exact_when_empty:
        return source
    if any(sizes.get(name, 0) for name in source.exact_when_empty):
        return replace(source, exact=False, exact_when_empty=())
    kept = tuple(name for name in source.lists if name not in source.exact_when_empty)
    return replace(source, lists=kept, exact_when_empty=())


def choose(query: ProfileSearchQuery, terms: Sequence[str], options: Sequence[Source], sizes: Mapping[str, int],
           universe: int = 0) -> Plan:
    """The source with the fewest members (an exact one on ties, then the fewest lists).

    Parameters
    ----------
    query, terms:
        The query and the folded words of its ``q``.
    options:
        :func:`sources` of the query (not empty).
    sizes:
        Members per list name; a list absent from ``sizes`` is empty.
    universe:
        Profiles in all (the level lists' sizes): what a joined filter's share is measured against.
    """
    def size(source: Source) -> int:
        return sum(sizes.get(name, 0) for name in source.lists)

    settled = [settle(source, sizes) for source in options]
    best = min(settled, key=lambda source: (size(source), not source.exact, len(source.lists)))
    verify = not best.exact or conditions(query, terms) > 1
    return Plan(best, size(best), verify, query.minVerifiedLevel or 0, join_sources(settled, sizes, universe) if verify else ())


def join_sources(settled: Sequence[Source], sizes: Mapping[str, int], universe: int) -> tuple[Source, ...]:
    """The sources to intersect by merge join (:mod:`chalicelib.search.join`), smallest first.

    One source per filter (the smallest of its alternatives); the smallest overall, and every
    other holding at most :data:`JOIN_FRACTION` of the ``universe`` (all profiles; a filter most
    profiles pass is verified instead of read), as many as lower the weighted read cost
    (:func:`chalicelib.search.join.worth_joining`), at most :data:`MAX_JOIN`. Fewer than two: none.
    """
    def size(source: Source) -> int:
        return sum(sizes.get(name, 0) for name in source.lists)

    per_filter: dict[str, Source] = {}
    for source in settled:
        if source.name not in per_filter or size(source) < size(per_filter[source.name]):
            per_filter[source.name] = source  # alternatives of one filter share its name
    ordered = sorted(per_filter.values(), key=size)
    if len(ordered) < 2:
        return ()
    chosen = [ordered[0], *(s for s in ordered[1:] if size(s) <= JOIN_FRACTION * universe)]
    count = join.worth_joining([min(1.0, size(s) / max(universe, 1)) for s in chosen], MAX_JOIN)
    return tuple(chosen[:count]) if count > 1 else ()
