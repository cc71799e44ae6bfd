"""Run the deliveries of one batch concurrently, so that a hanging receiver delays no other.

The deliveries are grouped per webhook into at most ``WEBHOOK_PER_RECEIVER_CONCURRENCY``
lanes (a receiver never gets more requests at once than that; within a lane events go in
order), and the lanes of all webhooks run on a thread pool of ``WEBHOOK_MAX_CONCURRENCY``
threads, the first lane of every webhook scheduled first. A receiver that hangs holds only
its own lanes, for one deadline: once an attempt to it failed, its later deliveries in the
batch are postponed to the retry queue (:func:`chalicelib.webhooks.delivery.attempt`), and
at its fifth consecutive failure it is switched off (then they are skipped). So a hanging
receiver costs one deadline (10 s) per batch, never one per attempt.

An attempt is started only while the invocation has at least the delivery deadline plus
:data:`SAFETY_MARGIN_SECONDS` left; the others are ``deferred``: their record is reported
failed and comes back (stream retry or SQS visibility timeout) without having been claimed.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from aws_lambda_powertools import Logger

from chalicelib.config import settings
from chalicelib.webhooks.delivery import Target, attempt
from chalicelib.webhooks.events import Delivery

logger = Logger(service="matching-service", child=True)

#: Seconds kept free at the end of an invocation for bookkeeping after the last attempt.
SAFETY_MARGIN_SECONDS = 5.0


@dataclass(frozen=True)
class Job:
    """One delivery of a batch.

    Attributes
    ----------
    delivery:
        The event, webhook and attempt number.
    target:
        The webhook's shared state within the batch.
    source:
        Id of the batch record it came from (stream sequence number or SQS message id).
    """

    delivery: Delivery
    target: Target
    source: str


@dataclass
class Report:
    """What a batch's deliveries did: results counted, and the records whose processing raised."""

    results: Counter[str] = field(default_factory=Counter)
    failed_sources: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, result: str, failed_source: str | None = None) -> None:
        """Count ``result`` (thread-safe); ``failed_source`` marks a record as failed."""
        with self._lock:
            self.results[result] += 1
            if failed_source is not None:
                self.failed_sources.add(failed_source)


def lanes(jobs: Sequence[Job], per_receiver: int) -> list[list[Job]]:
    """Split ``jobs`` into lanes: per webhook at most ``per_receiver``, round robin, interleaved.

    Returns
    -------
    list
        Lanes ordered lane 0 of every webhook, then lane 1 of every webhook, ...
    """
    by_webhook: dict[str, list[Job]] = {}
    for job in jobs:
        by_webhook.setdefault(job.target.webhook_id, []).append(job)
    grouped = []
    for queue in by_webhook.values():
        count = max(1, min(per_receiver, len(queue)))
        grouped.append([queue[i::count] for i in range(count)])
    ordered: list[list[Job]] = []
    for index in range(max((len(g) for g in grouped), default=0)):
        ordered.extend(g[index] for g in grouped if index < len(g))
    return ordered


def run(jobs: Sequence[Job], time_left: Callable[[], float] | None = None) -> Report:
    """Attempt every job; returns the results and the sources of failed jobs.

    Parameters
    ----------
    jobs:
        The batch's deliveries.
    time_left:
        Seconds the invocation has left (from the Lambda context); ``None``: unlimited.

    Returns
    -------
    Report
        Results counted by kind; ``failed_sources`` are the records of jobs that raised (only
        infrastructure faults: receiver failures are results, handled by the failure policy)
        or were deferred for lack of time.
    """
    report = Report()
    config = settings()
    planned = lanes(jobs, config.WEBHOOK_PER_RECEIVER_CONCURRENCY)
    if not planned:
        return report

    def run_lane(lane: list[Job]) -> None:
        for job in lane:
            if time_left is not None and time_left() < config.WEBHOOK_TIMEOUT_SECONDS + SAFETY_MARGIN_SECONDS:
                report.add("deferred", job.source)
                continue
            try:
                result = attempt(job.delivery, job.target)
            except Exception:  # reported as a failed record, retried by the event source
                logger.exception(
                    "webhook delivery failed", extra={"webhookId": job.target.webhook_id, "eventId": job.delivery.event.event_id}
                )
                report.add("error", job.source)
                continue
            report.add(result.value)

    workers = min(config.WEBHOOK_MAX_CONCURRENCY, len(planned))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="webhook-delivery") as pool:
        for future in [pool.submit(run_lane, lane) for lane in planned]:
            future.result()
    return report
