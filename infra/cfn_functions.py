"""What the merge template overrides in Chalice's functions: role and event source mappings.

Chalice names the functions after the Python handlers (``deliver_webhooks`` ->
``DeliverWebhooks``, the API handler ``APIHandler``) and their event sources
``<Function>DynamodbEventSource`` / ``<Function>SqsEventSource``; its mappings point at the
placeholder ARNs of ``chalicelib.kernel.config`` and cannot set partial-batch responses, bisection,
retry limits or on-failure destinations (DESIGN "Deployment facts"). The overrides are
computed from ``app.event_sources`` when the template is generated: ``chalice package``
merges the template key by key, so an override for a function that does not exist would
leave a resource without ``Type`` or code in the output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from chalice.utils import to_cfn_resource_name

from infra.cfn_parameters import number_parameter

#: Chalice's logical id of the function that serves every route.
API_HANDLER = "APIHandler"
#: The execution role of every function (``infra/cfn_iam.py``).
ROLE = "LambdaExecutionRole"
#: On-failure destination of the stream event source mappings: metadata of the batches
#: (shard, sequence numbers) that exhausted their retries or aged out.
STREAM_FAILURE_QUEUE = "EventsStreamFailureQueue"

#: Settings of every DynamoDB stream mapping (SAM ``DynamoDB`` event properties).
STREAM_DEFAULTS: dict[str, Any] = {
    "FunctionResponseTypes": ["ReportBatchItemFailures"],
    "BisectBatchOnFunctionError": True,
    "MaximumRetryAttempts": 5,
    "MaximumRecordAgeInSeconds": 21600,
}

#: Batching and parallelism of the posting indexers (AWS Lambda Developer Guide, "Using AWS
#: Lambda with Amazon DynamoDB": batch size, batching window, "Concurrent batches per shard").
#: ``BatchSize`` 500: one invocation applies up to 500 records in a few steps of parallel calls
#: (chalicelib/search/index.py, ``apply``); the listings of a batch share their common terms'
#: vocabulary counts (one UpdateItem per term and batch), so behind a burst a larger batch makes
#: fewer calls per listing, and a batch of 500 stays well inside the function's 30 s timeout
#: (Lambda also ends a batch at its 6 MB payload limit). ``MaximumBatchingWindowInSeconds`` 1: under
#: bulk writes a batch fills before the window ends; when idle a record waits at most 1 s (counted
#: in the freshness bound of docs/search.md). ``ParallelizationFactor`` 10: up to ten batches of one shard at once;
#: Lambda still hands the records of one partition key (one listing, one user) to one batch at a time,
#: in order, which is the only order the indexers need (docs/search.md, "Freshness").
POSTINGS_SCALING: dict[str, Any] = {"BatchSize": 500, "MaximumBatchingWindowInSeconds": 1, "ParallelizationFactor": 10}


def outbox_consumer(*event_types: str) -> dict[str, Any]:
    """Settings of an outbox-stream consumer whose work must not be lost: retried as long as
    approvals are (10 times over up to a day), and invoked only for the outbox inserts of
    ``event_types`` (AWS Lambda Developer Guide, "Lambda event filtering", DynamoDB: no invocation
    for the many other events)."""
    pattern = {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"type": {"S": list(event_types)}}}}
    return {
        "MaximumRetryAttempts": 10,
        "MaximumRecordAgeInSeconds": 86400,
        "FilterCriteria": {"Filters": [{"Pattern": json.dumps(pattern, separators=(",", ":"))}]},
    }


#: Per-function settings over :data:`STREAM_DEFAULTS` / :data:`QUEUE_DEFAULTS`, by handler name.
FUNCTION_SETTINGS: dict[str, dict[str, Any]] = {
    # An approval task must not be lost: retry longer (each attempt re-sends only failed records).
    "enqueue_approvals": {"MaximumRetryAttempts": 10, "MaximumRecordAgeInSeconds": 86400},
    # Routing only (no sends): only faults of ours fail a record; replays are deduplicated.
    "enqueue_webhook_deliveries": {"MaximumRetryAttempts": 10, "MaximumRecordAgeInSeconds": 21600},
    # A profile change not applied leaves its postings stale until the user's next change:
    # retry as long as approvals do (applying is idempotent and version-checked).
    "maintain_profile_postings": {"MaximumRetryAttempts": 10, "MaximumRecordAgeInSeconds": 86400, **POSTINGS_SCALING},
    # A match not recorded is an alert never sent, matches of a deleted search not removed stay
    # stored (replays are idempotent).
    "percolate_saved_searches": outbox_consumer("listing.activated", "saved_search.deleted"),
    # An erasure round not run stops the erasure until an administrator resumes it (rounds are
    # idempotent and conditional on their round number).
    "erase_accounts": outbox_consumer("account.erasure_step"),
    # Requests of a deleted listing not rejected stay PENDING for their requesters (rejections
    # are conditional on PENDING: replays change nothing).
    "finish_listing_deletions": outbox_consumer("listing.deleted"),
    # Postings lag the listings while a batch fails: retry as long as a day (records are applied
    # idempotently by version, so retries and replays change nothing twice).
    "maintain_listing_postings": {"MaximumRetryAttempts": 10, "MaximumRecordAgeInSeconds": 86400, **POSTINGS_SCALING},
}

#: Visibility timeout of the delivery lanes' queue and timeout of their consumer (``deliver_webhooks``,
#: prod stage of ``.chalice/config.json``), seconds: Lambda refuses an SQS mapping whose queue's
#: visibility is shorter than the function's timeout. A message is held for only
#: ``DELIVERY_LEASE_SECONDS`` (20 s) at a time: the consumer's heartbeat shortens the hold at once
#: and extends it while the attempt runs (chalicelib/webhooks/delivery/heartbeat.py).
DELIVERY_VISIBILITY_SECONDS = 30

#: Visibility timeout of the slow lanes' queue and timeout of their consumer
#: (``deliver_slow_webhooks``), seconds: one slow-lane message carries up to 10 webhooks'
#: deliveries of one event (``lanes.MAX_MESSAGE_DELIVERIES``), attempted one after another, each
#: at most the 10 s deadline (spec §6) plus its few DynamoDB and SQS calls: 10 x 15 s. The hold of
#: each message is still ``DELIVERY_LEASE_SECONDS`` (20 s) at a time, extended per attempt by
#: the heartbeat, so a dead worker's message is taken over as soon as from the owners' lanes.
SLOW_DELIVERY_TIMEOUT_SECONDS = 150

#: How many delivery lanes the ``deliver_webhooks`` mapping runs at once (the
#: ``DeliveryConcurrency`` parameter, default 100). Lambda scales a FIFO mapping with the number
#: of message groups that have messages, one invocation per group (AWS Lambda Developer Guide,
#: "Configuring scaling behavior for SQS event source mappings"); ``ScalingConfig.MaximumConcurrency``
#: bounds it and ``ReservedConcurrentExecutions`` reserves that much of the account's concurrency
#: for the function, so busy API traffic never takes it away. Hanging receivers hold one each
#: (one message in flight per group), so the others are isolated from up to this many - 1 of them.
DELIVERY_CONCURRENCY_PARAMETER = "DeliveryConcurrency"
PARAMETERS: dict[str, Any] = {
    DELIVERY_CONCURRENCY_PARAMETER: number_parameter(  # ScalingConfig.MaximumConcurrency: 2..1000
        "Most webhook delivery lanes worked at once (reserved concurrency of the delivery function)",
        default=100, minimum=2, maximum=1000,
    ),
}

#: Properties of a function besides its events, by handler name.
FUNCTION_PROPERTIES: dict[str, dict[str, Any]] = {
    "deliver_webhooks": {"ReservedConcurrentExecutions": {"Ref": DELIVERY_CONCURRENCY_PARAMETER}},
}

FUNCTION_SETTINGS["deliver_webhooks"] = {"ScalingConfig": {"MaximumConcurrency": {"Ref": DELIVERY_CONCURRENCY_PARAMETER}}}

#: Most slow lanes (``SlowDeliveryQueue``) the ``deliver_slow_webhooks`` mapping works at once: the
#: queue has ``DELIVERY_SLOW_LANES`` message groups (default 4) and Lambda runs one invocation per
#: group, so this bound is reached only if the setting is raised (ScalingConfig: 2..1000).
SLOW_DELIVERY_CONCURRENCY = 4
FUNCTION_SETTINGS["deliver_slow_webhooks"] = {"ScalingConfig": {"MaximumConcurrency": SLOW_DELIVERY_CONCURRENCY}}

#: Settings of every SQS mapping. SQS mappings take no retry or destination settings: a
#: message is retried after its visibility timeout and moved to the queue's dead-letter
#: queue after ``maxReceiveCount`` receives (the queue's ``RedrivePolicy``).
QUEUE_DEFAULTS: dict[str, Any] = {"FunctionResponseTypes": ["ReportBatchItemFailures"]}


@dataclass(frozen=True)
class EventSource:
    """One event handler of the app and the template resource that feeds it."""

    handler: str
    kind: Literal["DynamoDB", "SQS"]
    resource: str

    @property
    def function(self) -> str:
        """Chalice's logical id of the handler's function."""
        return to_cfn_resource_name(self.handler)

    @property
    def event(self) -> str:
        """Chalice's name of the function's event (``<Function>DynamodbEventSource``)."""
        suffix = "-dynamodb-event-source" if self.kind == "DynamoDB" else "-sqs-event-source"
        return to_cfn_resource_name(self.handler + suffix)


def resource_of_arn(arn: str, candidates: list[str]) -> str:
    """The logical id among ``candidates`` whose physical name ``arn`` names.

    Physical names are the logical ids, possibly prefixed (local stack, tests) or with the
    placeholders of ``chalicelib.kernel.config`` (``...:table/EventsTable/stream/placeholder``,
    ``...:DeliveryRetryQueue``).

    Raises
    ------
    ValueError
        No candidate matches: the handler subscribes to a resource the template lacks.
    """
    name = arn.split(":table/", 1)[1].split("/", 1)[0] if ":table/" in arn else arn.rsplit(":", 1)[-1].removesuffix(".fifo")
    matches = [c for c in candidates if name == c or name.endswith(c)]
    if not matches:
        raise ValueError(f"{arn} names none of the template's resources {candidates}")
    return max(matches, key=len)


def event_sources(tables: list[str], queues: list[str]) -> list[EventSource]:
    """The app's DynamoDB-stream and SQS handlers (imports ``app``)."""
    from chalice.app import DynamoDBEventConfig, SQSEventConfig

    from app import app

    found = []
    for source in app.event_sources:
        if isinstance(source, DynamoDBEventConfig):
            found.append(EventSource(source.name, "DynamoDB", resource_of_arn(source.stream_arn, tables)))
        elif isinstance(source, SQSEventConfig):
            if source.queue_arn is None:
                raise ValueError(f"{source.name}: subscribe with queue_arn= (queue= breaks the merge template)")
            found.append(EventSource(source.name, "SQS", resource_of_arn(source.queue_arn, queues)))
        else:
            raise ValueError(f"{source.name}: event source {type(source).__name__} has no template support")
    return found


