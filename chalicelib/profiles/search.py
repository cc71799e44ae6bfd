"""Profile sourcing search (``GET /v1/profiles/search``) from posting lists, never every user.

:func:`search_profiles` runs the plan of :mod:`chalicelib.profiles.planner`:

1. one BatchGetItem reads the sizes of the posting lists that could serve the query's filters
   (:mod:`chalicelib.profiles.index`, :mod:`chalicelib.search.postings`), and the planner picks the
   source with the fewest members;
2. the source is read in result order from the cursor's position (Queries with ``Limit``;
   several lists are merged by sort key), stopping at the first member below
   ``minVerifiedLevel`` (every list is ordered by level first);
3. the candidates' users are re-read from the Users table (BatchGetItem) and kept when they
   still sit where the list filed them (the stream has caught up with their last change) and
   pass :func:`matches`, the one matching rule; so a page never shows a stale profile, and a
   user appears at one position only.

**Totals.** When the source alone is the whole query (one filter, or none), ``total`` is its
size and the read stops with the page: items read ≈ 2 x pageSize + the sizes read. Otherwise
the read goes on past the page, counting matches, until the source is exhausted (``total``
exact, ``totalRelation: "eq"``) or :data:`READ_BUDGET` candidates have been examined, and
then stops at the next match, which proves a next page: ``total`` is then the matches counted,
a lower bound (``"gte"``).

**Cursors.** ``nextCursor`` carries the sort key of the page's last profile; the next page
starts right after it without reading the earlier ones. ``page=N`` without a cursor skips the
first ``(N - 1) x pageSize`` matches by reading them.

Order: verification level (highest first), then the most recently updated profile, then
``userId``. Postings follow profile changes through the Users table's stream
(:mod:`chalicelib.profiles.handlers`), about a second behind.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from chalicelib import blocks, users
from chalicelib.profiles import index, planner
from chalicelib.profiles.facets import Facets, facets
from chalicelib.profiles.models import ProfilePage, ProfileSearchQuery
from chalicelib.profiles.service import public_profile_fields
from chalicelib.profiles.text import matches_text, searched
from chalicelib.search import join, postings, statistics
from chalicelib.search import planner as engine
from chalicelib.text import words
from chalicelib.users.models import MAX_VERIFIED_LEVEL
from chalicelib.users.records import UserRecord

#: Candidates a search that verifies filters examines before ``total`` becomes a lower bound
#: (each costs one posting and one user read: about 1,000 items).
READ_BUDGET = 500
#: A covered read whose source holds at most this many entries reads it whole and counts every match
#: (``total`` exact); a larger one stops one match past the page (``"gte"``).
COUNT_ENTRIES = 50
#: Most entries one Query asks for, and most users one verification batch re-reads
#: (BatchGetItem takes 100 keys).
MAX_BATCH = 100


def matches(user: UserRecord, query: ProfileSearchQuery, terms: Sequence[str]) -> bool:
    """True when ``user`` passes every filter of ``query`` (``terms``: the folded words of ``q``).

    The one matching rule of profile search: ``q`` words must each match a word of the
    profile (:class:`~chalicelib.profiles.facets.Facets`) by the shared analyzer
    (:func:`chalicelib.profiles.text.matches_text`: same word, same stem, or a prefix for the
    last word), ``skills`` must all be listed,
    the other filters must be equal (``minVerifiedLevel``: at least).
    """
    return facets_match(facets(user), query, terms)


def facets_match(profile: Facets, query: ProfileSearchQuery, terms: Sequence[str]) -> bool:
    """:func:`matches` on a profile's :class:`~chalicelib.profiles.facets.Facets` already read out."""
    checks = (
        query.country is None or profile.country == query.country,
        query.minVerifiedLevel is None or profile.level >= query.minVerifiedLevel,
        not query.skills or set(query.skills) <= profile.skills,
        query.openToWork is None or profile.open_to_work == query.openToWork,
        query.seniority is None or profile.seniority == query.seniority,
        query.remote is None or profile.remote == query.remote,
        query.channel is None or query.channel.value in profile.channels,
    )
    if not all(checks):
        return False
    return matches_text(profile.words, terms)


