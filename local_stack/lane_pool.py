"""How many workers the local stack runs on a FIFO queue (the webhook delivery lanes).

Lambda runs one invocation per message group that has messages, up to the function's concurrency
(AWS Lambda Developer Guide, "Configuring scaling behavior for SQS event source mappings"; the
template bounds it with ``DeliveryConcurrency``). The local event runner does the same with
threads: a worker receives one message (batch size 1, as the mapping) and holds its lane while the
attempt runs; SQS gives no other worker a message of a group in flight, so a busy worker is one
lane with work. The pool keeps :attr:`PoolBounds.spare` idle workers polling beside the busy ones,
starting one whenever a worker turns busy, up to :attr:`PoolBounds.maximum`, and lets an idle
worker beyond the spares stop after :data:`RETIRE_AFTER_SECONDS` without work. So any number of
hanging receivers below the maximum holds only its own workers while others keep polling; a
fixed pool of 8 was held entirely by 8 hanging receivers.

The slow lanes' queue (``SlowDeliveryQueue``) gets a pool of its own, as its own function in
production: at most ``DELIVERY_SLOW_LANES`` workers (:func:`slow_lane_bounds`), one per slow lane,
so the webhooks whose circuit breaker is open never take a worker of the owners' lanes.

This module is the pure sizing rule; the threads are in :mod:`local_stack.runner`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

#: Default :attr:`PoolBounds.maximum`: more than the local stack's tests and benchmarks have
#: lanes at once (bench/webhooks.py: 19), few enough for the one-request-at-a-time moto server.
DEFAULT_MAXIMUM = 32
#: Seconds an idle worker beyond the spares polls on before it stops.
RETIRE_AFTER_SECONDS = 5.0


@dataclass(frozen=True)
class PoolBounds:
    """The bounds of a lane worker pool.

    Attributes
    ----------
    maximum:
        Most workers at once (>= 1): the local counterpart of the delivery function's reserved
        concurrency. Hanging receivers beyond ``maximum - spare`` would hold every worker.
    spare:
        Idle workers kept polling beside the busy ones (>= 1): a message of a new lane is taken
        within one poll interval while the other workers are held.
    """

    maximum: int = DEFAULT_MAXIMUM
    spare: int = 2

    def __post_init__(self) -> None:
        if self.maximum < 1 or self.spare < 1:
            raise ValueError(f"maximum and spare must be >= 1, got {self.maximum} and {self.spare}")

    @property
    def initial(self) -> int:
        """Workers started with the pool: the spares (or the maximum, if smaller)."""
        return min(self.maximum, self.spare)

    def to_start(self, busy: int, idle: int) -> int:
        """How many workers to start now that ``busy`` workers hold a lane and ``idle`` ones poll.

        ``min(maximum, busy + spare) - (busy + idle)``, never negative: enough for ``spare`` idle
        pollers, within the maximum.
        """
        return max(0, min(self.maximum, busy + self.spare) - (busy + idle))

    def may_retire(self, busy: int, idle: int) -> bool:
        """Whether an idle worker (one of ``idle``) that found no work for a while may stop: only beyond the spares."""
        return idle > self.spare and busy + idle > self.initial


def bounds_from_environment(environ: Mapping[str, str] | None = None) -> PoolBounds:
    """The pool bounds of ``LOCAL_LANE_WORKERS`` (the maximum; default :data:`DEFAULT_MAXIMUM`).

    Raises
    ------
    ValueError
        ``LOCAL_LANE_WORKERS`` is not a whole number >= 1.
    """
    raw = (os.environ if environ is None else environ).get("LOCAL_LANE_WORKERS", "")
    maximum = int(raw) if raw.strip() else DEFAULT_MAXIMUM
    return PoolBounds(maximum=maximum, spare=min(2, maximum))


def slow_lane_bounds(lanes: int) -> PoolBounds:
    """The pool bounds of the slow lanes' queue: at most ``lanes`` workers (its message groups,
    ``DELIVERY_SLOW_LANES``), and as many spares as the other pools (2), within that.

    Raises
    ------
    ValueError
        ``lanes`` < 1.
    """
    return PoolBounds(maximum=lanes, spare=min(2, lanes))