def _event_properties(source: EventSource) -> dict[str, Any]:
    if source.kind == "DynamoDB":
        return {
            "Stream": {"Fn::GetAtt": [source.resource, "StreamArn"]},
            **STREAM_DEFAULTS,
            **FUNCTION_SETTINGS.get(source.handler, {}),
            "DestinationConfig": {"OnFailure": {"Type": "SQS", "Destination": {"Fn::GetAtt": [STREAM_FAILURE_QUEUE, "Arn"]}}},
        }
    return {"Queue": {"Fn::GetAtt": [source.resource, "Arn"]}, **QUEUE_DEFAULTS, **FUNCTION_SETTINGS.get(source.handler, {})}


def function_overrides(sources: list[EventSource]) -> dict[str, Any]:
    """The merge template's entries for Chalice's functions: the role, and each event's settings."""
    role = {"Fn::GetAtt": [ROLE, "Arn"]}
    overrides: dict[str, Any] = {API_HANDLER: {"Type": "AWS::Serverless::Function", "Properties": {"Role": role}}}
    for source in sources:
        overrides[source.function] = {
            "Type": "AWS::Serverless::Function",
            "Properties": {
                "Role": role,
                **FUNCTION_PROPERTIES.get(source.handler, {}),
                "Events": {source.event: {"Type": source.kind, "Properties": _event_properties(source)}},
            },
        }
    return overrides