@dataclass
class _Limit:
    """How many entries the next Query of a list asks for (the reader sets it per batch)."""

    value: int

    def __call__(self) -> int:
        return max(1, min(MAX_BATCH, self.value))


def _run(list_name: str, after: str | None, high: str | None, limit: Callable[[], int]) -> Iterator[postings.Posting]:
    """The entries of one list after ``after`` (and at most ``high``), ascending, read lazily."""
    while True:
        page = postings.read(list_name, limit(), after=after, descending=False, high=high, keys_only=True)
        yield from page.postings
        if not page.more or not page.postings:
            return
        after = page.postings[-1].sort


def candidates(plan: planner.Plan, after: str | None, limit: Callable[[], int],
               restrictions: Sequence[Sequence[join.Member]] = ()) -> Iterator[postings.Posting]:
    """The entries of the plan's source after ``after``, in result order, each user once.

    Parameters
    ----------
    plan:
        The planner's choice (lists, and the level to stop below).
    after:
        Exclusive start: the sort key of the last profile of the previous page, or ``None``.
    limit:
        Called before every Query: how many entries to ask for.
    restrictions:
        The plan's joined sources as join members (:func:`join_members`): their merge join
        replaces the reading of ``plan.source``.
    """
    high = index.level_bound(plan.min_level) if plan.min_level else None
    if restrictions:
        keys_only = functools.partial(postings.read, keys_only=True)
        for hit in join.intersect(restrictions, keys_only, descending=False, after=after, high=high):
            yield postings.Posting(hit.sort, hit.item_id)
        return
    names = plan.source.lists
    if after is not None and plan.source.ceilings:  # lists wholly before the cursor hold nothing after it
        names = tuple(n for n, ceiling in zip(names, plan.source.ceilings, strict=True) if ceiling > after)
    runs = [_run(name, after, high, limit) for name in names]
    merged = itertools.chain(*runs) if plan.source.concatenated else heapq.merge(*runs, key=lambda p: p.sort)
    previous: str | None = None
    for posting in merged:
        if posting.sort != previous:  # a user in two lists of a merged source
            yield posting
        previous = posting.sort


@dataclass
class _Found:
    """A page of users in result order and what is known of the rest."""

    users: list[UserRecord] = field(default_factory=list)
    total: int = 0
    relation: Literal["eq", "gte"] = "eq"
    has_more: bool = False
    last_key: str | None = None


def _current(batch: list[postings.Posting], query: ProfileSearchQuery, terms: Sequence[str]) -> list[tuple[str, UserRecord | None]]:
    """Each candidate's sort key with its user re-read from the table (one BatchGetItem per 100),
    or ``None`` when the user is gone, has moved since it was filed there, or no longer matches."""
    found = users.get_users([p.item_id for p in batch]) if batch else {}
    checked: list[tuple[str, UserRecord | None]] = []
    for posting in batch:
        user = found.get(posting.item_id)
        profile = None if user is None else facets(user)  # once per user: its sort key and the filters
        valid = profile is not None and index.sort_key(profile) == posting.sort and facets_match(profile, query, terms)
        checked.append((posting.sort, user if valid else None))
    return checked


def _counted_page(plan: planner.Plan, query: ProfileSearchQuery, terms: Sequence[str], skip: int, page_size: int,
                  after: str | None) -> _Found:
    """A page of a source that is the whole query: ``total`` is its size; reads stop with the page."""
    limit = _Limit(skip + page_size)
    stream = candidates(plan, after, limit)
    for _ in itertools.islice(stream, skip):
        pass
    found = _Found(total=plan.size, last_key=after)
    while len(found.users) < page_size:
        limit.value = page_size - len(found.users)
        batch = list(itertools.islice(stream, limit.value))
        for key, user in _current(batch, query, terms):
            if user is not None:
                found.users.append(user)
                found.last_key = key
        if len(batch) < limit.value:
            break
    return found


