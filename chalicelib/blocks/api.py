"""Blocks as other packages see them: the ``ConditionCheck`` a request or message transaction holds,
the set of users hidden from a searcher (cached per process), and a pair's batch-read part.

Other packages import this module, never the repository (docs/architecture.md, "Table ownership").
"""

from __future__ import annotations

import time
from collections.abc import Callable

from chalicelib.blocks import repository
from chalicelib.blocks.repository import not_blocked_op, read_part
from chalicelib.kernel.threads import ContextPool

#: Seconds a process keeps a user's block set for their searches. A block or unblock evicts both
#: users' sets in the process that wrote it; another warm process shows the change within this
#: time (the search indexes themselves follow changes about a second late).
HIDDEN_CACHE_SECONDS = 10

_hidden: dict[str, tuple[float, frozenset[str]]] = {}

#: Reads a viewer's block set while the request does its own reads (:func:`hidden_from_later`).
_READERS = ContextPool(workers=4, name="blocks")


def hidden_from(user_id: str) -> frozenset[str]:
    """The users ``user_id`` blocked or was blocked by: one Query of the user's own block items,
    kept :data:`HIDDEN_CACHE_SECONDS` by this process (searches read it once per request at most)."""
    now = time.monotonic()
    cached = _hidden.get(user_id)
    if cached is not None and cached[0] > now:
        return cached[1]
    found = repository.related(user_id)
    if len(_hidden) >= 10_000:  # bounded: the oldest half goes
        for key in sorted(_hidden, key=lambda k: _hidden[k][0])[:5_000]:
            _hidden.pop(key, None)
    _hidden[user_id] = (now + HIDDEN_CACHE_SECONDS, found)
    return found


def hidden_from_later(user_id: str | None) -> Callable[[], frozenset[str]]:
    """Start :func:`hidden_from` on a pool thread, so its Query overlaps the caller's next reads.

    Returns
    -------
    Callable[[], frozenset[str]]
        Waits for the set and returns it (raising the read's error); the empty set without
        ``user_id`` (an anonymous viewer hides nobody).
    """
    if user_id is None:
        return frozenset
    return _READERS.submit(hidden_from, user_id).result


def forget_hidden(*user_ids: str) -> None:
    """Drop the cached block sets of ``user_ids`` (a block or unblock between them was written);
    without ids, every cached set (the tests' fresh start)."""
    if not user_ids:
        _hidden.clear()
    for user_id in user_ids:
        _hidden.pop(user_id, None)


__all__ = [
    "forget_hidden",
    "hidden_from",
    "hidden_from_later",
    "not_blocked_op",
    "read_part",
]
