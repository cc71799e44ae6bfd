"""The posting lists of a listing (pure; no store): what the stream consumer files it under.

Every list is scoped to one category (a search with ``category`` reads only that category's
lists; without it the few categories' lists are merged) and holds only ACTIVE listings. Lists
(ids built by :func:`chalicelib.search.postings.list_id` under :data:`NAMESPACE`; ``listings.v2`` since
stems joined the prefixes, ``listings.v3`` since number buckets and the category lists joined, ``listings.v4`` since
entries carry the covering projection of :func:`projection`, ``listings.v5`` since the
owner lists joined and the projection names the owner, so that the backfill files every listing afresh):

* ``listings.v5#<category>#s#<stem>``: the Snowball stems of the listing's words, in the
  category's language (:mod:`chalicelib.text_analysis.analyzer`): what a ``q`` word, a
  correction of it (:mod:`chalicelib.typo_dictionary`) or any word of the same stem reads.
* ``listings.v5#<category>#q#<prefix>``: word prefixes for the last ``q`` word (search as you type). For every distinct word of the
  listing's ``searchText`` (the folding of :func:`chalicelib.text.words`, as ``q`` is folded),
  its prefixes of :data:`MIN_PREFIX` to :data:`MAX_PREFIX` characters. A ``q`` term of up to
  :data:`MAX_PREFIX` characters reads the list of exactly its matches; a longer term reads the
  list of its first :data:`MAX_PREFIX` characters and is verified on the candidates
  (:func:`chalicelib.listings.search.filters.matches_terms`). The cap bounds the keys a long
  listing writes (each key is two TransactWriteItems items; :mod:`chalicelib.search.postings` chunks
  large changes) while keeping five-letter prefixes, which are already selective words.
  One-letter terms have no list: they are verified on another path.
* ``listings.v5#<category>#v#<field>#<value>``: equality values of select, boolean, number and
  integer fields, and each option of a multiselect field (``contains`` reads one option's list).
* ``listings.v5#<category>#n#<field>``: every number and integer value, sorted by value
  (:func:`chalicelib.search.postings.sortable_number`), for ``_min`` / ``_max`` ranges probed in value order.
* ``listings.v5#<category>#b#<field>#<bucket>``: the same values by power-of-two bucket and by group
  of buckets (:mod:`chalicelib.search.buckets`), newest first: a range is the union of its cover,
  joined with the other restrictions (:mod:`chalicelib.search.join`).
* ``listings.v5#<category>#all`` and ``listings.v5#<category>#r#<role>``: every ACTIVE listing
  of the category (and role), newest first, key-only: ``page=N`` without a cursor skips
  through these entries instead of reading the skipped listings (the listing pages themselves
  still come from the write-sharded indexes).
* ``listings.v5#<category>#o#<ownerId>``: every ACTIVE listing of one owner in the category, newest
  first. It puts the owner in every entry's covering projection (:func:`projection`, :data:`OWNER`),
  so a page known from its entries reads its listings and their owners in one BatchGetItem.

Sorts: newest first lists use ``<createdAt>#<listingId>`` (the key of the newest-first indexes,
so one cursor position serves every path); number lists ``<sortable value>#<createdAt>#<listingId>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from chalicelib.categories.models import FieldType
from chalicelib.categories.registry import all_categories
from chalicelib.listings import status
from chalicelib.listings.index import newest_key
from chalicelib.listings.search.query import language_of
from chalicelib.search.buckets import labels_of
from chalicelib.search.postings import PostingKey, list_id, register_projection, sortable_number
from chalicelib.text_analysis.analyzer import stems

NAMESPACE = "listings.v5"
#: Shortest and longest word prefix with a list (characters).
MIN_PREFIX = 2
MAX_PREFIX = 5
#: Field types with equality lists, and those with number lists.
VALUE_TYPES = frozenset({FieldType.SELECT, FieldType.MULTISELECT, FieldType.BOOLEAN, FieldType.NUMBER, FieldType.INTEGER})
NUMBER_TYPES = frozenset({FieldType.NUMBER, FieldType.INTEGER})


def word_list(category_key: str, term: str) -> str | None:
    """The list a folded ``q`` term reads in a category, or ``None`` for a term shorter than :data:`MIN_PREFIX`."""
    if len(term) < MIN_PREFIX:
        return None
    return list_id(NAMESPACE, category_key, "q", term[:MAX_PREFIX])


def stem_list(category_key: str, stem: str) -> str:
    """The list of the listings of a category holding a word whose stem is ``stem``."""
    return list_id(NAMESPACE, category_key, "s", stem)


def is_exact_word_list(term: str) -> bool:
    """True when the term's list holds exactly the listings with a word starting with ``term``."""
    return MIN_PREFIX <= len(term) <= MAX_PREFIX


