"""The typo dictionary: each scope's vocabulary in DynamoDB, read to find a query word's corrections.

Domain-free like :mod:`chalicelib.search.postings`: a caller names a namespace and a scope (listings use
``listings`` and the category key) and gives the folded words of its documents. Items (SearchIndex
table): ``{pk: "vocab|<namespace>|<scope>|<first letter>|<length>", sk: "vocab", words: {...}}``,
one string set per bucket of :func:`chalicelib.text_analysis.typos.bucket`.

* **Lookup** (:func:`corrections`): a query word's corrections lie in the buckets of its first
  letter and of the lengths within its typo distance (:func:`chalicelib.text_analysis.typos.buckets_of`),
  and of the lengths a correction may have (:func:`chalicelib.text_analysis.typos.buckets_of`), so
  the **read budget per query word is at most ``2 x max_typos + 1 + MAX_SUFFIX`` items per scope**:
  none for a word of up to 4 characters, at most 7 for 5-8, 9 for 9 or more (x the categories
  searched), all words of a query in one BatchGetItem. No Scan; the candidates are verified by
  Damerau-Levenshtein distance.
* **Entries** are words and stems: a query word corrects to a word or to a stem
  (:func:`chalicelib.text_analysis.typos.is_stem_typo`).
* **Maintenance** (:func:`add`): the words (and stems) of an indexed document are added with ``ADD`` to their
  buckets' sets (idempotent, so replayed stream records are harmless). Buckets are read first
  and only those missing a word are updated: once a vocabulary has settled, indexing a document
  costs one BatchGetItem and no write. The dictionary only grows: a word whose last document
  went away stays, and its correction then finds an empty posting list (a size read, never a
  wrong result). A bucket holds about 400 KB of words at most (DynamoDB's item limit, some
  40,000 words of one first letter and length in one category); past that the update fails and
  the word is logged and skipped (its documents still match exactly; only corrections to it
  are not found).

Source: the per-length vocabulary partition is the candidate filter of approximate dictionary
lookup (K. Kukich, "Techniques for automatically correcting words in text", ACM Computing
Surveys 24(4), 1992: length and first-letter partitions of the lexicon).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aws_lambda_powertools import Logger
from botocore.exceptions import ClientError

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.text_analysis import typos

logger = Logger(service="matching-service", child=True)
_SK = "vocab"


def _table() -> str:
    return settings().SEARCH_INDEX_TABLE


def _key(namespace: str, scope: str, bucket: tuple[str, int]) -> dict[str, str]:
    return {"pk": f"vocab|{namespace}|{scope}|{bucket[0]}|{bucket[1]:02d}", "sk": _SK}


def _buckets(words: Iterable[str]) -> dict[tuple[str, int], set[str]]:
    grouped: dict[tuple[str, int], set[str]] = {}
    for word in words:
        if len(word) >= typos.SHORTEST_CORRECTION:
            grouped.setdefault(typos.bucket(word), set()).add(word)
    return grouped


def add(namespace: str, scope: str, words: Iterable[str]) -> int:
    """Add a document's folded ``words`` to the vocabulary of ``scope``; returns the buckets written.

    One BatchGetItem of the words' buckets, then one ``UpdateItem ... ADD`` per bucket that
    misses a word. Words shorter than :data:`chalicelib.text_analysis.typos.SHORTEST_CORRECTION`
    are never a correction and are not kept.
    """
    grouped = _buckets(words)
    if not grouped:
        return 0
    keys = {bucket: _key(namespace, scope, bucket) for bucket in grouped}
    found = {str(item["pk"]): set(item.get("words") or ()) for item in storage.batch_get(_table(), list(keys.values()))}
    written = 0
    for bucket, wanted in grouped.items():
        missing = wanted - found.get(keys[bucket]["pk"], set())
        if not missing:
            continue
        try:
            storage.update(_table(), keys[bucket], "ADD #w :w", ExpressionAttributeNames={"#w": "words"},
                           ExpressionAttributeValues=storage.values(w=missing))
        except ClientError as exc:  # item size limit: the words stay searchable, only not as corrections
            logger.warning("typo dictionary bucket not updated", extra={"bucket": keys[bucket]["pk"], "error": str(exc)})
            continue
        written += 1
    return written


def corrections(namespace: str, scopes: Sequence[str], terms: Sequence[str]) -> dict[str, list[str]]:
    """The corrections of each query term in the vocabularies of ``scopes`` (closest first).

    One BatchGetItem of ``sum over terms of len(buckets_of(term)) x len(scopes)`` items (terms
    without typo tolerance read nothing). Returns term -> corrections (words of any of the scopes).
    """
    keys = correction_keys(namespace, scopes, terms)
    return corrections_in(namespace, scopes, terms, storage.batch_get(_table(), keys) if keys else [])


def correction_keys(namespace: str, scopes: Sequence[str], terms: Sequence[str]) -> list[dict[str, str]]:
    """The keys of the vocabulary buckets that :func:`corrections` reads, for a caller that reads them with
    other items of the SearchIndex table in one BatchGetItem (then :func:`corrections_in`)."""
    buckets = dict.fromkeys(b for term in dict.fromkeys(terms) for b in typos.buckets_of(term))
    return [_key(namespace, scope, bucket) for bucket in buckets for scope in scopes]


def corrections_in(namespace: str, scopes: Sequence[str], terms: Sequence[str],
                   items: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """:func:`corrections` of ``terms`` from ``items``, the vocabulary buckets read at :func:`correction_keys`
    (items of other kinds among them are ignored). Returns term -> corrections (closest first)."""
    vocab: dict[str, set[str]] = {}
    for item in items:
        if item.get("sk") == _SK:
            vocab[str(item["pk"])] = set(item.get("words") or ())
    result: dict[str, list[str]] = {}
    for term in dict.fromkeys(terms):
        words: set[str] = set()
        for bucket in typos.buckets_of(term):
            for scope in scopes:
                words |= vocab.get(_key(namespace, scope, bucket)["pk"], set())
        result[term] = typos.corrections(term, words)
    return result


def bulk_items(namespace: str, scoped_words: Iterable[tuple[str, Iterable[str]]]) -> list[dict[str, Any]]:
    """The dictionary items of many documents at once ``(scope, words)``, for loading an **empty** index."""
    merged: dict[tuple[str, tuple[str, int]], set[str]] = {}
    for scope, words in scoped_words:
        for bucket, found in _buckets(words).items():
            merged.setdefault((scope, bucket), set()).update(found)
    return [{**_key(namespace, scope, bucket), "words": found} for (scope, bucket), found in merged.items()]
