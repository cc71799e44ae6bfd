"""The heartbeat of a running delivery attempt: keeps its lane message and its claim held.

A lane message is received invisible for the queue's visibility timeout, and an attempt's claim
(:mod:`chalicelib.webhooks.delivery.attempt_log`) is leased for ``DELIVERY_LEASE_SECONDS``. Both
are kept short so that a worker that dies (a Lambda invocation killed by its timeout, a crashed
process) hands its delivery to another worker within that time; while the worker lives, a
:class:`Heartbeat` thread extends them every quarter of the lease (``ChangeMessageVisibility``,
the pattern the SQS Developer Guide gives for work of unknown length, "Amazon SQS visibility
timeout": "extend the visibility timeout ... for long-running tasks, set a heartbeat"). Missing
up to three beats in a row (a slow SQS or DynamoDB call) still keeps the hold.

Powertools for AWS Lambda's batch utility processes and reports SQS records but does not extend
their visibility, so this small thread does it. The beats are plain callables (the SQS visibility
of the message, then, once claimed, the claim's lease); a beat that raises is logged and the others
still run: losing a hold is safe (the claim's lease decides who may send, never the message's
visibility alone).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType

from aws_lambda_powertools import Logger

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage

logger = Logger(service="matching-service", child=True)

#: A beat: extends one hold; raises when it could not.
Beat = Callable[[], None]


class Heartbeat:
    """A daemon thread calling every beat each ``interval`` seconds, from ``__enter__`` to ``__exit__``.

    Parameters
    ----------
    interval:
        Seconds between two rounds of beats (> 0); :func:`for_lease` uses a quarter of the lease.
    beats:
        The first beats (more with :meth:`add`).

    Notes
    -----
    The first round runs in ``__enter__`` itself (synchronously), so a hold is short from the
    start of the attempt, not only from the first beat on. Beats added with :meth:`add` run from
    the next round on. ``beats`` counts the rounds made (tests wait on it).
    """

    def __init__(self, interval: float, *beats: Beat) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        self.interval = interval
        self.rounds = 0
        self._beats: list[Beat] = list(beats)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, beat: Beat, first: bool = False) -> None:
        """Beat ``beat`` from the next round on; ``first`` puts it before the others (the claim's lease
        is extended before the message's visibility, so the message never outlives the lease)."""
        with self._lock:
            if first:
                self._beats.insert(0, beat)
            else:
                self._beats.append(beat)

    @property
    def running(self) -> bool:
        """Whether the beating thread is alive (between ``__enter__`` and :meth:`stop`)."""
        return self._thread is not None and self._thread.is_alive()

    def beat(self) -> None:
        """One round: every beat once, in order; a beat that raises is logged, the next ones still run."""
        with self._lock:
            beats = list(self._beats)
        for beat in beats:
            try:
                beat()
            except Exception:  # a hold lost or a fault: the lease protects the attempt (module docstring)
                logger.warning("delivery heartbeat failed", exc_info=True)
        self.rounds += 1

    def __enter__(self) -> Heartbeat:
        self.beat()
        self._thread = threading.Thread(target=self._run, name="delivery-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop beating (the holds then lapse after their timeouts) and wait for a round under way."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.beat()


def for_lease(lease_seconds: float | None = None, *beats: Beat) -> Heartbeat:
    """A :class:`Heartbeat` of ``beats`` every quarter of ``lease_seconds`` (default ``DELIVERY_LEASE_SECONDS``)."""
    lease = settings().DELIVERY_LEASE_SECONDS if lease_seconds is None else lease_seconds
    return Heartbeat(lease / 4, *beats)


def message_visibility(queue_url: str, receipt_handle: str, seconds: int) -> Beat:
    """A beat that makes the received message invisible for ``seconds`` more (``ChangeMessageVisibility``).

    Raises (when beaten)
    --------------------
    botocore.exceptions.ClientError
        ``ReceiptHandleIsInvalid`` / ``MessageNotInflight``: the message was received again by
        another worker (its visibility lapsed) or deleted; other SQS faults.
    """

    def beat() -> None:
        storage.client("sqs").change_message_visibility(QueueUrl=queue_url, ReceiptHandle=receipt_handle, VisibilityTimeout=seconds)

    return beat
