"""The Lambda functions' execution role: only the actions and resources the code uses.

Chalice's generated policy sees only ``app.py`` (DESIGN "Deployment facts"), so the role is
declared here and every function's ``Role`` points at it (``manage_iam_role: false`` in
``.chalice/config.json``). Two kinds of actions are granted:

* the calls the code makes itself (:data:`TABLE_ACTIONS`, :data:`QUEUE_ACTIONS`,
  :data:`GEOCODING_ACTIONS`); ``tests/unit/test_packaging.py`` checks them against the boto3
  calls found in ``chalicelib/``, both ways;
* what Lambda needs with the role to run the event source mappings and write logs
  (:data:`STREAM_READ_ACTIONS`, :data:`QUEUE_POLL_ACTIONS`, ``sqs:SendMessage`` to the
  on-failure destination, CloudWatch Logs).

No statement uses an action wildcard.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: DynamoDB calls of ``chalicelib.persistence.storage`` (TransactWriteItems is authorized per item:
#: Put/Update/Delete/ConditionCheck, there is no IAM action of its own).
TABLE_ACTIONS = [
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:DescribeTable",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
]

#: SQS calls of the code, per queue (approval tasks are claimed and decided by admin routes;
#: failed webhook deliveries are re-queued with a delay).
QUEUE_ACTIONS: dict[str, list[str]] = {
    "ApprovalQueue": [
        "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage", "sqs:SendMessage"
    ],
    # GetQueueAttributes: the readiness probe of GET /v1/health (chalicelib/system/health.py).
    # ChangeMessageVisibility: the delivery heartbeat (chalicelib/webhooks/delivery/heartbeat.py).
    "DeliveryQueue": ["sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes", "sqs:SendMessage"],
    "SlowDeliveryQueue": ["sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes", "sqs:SendMessage"],
    "DeliveryRetryQueue": ["sqs:GetQueueAttributes", "sqs:SendMessage"],
}

#: Amazon Location Service (``GEOCODER=amazon-location``).
GEOCODING_ACTIONS = ["geo-places:Geocode"]

#: What a DynamoDB stream event source mapping reads with the function's role.
STREAM_READ_ACTIONS = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"]

#: AWS managed policy granting the X-Ray writes of active tracing (xray:PutTraceSegments, ...).
XRAY_WRITE_POLICY = "AWSXRayDaemonWriteAccess"

#: What an SQS event source mapping does with the function's role.
QUEUE_POLL_ACTIONS = ["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"]


def _arn(logical_id: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [logical_id, "Arn"]}


def _statement(sid: str, actions: Iterable[str], resources: list[Any]) -> dict[str, Any]:
    return {"Sid": sid, "Effect": "Allow", "Action": sorted(set(actions)), "Resource": resources}


def policy_document(
    tables: list[str], indexed_tables: list[str], stream_tables: list[str], polled_queues: list[str], failure_queues: list[str]
) -> dict[str, Any]:
    """The execution role's policy.

    Parameters
    ----------
    tables:
        Logical ids of every table.
    indexed_tables:
        Tables with global secondary indexes (queried by index).
    stream_tables:
        Tables whose stream feeds an event source mapping.
    polled_queues:
        Queues that feed an SQS event source mapping.
    failure_queues:
        On-failure destinations of the stream event source mappings.
    """
    statements = [
        _statement(
            "Tables",
            TABLE_ACTIONS,
            [_arn(t) for t in tables] + [{"Fn::Sub": f"${{{t}.Arn}}/index/*"} for t in indexed_tables],
        )
    ]
    for queue in sorted(set(QUEUE_ACTIONS) | set(polled_queues)):
        actions = QUEUE_ACTIONS.get(queue, []) + (QUEUE_POLL_ACTIONS if queue in polled_queues else [])
        statements.append(_statement(queue, actions, [_arn(queue)]))
    if stream_tables:
        statements.append(_statement("StreamRead", STREAM_READ_ACTIONS, [{"Fn::GetAtt": [t, "StreamArn"]} for t in stream_tables]))
        statements.append(
            _statement("StreamList", ["dynamodb:ListStreams"], [{"Fn::Sub": f"${{{t}.Arn}}/stream/*"} for t in stream_tables])
        )
    if failure_queues:
        statements.append(_statement("EventSourceFailures", ["sqs:SendMessage"], [_arn(q) for q in failure_queues]))
    log_groups = "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/lambda/*"
    statements.append(_statement("LogGroups", ["logs:CreateLogGroup"], [{"Fn::Sub": log_groups}]))
    statements.append(_statement("LogStreams", ["logs:CreateLogStream", "logs:PutLogEvents"], [{"Fn::Sub": log_groups + ":log-stream:*"}]))
    statements.append(
        _statement("Geocoding", GEOCODING_ACTIONS, [{"Fn::Sub": "arn:${AWS::Partition}:geo-places:${AWS::Region}::provider/default"}])
    )
    return {"Version": "2012-10-17", "Statement": statements}


def execution_role(policy: dict[str, Any]) -> dict[str, Any]:
    """The ``AWS::IAM::Role`` every function runs with, ``policy`` inline."""
    return {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
                ],
            },
            "Policies": [{"PolicyName": "MatchingServiceFunctions", "PolicyDocument": policy}],
            # X-Ray's PutTraceSegments/PutTelemetryRecords take no resource-level permissions (only
            # "*"): AWS's managed policy for them (Tracing: Active; AWS docs, "Lambda and X-Ray").
            "ManagedPolicyArns": [{"Fn::Sub": f"arn:${{AWS::Partition}}:iam::aws:policy/{XRAY_WRITE_POLICY}"}],
        },
    }