def join_members(plan: planner.Plan, sizes: Mapping[str, int], universe: int, want: int) -> list[list[join.Member]]:
    """The plan's joined sources as merge-join restrictions, each list's Query sized from the
    measured list sizes (:func:`chalicelib.search.join.limits`); every candidate is verified."""
    totals = [sum(sizes.get(name, 0) for name in source.lists) for source in plan.joined]
    return [
        join.members([(name, False) for name in source.lists], sizes, limit)
        for source, limit in zip(plan.joined, join.limits(totals, universe, want), strict=True)
    ]


def _verified_page(plan: planner.Plan, query: ProfileSearchQuery, terms: Sequence[str], skip: int, page_size: int,
                   after: str | None, restrictions: Sequence[Sequence[join.Member]] = ()) -> _Found:
    """A page whose candidates need :func:`matches`: counts matches past the page (see the module docstring)."""
    need = skip + page_size
    limit = _Limit(need)
    stream = candidates(plan, after, limit, restrictions)
    # A join's candidates cost entries of every joined list: count on past the page only as far as
    # one match (``total`` then a lower bound), instead of up to READ_BUDGET candidates.
    budget = need + 1 if restrictions else READ_BUDGET
    found = _Found(last_key=after)
    matched = examined = 0
    while True:
        batch = list(itertools.islice(stream, limit()))
        for key, user in _current(batch, query, terms):
            examined += 1
            if user is None:
                continue
            matched += 1
            if matched <= skip:
                continue
            if matched <= need:
                found.users.append(user)
                found.last_key = key
            elif examined >= budget:
                found.relation = "gte"  # one match past the page proves a next page
                break
        if found.relation == "gte" or len(batch) < limit():
            break
        limit.value = min(MAX_BATCH, 2 * limit.value)
    found.total = matched
    found.has_more = matched > need
    return found


def entry_matches(query: ProfileSearchQuery, data: Mapping[str, str] | None) -> bool:
    """Whether a posting entry's projection (:func:`chalicelib.profiles.index.projection`) passes
    the query's country, openToWork, skills, seniority, remote and channel filters, as
    :func:`matches` decides them on the user (``q`` is left to :func:`matches`; the level to the
    lists' sort bound). An entry without a projection passes (its user is verified later)."""
    return entry_check(query)(data)


def entry_check(query: ProfileSearchQuery) -> Callable[[Mapping[str, str] | None], bool]:
    """:func:`entry_matches` of ``query`` as a function of the projection alone, the filters given
    picked once (a covered read checks it on every entry it reads: a few hundred per page)."""
    equal = [(name, value) for name, value in (
        ("country", query.country),
        ("open", None if query.openToWork is None else str(query.openToWork).lower()),
        ("seniority", query.seniority),
        ("remote", None if query.remote is None else str(query.remote).lower()),
    ) if value is not None]
    contained = [(name, set(values)) for name, values in (
        ("skills", query.skills or ()), ("channels", (query.channel.value,) if query.channel is not None else ()),
    ) if values]

    def check(data: Mapping[str, str] | None) -> bool:
        if data is None:
            return True
        for name, value in equal:  # cheapest first, stopping at the first failure
            if data.get(name) != value:
                return False
        for name, wanted in contained:
            held = data.get(name)
            if not held or not wanted <= set(held.split(index.VALUES_SEPARATOR)):
                return False
        return True

    return check


def entry_fields(query: ProfileSearchQuery) -> tuple[str, ...]:
    """The names of an entry's projection that :func:`entry_matches` of ``query`` reads (one per
    filter given), so a covered read asks DynamoDB for those values only
    (:func:`chalicelib.search.postings.read`, ``fields``)."""
    given = {
        "country": query.country is not None, "open": query.openToWork is not None,
        "seniority": query.seniority is not None, "remote": query.remote is not None,
        "skills": bool(query.skills), "channels": query.channel is not None,
    }
    return tuple(name for name, used in given.items() if used)


