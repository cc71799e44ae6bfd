"""CloudWatch alarms, their SNS topic and the service's dashboard, for the merge template.

One alarm per condition the runbook (``docs/operations.md``) has a section for:

* a dead-letter queue (or the stream consumers' on-failure queue) holding a message;
* a function's errors and throttles;
* the API's 5xx rate and p99 latency (API Gateway's metrics of the REST API);
* the iterator age of every stream consumer (the search indexers and the outbox consumers);
* the age of the oldest message of the approval queue and of the delivery lanes and retries.

Every alarm notifies :data:`TOPIC` (``AWS::SNS::Topic``, e-mail subscription from the parameter
:data:`EMAIL_PARAMETER`) when it fires and when it clears. Thresholds are module constants
with the reason for each (the service's promises: ``docs/operations.md``, "Promises");
``tests/package`` asserts each alarm's metric, threshold and action in the packaged template.
The dashboard (:data:`DASHBOARD`) graphs the same metrics and the service's own EMF metrics
(``chalicelib/telemetry/metrics.py``).

Metric names and dimensions: AWS docs "Amazon SQS metrics", "Lambda function metrics",
"Amazon API Gateway dimensions and metrics" (REST APIs publish by ``ApiName``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from chalicelib.telemetry import metrics
from infra.cfn_functions import API_HANDLER, EventSource
from infra.cfn_parameters import string_parameter

#: Logical id of the alarms' SNS topic, and of the parameter naming its e-mail subscriber.
TOPIC = "AlarmTopic"
EMAIL_PARAMETER = "AlarmEmail"
DASHBOARD = "OperationsDashboard"
#: API Gateway's ``ApiName`` of the REST API: Chalice names the API after the app (``app.py``).
API_NAME = "matching-service"

PARAMETERS: dict[str, Any] = {
    EMAIL_PARAMETER: string_parameter(
        "E-mail address notified when an alarm fires or clears (confirm the SNS subscription e-mail once).",
        r"^[^@\s]+@[^@\s]+\.[^@\s]+$", constraint="an e-mail address",
    ),
}

#: The dead-letter queues and the stream consumers' on-failure queue: any message there is work
#: the service gave up on (docs/operations.md, "Dead-letter queue not empty").
DEAD_LETTER_QUEUES = ["ApprovalDeadLetterQueue", "DeliveryDeadLetterQueue", "DeliveryRetryDeadLetterQueue", "EventsStreamFailureQueue"]

#: Queue -> seconds its oldest message may wait. Approval tasks wait for a human: a day without a
#: review breaks the moderation promise. Lanes: a healthy lane's message waits seconds; 5 minutes
#: means lanes are stalled (a hanging receiver holds only its own lane, 10 s per attempt). Retries
#: are held up to 600 s on purpose (the last backoff, ``WEBHOOK_RETRY_DELAYS_SECONDS``): 900 s is past it.
#: Slow lanes work timing-out endpoints, 4 lanes of up to 10 s per attempt (24 attempts a minute):
#: 900 s means a backlog of about 360 attempts, more than the slow lanes can ever catch up with.
QUEUE_AGE_SECONDS = {"ApprovalQueue": 86400, "DeliveryQueue": 300, "SlowDeliveryQueue": 900, "DeliveryRetryQueue": 900}

#: Stream consumer handler -> milliseconds of iterator age (age of the last record read) that
#: fire: search and alerts promise freshness within a minute (docs/operations.md, "Promises");
#: the approval and webhook routing consumers within five.
ITERATOR_AGE_MS = {
    "maintain_listing_postings": 60_000,
    "maintain_profile_postings": 60_000,
    "percolate_saved_searches": 60_000,
    "erase_accounts": 300_000,
    "finish_listing_deletions": 300_000,
    "enqueue_webhook_deliveries": 300_000,
    "enqueue_approvals": 300_000,
}

#: API 5xx rate (API Gateway ``5XXError`` Average = share of requests answered 5xx) that fires: 1 %.
API_5XX_RATE = 0.01
#: API p99 latency (API Gateway ``Latency``, milliseconds) that fires: search pages and writes
#: answer well under a second (bench/search.py, bench/requests.py); 2 s at p99 is a regression.
API_P99_MS = 2000
#: Function errors (invocations that raised or timed out) in 5 minutes that fire. Handlers catch
#: receivers' failures themselves; an error is a fault of ours.
FUNCTION_ERRORS = 1
#: Throttled invocations in 5 minutes that fire (the account's concurrency is exhausted).
FUNCTION_THROTTLES = 1


@dataclass(frozen=True)
class Alarm:
    """One CloudWatch alarm: ``statistic(metric) comparison threshold`` for ``periods`` of ``period`` s."""

    name: str
    namespace: str
    metric: str
    dimensions: dict[str, Any]
    threshold: float
    statistic: str = "Maximum"
    period: int = 60
    periods: int = 1
    comparison: str = "GreaterThanThreshold"
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def resource(self) -> dict[str, Any]:
        """The ``AWS::CloudWatch::Alarm`` resource (missing data is no breach: idle queues publish none)."""
        stat: dict[str, Any] = (
            {"ExtendedStatistic": self.statistic} if self.statistic.startswith("p") else {"Statistic": self.statistic}
        )
        return {
            "Type": "AWS::CloudWatch::Alarm",
            "Properties": {
                "AlarmDescription": self.description,
                "Namespace": self.namespace,
                "MetricName": self.metric,
                "Dimensions": [{"Name": k, "Value": v} for k, v in self.dimensions.items()],
                **stat,
                "Period": self.period,
                "EvaluationPeriods": self.periods,
                "DatapointsToAlarm": self.periods,
                "Threshold": self.threshold,
                "ComparisonOperator": self.comparison,
                "TreatMissingData": "notBreaching",
                "AlarmActions": [{"Ref": TOPIC}],
                "OKActions": [{"Ref": TOPIC}],
                **self.extra,
            },
        }


def _queue(name: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [name, "QueueName"]}


def alarms(sources: list[EventSource]) -> list[Alarm]:
    """Every alarm of the service, given the app's event sources (``cfn_functions.event_sources``)."""
    found: list[Alarm] = []
    for queue in DEAD_LETTER_QUEUES:
        found.append(Alarm(
            f"{queue}NotEmptyAlarm", "AWS/SQS", "ApproximateNumberOfMessagesVisible", {"QueueName": _queue(queue)}, 0,
            description=f"{queue} holds messages the service gave up on (docs/operations.md, 'Dead-letter queue not empty').",
        ))
    for queue, seconds in QUEUE_AGE_SECONDS.items():
        found.append(Alarm(
            f"{queue}OldestMessageAlarm", "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": _queue(queue)}, seconds,
            period=300,
            description=f"The oldest message of {queue} waited over {seconds} s (docs/operations.md, 'Queue too old').",
        ))
    functions = [API_HANDLER, *sorted({s.function for s in sources})]
    for function in functions:
        for metric, threshold in (("Errors", FUNCTION_ERRORS), ("Throttles", FUNCTION_THROTTLES)):
            found.append(Alarm(
                f"{function}{metric}Alarm", "AWS/Lambda", metric, {"FunctionName": {"Ref": function}}, threshold,
                statistic="Sum", period=300, comparison="GreaterThanOrEqualToThreshold",
                description=f"{function}: {metric.lower()} (docs/operations.md, 'Function errors or throttles').",
            ))
    for source in sorted((s for s in sources if s.kind == "DynamoDB"), key=lambda s: s.function):
        threshold = ITERATOR_AGE_MS[source.handler]
        found.append(Alarm(
            f"{source.function}IteratorAgeAlarm", "AWS/Lambda", "IteratorAge", {"FunctionName": {"Ref": source.function}},
            threshold, period=60, periods=5,
            description=f"{source.function} is over {threshold // 1000} s behind its stream for 5 minutes "
                        "(docs/operations.md, 'Stream consumer behind').",
        ))
    found.append(Alarm(
        "Api5xxRateAlarm", "AWS/ApiGateway", "5XXError", {"ApiName": API_NAME}, API_5XX_RATE,
        statistic="Average", period=300,
        description="Over 1 % of API requests answered 5xx for 5 minutes (docs/operations.md, 'API 5xx rate').",
    ))
    found.append(Alarm(
        "ApiLatencyP99Alarm", "AWS/ApiGateway", "Latency", {"ApiName": API_NAME}, API_P99_MS,
        statistic="p99", period=300, periods=3,
        description=f"API p99 latency over {API_P99_MS} ms for 15 minutes (docs/operations.md, 'API p99 latency').",
    ))
    return found


