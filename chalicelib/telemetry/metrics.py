"""Operational metrics in CloudWatch embedded metric format (EMF), one line per measurement.

Every metric of the service is written by one named function here, so the names, units and
dimensions the alarms and the dashboard read (``infra/cfn_alarms.py``) are declared once.
Lines are built by powertools Metrics (``EphemeralMetrics``: no state shared between threads or
invocations; https://docs.powertools.aws.dev/lambda/python/latest/core/metrics/) and written
at once, so a function that fails later loses nothing already measured:

* deployed (``METRICS_LOG`` unset): on stdout, where Lambda hands them to CloudWatch Logs and
  CloudWatch extracts the metrics (AWS docs, "Embedding metrics within logs");
* locally: appended to the file ``METRICS_LOG`` names (``make run``: ``.local/metrics.log``),
  the same JSON lines.

One namespace, :data:`NAMESPACE`; dimensions are kept few, as each combination is a billed
metric: ``service`` on every line (powertools), plus ``route`` and ``statusClass`` on requests,
``outcome`` on deliveries, ``stream`` on indexer lag and ``queue`` on lane age.

powertools' metrics module costs ~0.1 s of CPU to import, so it is imported by the first
measurement, not at cold start (``bench/cold_start.py``). ``POWERTOOLS_METRICS_DISABLED=true``
turns every function here into a no-op (powertools' own switch).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from chalicelib.kernel.config import settings

if TYPE_CHECKING:
    from aws_lambda_powertools.metrics import MetricUnit

#: The CloudWatch namespace of every metric of the service.
NAMESPACE = "MatchingService"
#: The ``service`` dimension (powertools' default dimension; the Logger's service name too).
SERVICE = "matching-service"

#: Metric names (CloudWatch), read by the alarms and the dashboard (``infra/cfn_alarms.py``).
REQUESTS = "Requests"
REQUEST_LATENCY = "RequestLatency"
SEARCH_LATENCY = "SearchLatency"
SEARCH_ITEMS_READ = "SearchItemsRead"
APPROVAL_QUEUE_AGE = "ApprovalQueueAge"
INDEXER_LAG = "IndexerLag"
DELIVERIES = "Deliveries"
LANE_AGE = "LaneAge"
WEBHOOKS_DISABLED = "WebhooksDisabled"
RATE_LIMITED = "RateLimitRefusals"

_file_lock = threading.Lock()
#: Items read by DynamoDB while a :func:`search_page` block runs (one list per block), or ``None``.
_items_read: ContextVar[list[int] | None] = ContextVar("items_read", default=None)


@lru_cache(maxsize=1)
def _units() -> type[MetricUnit]:
    from aws_lambda_powertools.metrics import MetricUnit

    return MetricUnit


def emf_line(values: dict[str, tuple[float, str]], dimensions: dict[str, str] | None = None) -> dict[str, Any]:
    """One EMF document: ``values`` ``{name: (value, unit)}`` under ``dimensions`` (plus ``service``).

    Parameters
    ----------
    values:
        Metric name -> (value, powertools ``MetricUnit`` value such as ``"Count"``,
        ``"Milliseconds"``, ``"Seconds"``).
    dimensions:
        Dimension name -> value (few, low cardinality: each combination is a CloudWatch metric).

    Returns
    -------
    dict
        ``{"_aws": {"Timestamp", "CloudWatchMetrics": [{"Namespace", "Dimensions", "Metrics"}]},
        <dimension>: <value>, ..., <metric>: [<value>]}`` (the EMF specification, AWS docs
        "Specification: Embedded metric format").
    """
    from aws_lambda_powertools.metrics import EphemeralMetrics

    units = _units()
    metrics = EphemeralMetrics(namespace=NAMESPACE, service=SERVICE)
    for dimension, label in (dimensions or {}).items():
        metrics.add_dimension(name=dimension, value=label)
    for name, (value, unit) in values.items():
        metrics.add_metric(name=name, unit=units(unit), value=value)
    return dict(metrics.serialize_metric_set())


def emit(values: dict[str, tuple[float, str]], dimensions: dict[str, str] | None = None) -> None:
    """Write one EMF line (:func:`emf_line`) to ``METRICS_LOG`` or stdout; nothing when disabled.

    A failure to write a metric never fails the request or batch that measured it: it is
    printed to stderr and dropped.
    """
    config = settings()
    if config.POWERTOOLS_METRICS_DISABLED:
        return
    try:
        text = json.dumps(emf_line(values, dimensions), separators=(",", ":"))
        path = config.METRICS_LOG
        if path:
            with _file_lock, open(path, "a", encoding="utf-8") as sink:
                sink.write(text + "\n")
        else:
            print(text, flush=True)
    except Exception as exc:  # noqa: BLE001 -- a metric must never break what it measures
        print(f"metric not written: {exc!r}", file=sys.stderr)


def status_class(status: int) -> str:
    """``"2xx"`` .. ``"5xx"`` for an HTTP status code (the ``statusClass`` dimension)."""
    return f"{status // 100}xx"


def record_request(route: str, status: int, duration_ms: float) -> None:
    """One API request: ``Requests`` (Count) and ``RequestLatency`` (Milliseconds) by route and status class.

    Parameters
    ----------
    route:
        The route's path template (``/v1/listings/{listingId}``), never the concrete path, so
        the dimension stays bounded by the route table; ``"unmatched"`` for no route.
    status:
        The HTTP status code sent.
    duration_ms:
        Time from the request's arrival at the app to its response, milliseconds.
    """
    emit(
        {REQUESTS: (1, "Count"), REQUEST_LATENCY: (duration_ms, "Milliseconds")},
        {"route": route, "statusClass": status_class(status)},
    )


def record_search(kind: str, duration_ms: float, items_read: int) -> None:
    """One search page: ``SearchLatency`` (Milliseconds) and ``SearchItemsRead`` (Count).

    Parameters
    ----------
    kind:
        ``"listings"`` or ``"profiles"`` (the ``index`` dimension).
    duration_ms:
        Wall time of the search service call, milliseconds.
    items_read:
        DynamoDB items read for the page (Query ``ScannedCount`` + items of Get/BatchGet), the
        figure ``bench/search.py`` budgets.
    """
    emit({SEARCH_LATENCY: (duration_ms, "Milliseconds"), SEARCH_ITEMS_READ: (items_read, "Count")}, {"index": kind})


def add_items_read(count: int) -> None:
    """Add ``count`` DynamoDB items read to the :func:`search_page` block running, if any.

    Called by :mod:`chalicelib.persistence.storage` after every DynamoDB call (Query ``ScannedCount``, the
    items of GetItem, BatchGetItem and TransactGetItems); outside a block it does nothing.
    """
    counter = _items_read.get()
    if counter is not None:
        counter[0] += count


@contextmanager
def search_page(kind: str) -> Iterator[None]:
    """Measure the block as one search page: :func:`record_search` with its wall time and items read.

    Parameters
    ----------
    kind:
        ``"listings"`` or ``"profiles"``.
    """
    counter = [0]
    token = _items_read.set(counter)
    started = time.perf_counter()
    try:
        yield
    finally:
        _items_read.reset(token)
        record_search(kind, (time.perf_counter() - started) * 1000, counter[0])


def record_approval_queue_age(seconds: float) -> None:
    """``ApprovalQueueAge`` (Seconds): how long the oldest task of a claim waited in the approval queue.

    Parameters
    ----------
    seconds:
        Now minus the task message's ``SentTimestamp`` (SQS), seconds.
    """
    emit({APPROVAL_QUEUE_AGE: (max(0.0, seconds), "Seconds")})


def record_indexer_lag(stream: str, seconds: float) -> None:
    """``IndexerLag`` (Seconds): age of the oldest stream record of a batch when it is applied.

    Parameters
    ----------
    stream:
        ``"listings"`` (the listing index) or ``"users"`` (the profile index): the ``stream`` dimension.
    seconds:
        Now minus the record's ``ApproximateCreationDateTime`` (DynamoDB Streams; whole
        seconds, so the lag reads to the second), seconds.
    """
    emit({INDEXER_LAG: (max(0.0, seconds), "Seconds")}, {"stream": stream})


def record_delivery(outcome: str) -> None:
    """``Deliveries`` (Count) by ``outcome``: ``sent``, ``failed``, ``duplicate``, ``drained``, ``moved`` or ``error``.

    Parameters
    ----------
    outcome:
        What the attempt did (``chalicelib.webhooks.delivery.attempt.Result`` values, or
        ``error`` for a fault of ours).
    """
    emit({DELIVERIES: (1, "Count")}, {"outcome": outcome})


def record_lane_age(queue: str, seconds: float) -> None:
    """``LaneAge`` (Seconds): how long a delivery message waited in its queue before its attempt.

    Parameters
    ----------
    queue:
        ``"delivery"`` (the lanes) or ``"retry"`` (the retry queue): the ``queue`` dimension.
    seconds:
        Now minus the message's ``SentTimestamp`` (SQS), seconds.
    """
    emit({LANE_AGE: (max(0.0, seconds), "Seconds")}, {"queue": queue})


def record_webhook_disabled() -> None:
    """``WebhooksDisabled`` (Count): the failure policy switched a webhook off (spec §8)."""
    emit({WEBHOOKS_DISABLED: (1, "Count")})


def record_rate_limited() -> None:
    """``RateLimitRefusals`` (Count): a request refused with 429 ``RATE_LIMITED`` by the service's own limits."""
    emit({RATE_LIMITED: (1, "Count")})