def _covered_drive(options: Sequence[planner.Source], sizes: Mapping[str, int], universe: int,
                   want: int) -> tuple[planner.Source, engine.Drive] | None:
    """The one source to read with the other filters checked on its entries
    (:func:`chalicelib.search.planner.drive`), or ``None`` (two ``q`` words: the merge join)."""
    per_filter: dict[str, planner.Source] = {}
    for source in (planner.settle(s, sizes) for s in options):
        if source.name.startswith("level>="):
            continue  # the level is checked by the lists' sort bound
        # A skill pair's list (plus its many-skills overflow) holds far fewer entries than either
        # skill's: with rare pairs, driving one skill's list read it whole (bench/search.py,
        # "profiles skills+openToWork": 744 entries at 10,000 users against 524 before).
        size = sum(sizes.get(name, 0) for name in source.lists)
        if source.name not in per_filter or size < sum(sizes.get(n, 0) for n in per_filter[source.name].lists):
            per_filter[source.name] = source
    chosen = list(per_filter.values())
    if not chosen or sum(s.name.startswith("q=") for s in chosen) > 1:
        return None
    restrictions = [
        engine.Restriction(s.name, size := sum(sizes.get(name, 0) for name in s.lists), size, covered=not s.name.startswith("q="))
        for s in chosen
    ]
    drive = engine.drive(restrictions, universe, want)
    return (chosen[drive.index], drive) if drive is not None else None


def _covered_page(query: ProfileSearchQuery, terms: Sequence[str], source: planner.Source, drive: engine.Drive,
                  sizes: Mapping[str, int], min_level: int, skip: int, page_size: int, after: str | None) -> _Found:
    """A page read from one source, the other filters checked on its covering entries.

    Without ``q`` the entries decide the query: matches before the page and the one past it are
    counted from entries, and only the page's users are read (and re-verified, :func:`_current`).
    With ``q`` the accepted entries' users are read in batches and verified until one match past
    the page. ``total``: the matches counted, exact when the source ended (a source of at most
    :data:`COUNT_ENTRIES` entries is read whole and counted), else ``"gte"``.
    """
    need = skip + page_size
    high = index.level_bound(min_level) if min_level else None
    total = sum(sizes.get(name, 0) for name in source.lists) or 1
    whole_list = total <= min(COUNT_ENTRIES, READ_BUDGET)  # small: read it whole, count every match
    members = [join.Member(name, sizes[name] + 1 if whole_list else 0, exact=True, share=sizes[name] / total)
               for name in source.lists if sizes.get(name, 0)]
    pace = None if whole_list else join.Pace(math.ceil((need + 1) / max(drive.item_rate, 0.05)), drive.entry_rate)
    read = functools.partial(postings.read, fields=entry_fields(query))
    check = entry_check(query)
    hits = join.intersect([members], read, descending=False, after=after, high=high,
                          accept=lambda entry: check(entry.data), pace=pace) if members else iter(())
    found = _Found(last_key=after)
    matched = 0
    if not searched(terms):
        on_page: list[postings.Posting] = []
        for hit in hits:
            matched += 1
            if skip < matched <= need:
                on_page.append(postings.Posting(hit.sort, hit.item_id))
            elif matched > need and not whole_list:
                found.relation = "gte"
                break
        for key, user in _current(on_page, query, terms):
            if user is not None:
                found.users.append(user)
                found.last_key = key
    else:
        while found.relation == "eq":
            take = MAX_BATCH if whole_list else max(1, min(MAX_BATCH, need + 1 - matched))
            batch = [postings.Posting(h.sort, h.item_id) for h in itertools.islice(hits, take)]
            if not batch:
                break
            for key, user in _current(batch, query, terms):
                if user is None:
                    continue
                matched += 1
                if skip < matched <= need:
                    found.users.append(user)
                    found.last_key = key
                elif matched > need and not whole_list:
                    found.relation = "gte"
                    break
    found.total = matched
    found.has_more = matched > need
    return found