def _widget(title: str, series: list[list[Any]], stat: str = "Maximum") -> dict[str, Any]:
    return {
        "type": "metric", "width": 12, "height": 6,
        "properties": {"title": title, "region": "${AWS::Region}", "stat": stat, "period": 60, "view": "timeSeries",
                       "metrics": series},
    }


def _emf(name: str, *dimensions: str) -> list[str]:
    """A series of the service's own EMF metrics (``service`` dimension first, as powertools writes it)."""
    return [metrics.NAMESPACE, name, "service", metrics.SERVICE, *dimensions]


def dashboard(sources: list[EventSource]) -> dict[str, Any]:
    """The ``AWS::CloudWatch::Dashboard``: the alarms' metrics and the service's EMF metrics, one graph each.

    The body is JSON with ``${Logical.Attr}`` references resolved by ``Fn::Sub``.
    """
    functions = [API_HANDLER, *sorted({s.function for s in sources})]
    streams = sorted(s.function for s in sources if s.kind == "DynamoDB")
    widgets = [
        _widget("API 5xx rate", [["AWS/ApiGateway", "5XXError", "ApiName", API_NAME]], "Average"),
        _widget("API latency p99 (ms)", [["AWS/ApiGateway", "Latency", "ApiName", API_NAME]], "p99"),
        _widget("Function errors", [["AWS/Lambda", "Errors", "FunctionName", f"${{{f}}}"] for f in functions], "Sum"),
        _widget("Function throttles", [["AWS/Lambda", "Throttles", "FunctionName", f"${{{f}}}"] for f in functions], "Sum"),
        _widget("Stream iterator age (ms)", [["AWS/Lambda", "IteratorAge", "FunctionName", f"${{{f}}}"] for f in streams]),
        _widget("Dead-letter queues (messages)", [
            ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", f"${{{q}.QueueName}}"] for q in DEAD_LETTER_QUEUES
        ]),
        _widget("Oldest message (s)", [
            ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", f"${{{q}.QueueName}}"] for q in QUEUE_AGE_SECONDS
        ]),
        _widget("Indexer lag (s)", [_emf(metrics.INDEXER_LAG, "stream", s) for s in ("listings", "users")]),
        _widget("Deliveries by outcome", [
            _emf(metrics.DELIVERIES, "outcome", o) for o in ("sent", "failed", "duplicate", "drained", "error")
        ], "Sum"),
        _widget("Lane age (s)", [_emf(metrics.LANE_AGE, "queue", q) for q in ("delivery", "slow-delivery")]),
        _widget("Approval queue age at claim (s)", [_emf(metrics.APPROVAL_QUEUE_AGE)]),
        _widget("Search: latency p99 (ms) and items read p99", [
            _emf(metrics.SEARCH_LATENCY, "index", "listings"), _emf(metrics.SEARCH_ITEMS_READ, "index", "listings"),
            _emf(metrics.SEARCH_LATENCY, "index", "profiles"), _emf(metrics.SEARCH_ITEMS_READ, "index", "profiles"),
        ], "p99"),
        _widget("Webhooks disabled, rate-limit refusals", [_emf(metrics.WEBHOOKS_DISABLED), _emf(metrics.RATE_LIMITED)], "Sum"),
    ]
    for index, widget in enumerate(widgets):  # two columns
        widget["x"], widget["y"] = 12 * (index % 2), 6 * (index // 2)
    body = json.dumps({"widgets": widgets}, separators=(",", ":"))
    return {"Type": "AWS::CloudWatch::Dashboard", "Properties": {"DashboardBody": {"Fn::Sub": body}}}


def resources(sources: list[EventSource]) -> dict[str, Any]:
    """The topic, every alarm and the dashboard, by logical id."""
    topic = {
        "Type": "AWS::SNS::Topic",
        "Properties": {
            "DisplayName": "Matching Service alarms",
            "Subscription": [{"Protocol": "email", "Endpoint": {"Ref": EMAIL_PARAMETER}}],
        },
    }
    return {TOPIC: topic, **{a.name: a.resource() for a in alarms(sources)}, DASHBOARD: dashboard(sources)}