def value_list(category_key: str, field_key: str, value: str) -> str:
    """The equality list of ``meta.<field_key> == value`` (a canonical value) in a category."""
    return list_id(NAMESPACE, category_key, "v", field_key, value)


def number_list(category_key: str, field_key: str) -> str:
    """The value-sorted list of number or integer field ``field_key`` in a category."""
    return list_id(NAMESPACE, category_key, "n", field_key)


def bucket_list(category_key: str, field_key: str, bucket: str) -> str:
    """The newest-first list of the values of number field ``field_key`` within ``bucket`` (:mod:`chalicelib.search.buckets`)."""
    return list_id(NAMESPACE, category_key, "b", field_key, bucket)


def category_list(category_key: str, role: str | None = None) -> str:
    """The newest-first key-only list of every ACTIVE listing of a category (of one of its roles)."""
    return list_id(NAMESPACE, category_key, "all") if role is None else list_id(NAMESPACE, category_key, "r", role)


def owner_list(category_key: str, owner_id: str) -> str:
    """The newest-first list of the ACTIVE listings of owner ``owner_id`` in a category."""
    return list_id(NAMESPACE, category_key, "o", owner_id)


def newest_of_number_sort(sort: str) -> str:
    """The ``<createdAt>#<listingId>`` part of a number list's sort."""
    return sort.split("#", 1)[1]


def _prefixes(word: str) -> list[str]:
    return [word[:n] for n in range(MIN_PREFIX, min(len(word), MAX_PREFIX) + 1)]


def posting_keys(listing: Mapping[str, Any] | None) -> set[PostingKey]:
    """The posting keys of a Listings item (empty unless it is ACTIVE; ``None``: a deleted listing).

    ``listing`` needs ``status``, ``categoryKey``, ``listingId``, ``createdAt``, ``searchText``,
    ``meta`` and ``ownerId`` (an item without one has no owner list); meta values are the
    canonical strings of :mod:`chalicelib.listings.meta`.
    """
    if listing is None or not status.is_public(listing.get("status", "")):
        return set()
    category_key = listing["categoryKey"]
    newest = newest_key(listing)
    keys: set[PostingKey] = {PostingKey(category_list(category_key), newest)}
    if listing.get("roleKey"):
        keys.add(PostingKey(category_list(category_key, str(listing["roleKey"])), newest))
    if listing.get("ownerId"):
        keys.add(PostingKey(owner_list(category_key, str(listing["ownerId"])), newest))
    distinct = set(str(listing.get("searchText") or "").split())
    for word in distinct:
        keys.update(PostingKey(list_id(NAMESPACE, category_key, "q", prefix), newest) for prefix in _prefixes(word))
    keys.update(PostingKey(stem_list(category_key, s), newest) for s in stems(distinct, language_of(category_key)))
    category = all_categories().get(category_key)
    meta = listing.get("meta") or {}
    for field in category.fields if category else []:
        value = meta.get(field.key)
        if value is None or not field.filterable or field.type not in VALUE_TYPES:
            continue
        options = value.split(",") if field.type == FieldType.MULTISELECT else [value]
        keys.update(PostingKey(value_list(category_key, field.key, option), newest) for option in options)
        if field.type in NUMBER_TYPES:
            try:
                sort = sortable_number(value)
            except (ArithmeticError, ValueError):  # not a number (validated values always are): no range entry
                continue
            keys.add(PostingKey(number_list(category_key, field.key), f"{sort}#{newest}"))
            keys.update(PostingKey(bucket_list(category_key, field.key, label), newest) for label in labels_of(Decimal(value)))
    return keys


#: The projection's names of the listing's role and owner (field keys are identifiers: never these).
ROLE = "_role"
OWNER = "_owner"


def projection(keys: Iterable[PostingKey]) -> dict[str, str]:
    """The covering projection of a listing filed under ``keys``: its role, its owner and the canonical
    value of each filterable select, multiselect (options joined by ``,``), boolean, number and integer
    field, read back from its role, owner and value lists (so equal keys mean an equal projection).

    Stored in every entry of the listing (:func:`chalicelib.search.postings.register_projection`):
    a search checks its other filters on the entry of the one list it reads
    (:func:`chalicelib.listings.search.filters.entry_matches`), without reading the listing.
    """
    found: dict[str, list[str]] = {}
    for key in keys:
        parts = key.list_id.split("#", 4)
        if len(parts) == 5 and parts[2] == "v":
            found.setdefault(parts[3], []).append(parts[4])
        elif len(parts) == 4 and parts[2] == "r":
            found[ROLE] = [parts[3]]
        elif len(parts) == 4 and parts[2] == "o":
            found[OWNER] = [parts[3]]
    return {name: ",".join(sorted(values)) for name, values in found.items()}


register_projection(NAMESPACE, projection)
