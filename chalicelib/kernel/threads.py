"""Calls sent together from one request: a thread pool that keeps the caller's context.

A request that has several independent DynamoDB or SQS calls to make (the lists of a search step,
the owners of a router batch, the send sequences of a fan-out) sends them together so that they
overlap as one round trip. Each call runs in a copy of the caller's :mod:`contextvars` context, so
what the request keeps there (its correlation id, the items it read:
``chalicelib.telemetry.metrics``) sees the work of every thread. The pool's threads start once per
process and a warm Lambda invocation reuses them (:class:`concurrent.futures.ThreadPoolExecutor`
starts a thread only when a call finds none idle).

Example
-------
>>> pool = ContextPool(workers=4, name="example")
>>> pool.map(lambda n: n * 2, [1, 2, 3])
[2, 4, 6]
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class ContextPool:
    """A process-wide pool of ``workers`` threads whose calls run in a copy of the caller's context.

    Parameters
    ----------
    workers:
        The most calls running at once; more wait for a free thread.
    name:
        The threads' name prefix (as log lines and thread dumps show it).
    """

    def __init__(self, workers: int, name: str) -> None:
        self.workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)

    def submit[R](self, fn: Callable[..., R], /, *args: Any) -> Future[R]:
        """Start ``fn(*args)`` on a pool thread, in a copy of the caller's context.

        Returns
        -------
        Future
            Its result or its exception.
        """
        context = contextvars.copy_context()
        return self._executor.submit(lambda: context.run(fn, *args))

    def map[T, R](self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``[fn(item) for item in items]``, the calls running together (one runs in the caller's
        thread when there is only one).

        Every call ends before this returns or raises, so no call outlives the step that made it.

        Returns
        -------
        list
            The results, in the order of ``items``.

        Raises
        ------
        Exception
            The first failed call's exception (in the order of ``items``), after every call ended.
        """
        todo = list(items)
        if len(todo) <= 1:
            return [fn(item) for item in todo]
        futures = [self.submit(fn, item) for item in todo]
        errors = [future.exception() for future in futures]  # waits for every call
        failure = next((error for error in errors if error is not None), None)
        if failure is not None:
            raise failure
        return [future.result() for future in futures]