def _planned(query: ProfileSearchQuery, terms: Sequence[str], options: Sequence[planner.Source], sizes: dict[str, int],
             levels: Sequence[str], joinable: bool, want: int
             ) -> tuple[int, planner.Plan, tuple[planner.Source, engine.Drive] | None]:
    """The plan of a search from the lists' ``sizes``: the profiles counted (the level lists), the
    plan and the covered drive if one is read (``want``: the matches the page takes)."""
    universe = sum(sizes.get(name, 0) for name in levels)
    plan = planner.choose(query, terms, options, sizes, universe)
    covered = _covered_drive(options, sizes, universe, want) if plan.verify and joinable else None
    return universe, plan, covered


def search_profiles(query: ProfileSearchQuery, viewer_id: str | None = None) -> ProfilePage:
    """One page of the profiles matching ``query``, in the documented order.

    ``viewer_id``'s blocks (users they block or are blocked by, one Query) are left out of the
    page after it is read: a page may then hold fewer profiles than ``pageSize``, and ``total``
    counts them (the lists are shared by every viewer).

    Returns
    -------
    ProfilePage
        ``{profiles, total, totalRelation, page, pageSize, nextCursor}``.

    Raises
    ------
    RuleViolation
        The cursor is malformed, edited or belongs to another query (field ``cursor``), or
        ``page`` contradicts it (field ``page``).
    """
    terms = words(query.q or "")
    position = query.position_in("profiles.search", "")
    options = planner.sources(query, terms)
    # A conjunction also needs how many profiles there are (the level lists), in the same BatchGetItem.
    joinable = planner.conditions(query, terms) > 1
    levels = [index.level_list(level) for level in range(MAX_VERIFIED_LEVEL + 1)] if joinable else []
    names = [*planner.size_lists(options), *levels]
    skip = 0 if position.key else position.offset
    want = skip + position.page_size + 1
    sizes = None if terms else statistics.remembered(names)
    if sizes is not None:
        universe, plan, covered = _planned(query, terms, options, sizes, levels, joinable, want)
        # Only a covered page, counted from its entries and passing over no list as empty, answers
        # the same whatever sizes planned it (chalicelib.search.statistics): the rest reads them.
        if covered is None or not all(sizes.get(name, 0) for name in covered[0].lists):
            sizes = None
    if sizes is None:
        sizes = postings.sizes(names)
        statistics.remember(sizes)
        universe, plan, covered = _planned(query, terms, options, sizes, levels, joinable, want)
    if covered is not None:
        found = _covered_page(query, terms, *covered, sizes, plan.min_level, skip, position.page_size, position.key)
        total = (position.offset if position.key else 0) + found.total
        has_more = found.has_more
    elif plan.verify:
        restrictions = join_members(plan, sizes, universe, want) if plan.joined else []
        found = _verified_page(plan, query, terms, skip, position.page_size, position.key, restrictions)
        earlier = position.offset if position.key else 0  # the earlier pages were full
        total = earlier + found.total
        has_more = found.has_more
    else:
        found = _counted_page(plan, query, terms, skip, position.page_size, position.key)
        total = plan.size
        has_more = position.after(total) and bool(found.users)
    hidden = blocks.hidden_from(viewer_id) if viewer_id else frozenset()
    shown = [u for u in found.users if u["userId"] not in hidden]
    return ProfilePage.model_validate({  # one validation for the page, not one per profile
        "profiles": [public_profile_fields(u) for u in shown], "total": total, "totalRelation": found.relation,
        "page": position.page, "pageSize": position.page_size, "nextCursor": position.next_cursor(has_more, found.last_key),
    })
