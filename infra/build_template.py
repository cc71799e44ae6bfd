"""Generate ``infra/resources.json``, the CloudFormation merge template (one source of truth).

Run ``python infra/build_template.py`` after changing a resource here; a unit test fails when
the committed JSON and this generator disagree. The local stack (``chalicelib.local.resources``)
creates its tables and queues from the generated JSON, and ``chalice package --merge-template``
merges it into the production SAM template.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("resources.json")


def _table(
    key: list[tuple[str, str]],
    gsis: dict[str, list[tuple[str, str]]] | None = None,
    ttl: str | None = None,
    stream: bool = False,
) -> dict[str, Any]:
    """A PAY_PER_REQUEST table; ``key`` and each GSI are ``[(attr, "S"), ...]`` hash then range."""
    attrs: dict[str, str] = {}

    def schema(parts: list[tuple[str, str]]) -> list[dict[str, str]]:
        for name, kind in parts:
            attrs[name] = kind
        return [{"AttributeName": n, "KeyType": t} for (n, _), t in zip(parts, ["HASH", "RANGE"], strict=False)]

    props: dict[str, Any] = {
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": schema(key),
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "SSESpecification": {"SSEEnabled": True},
    }
    if gsis:
        props["GlobalSecondaryIndexes"] = [
            {"IndexName": name, "KeySchema": schema(parts), "Projection": {"ProjectionType": "ALL"}}
            for name, parts in gsis.items()
        ]
    props["AttributeDefinitions"] = [{"AttributeName": n, "AttributeType": t} for n, t in attrs.items()]
    if ttl:
        props["TimeToLiveSpecification"] = {"AttributeName": ttl, "Enabled": True}
    if stream:
        props["StreamSpecification"] = {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    return {"Type": "AWS::DynamoDB::Table", "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain", "Properties": props}


def _queue(dead_letter: str, visibility_seconds: int, max_receives: int) -> dict[str, Any]:
    return {
        "Type": "AWS::SQS::Queue",
        "Properties": {
            "VisibilityTimeout": visibility_seconds,
            "MessageRetentionPeriod": 1209600,
            "SqsManagedSseEnabled": True,
            "RedrivePolicy": {
                "deadLetterTargetArn": {"Fn::GetAtt": [dead_letter, "Arn"]},
                "maxReceiveCount": max_receives,
            },
        },
    }


def _dead_letter_queue() -> dict[str, Any]:
    return {"Type": "AWS::SQS::Queue", "Properties": {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True}}


S = "S"
N = "N"

RESOURCES: dict[str, Any] = {
    "UsersTable": _table(
        [("userId", S)],
        {"byCountry": [("country", S), ("userId", S)], "bySearchShard": [("searchShard", S), ("userId", S)]},
    ),
    "ApiKeysTable": _table([("keyHash", S)]),
    "ListingsTable": _table(
        [("listingId", S)],
        {
            "byOwner": [("ownerId", S), ("createdAt", S)],
            # Sparse: activeCategory/geoN are set only while the listing is ACTIVE.
            "activeByCategory": [("activeCategory", S), ("activeSort", S)],
            "activeByGeo3": [("geo3", S), ("geoSort", S)],
            "activeByGeo4": [("geo4", S), ("geoSort", S)],
            "activeByGeo5": [("geo5", S), ("geoSort", S)],
        },
    ),
    "RequestsTable": _table(
        [("requestId", S)],
        {
            "byRequester": [("requesterId", S), ("createdAt", S)],
            "byRecipient": [("recipientId", S), ("createdAt", S)],
            "bySubject": [("subjectId", S), ("createdAt", S)],
        },
    ),
    "ConversationsTable": _table([("conversationId", S)]),
    "ConversationMembersTable": _table([("userId", S), ("conversationId", S)]),
    "MessagesTable": _table([("conversationId", S), ("messageKey", S)]),
    "WebhooksTable": _table([("webhookId", S)], {"byOwner": [("ownerId", S), ("createdAt", S)]}),
    "DeliveriesTable": _table([("webhookId", S), ("deliveryKey", S)], ttl="expiresAt"),
    "EventsTable": _table([("eventId", S)], ttl="expiresAt", stream=True),
    "ApprovalQueue": _queue("ApprovalDeadLetterQueue", visibility_seconds=300, max_receives=10),
    "ApprovalDeadLetterQueue": _dead_letter_queue(),
    "DeliveryRetryQueue": _queue("DeliveryRetryDeadLetterQueue", visibility_seconds=120, max_receives=5),
    "DeliveryRetryDeadLetterQueue": _dead_letter_queue(),
}

#: Environment variables every function gets: resource names and ARNs from the template.
ENVIRONMENT: dict[str, Any] = {
    "USERS_TABLE": {"Ref": "UsersTable"},
    "API_KEYS_TABLE": {"Ref": "ApiKeysTable"},
    "LISTINGS_TABLE": {"Ref": "ListingsTable"},
    "REQUESTS_TABLE": {"Ref": "RequestsTable"},
    "CONVERSATIONS_TABLE": {"Ref": "ConversationsTable"},
    "CONVERSATION_MEMBERS_TABLE": {"Ref": "ConversationMembersTable"},
    "MESSAGES_TABLE": {"Ref": "MessagesTable"},
    "WEBHOOKS_TABLE": {"Ref": "WebhooksTable"},
    "DELIVERIES_TABLE": {"Ref": "DeliveriesTable"},
    "EVENTS_TABLE": {"Ref": "EventsTable"},
    "EVENTS_STREAM_ARN": {"Fn::GetAtt": ["EventsTable", "StreamArn"]},
    "APPROVAL_QUEUE_URL": {"Ref": "ApprovalQueue"},
    "DELIVERY_RETRY_QUEUE_URL": {"Ref": "DeliveryRetryQueue"},
    "DELIVERY_RETRY_QUEUE_ARN": {"Fn::GetAtt": ["DeliveryRetryQueue", "Arn"]},
}


def template() -> dict[str, Any]:
    """The merge template as a dict."""
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Transform": "AWS::Serverless-2016-10-31",
        "Globals": {"Function": {"Environment": {"Variables": ENVIRONMENT}}},
        "Resources": RESOURCES,
    }


def render() -> str:
    """The merge template as the JSON text committed in ``infra/resources.json``."""
    return json.dumps(template(), indent=2, sort_keys=False) + "\n"


if __name__ == "__main__":
    OUT.write_text(render())
    print(f"wrote {OUT}")
