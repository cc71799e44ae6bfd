"""Generate ``infra/resources.json``, the CloudFormation merge template (one source of truth).

Run ``python infra/build_template.py`` after changing a resource here or an event handler in
``app.py``; a unit test fails when the committed JSON and this generator disagree. The local
stack (``local_stack/resources.py``) creates its tables and queues from the generated JSON,
and ``chalice package --merge-template`` merges it into the production SAM template
(``make package``).

The template holds the tables (GSIs, TTL, point-in-time recovery, on-demand billing), the
outbox stream, the queues with their dead-letter queues, the functions' environment
(``Globals``), the execution role (``cfn_iam.py``), the settings of Chalice's functions and
event source mappings (``cfn_functions.py``) and of its API stage (``cfn_api.py``), and the
alarms, their SNS topic and the dashboard (``cfn_alarms.py``). Every function runs with X-Ray
tracing active (``Globals``) and the API stage traces too (``chalicelib/telemetry/tracing.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: python infra/build_template.py
    sys.path.insert(0, str(ROOT))

from infra import cfn_alarms, cfn_api, cfn_cors, cfn_functions, cfn_iam  # noqa: E402

OUT = Path(__file__).with_name("resources.json")


def _table(
    key: list[tuple[str, str]],
    gsis: dict[str, list[tuple[str, str]]] | None = None,
    ttl: str | None = None,
    stream: bool = False,
    keys_only: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A PAY_PER_REQUEST table; ``key`` and each GSI are ``[(attr, "S"), ...]`` hash then range.

    GSIs named in ``keys_only`` project only the keys (the reader fetches the items it keeps).
    """
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
            {
                "IndexName": name,
                "KeySchema": schema(parts),
                "Projection": {"ProjectionType": "KEYS_ONLY" if name in keys_only else "ALL"},
            }
            for name, parts in gsis.items()
        ]
    props["AttributeDefinitions"] = [{"AttributeName": n, "AttributeType": t} for n, t in attrs.items()]
    if ttl:
        props["TimeToLiveSpecification"] = {"AttributeName": ttl, "Enabled": True}
    if stream:
        props["StreamSpecification"] = {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    return {"Type": "AWS::DynamoDB::Table", "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain", "Properties": props}


#: Queues hold work in flight (approval tasks, retries, failed batches): keep them when the stack goes.
_KEEP = {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}


def _queue(dead_letter: str, visibility_seconds: int, max_receives: int) -> dict[str, Any]:
    return {
        "Type": "AWS::SQS::Queue",
        **_KEEP,
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


def _dead_letter_queue(fifo: bool = False) -> dict[str, Any]:
    props: dict[str, Any] = {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True}
    if fifo:  # the dead-letter queue of a FIFO queue must be FIFO too
        props["FifoQueue"] = True
    return {"Type": "AWS::SQS::Queue", **_KEEP, "Properties": props}


def _fifo_queue(dead_letter: str, visibility_seconds: int, max_receives: int) -> dict[str, Any]:
    """A FIFO queue with explicit deduplication ids (no content-based deduplication)."""
    queue = _queue(dead_letter, visibility_seconds, max_receives)
    queue["Properties"] = {"FifoQueue": True, "ContentBasedDeduplication": False, **queue["Properties"]}
    return queue


S = "S"
#: Logical id of the generated cursor secret.
CURSOR_SECRET_RESOURCE = "CursorSecret"

RESOURCES: dict[str, Any] = {
    # Streamed: the profile posting lists (SearchIndexTable) follow every change (profiles/handlers.py).
    "UsersTable": _table(
        [("userId", S)],
        {
            "bySearchShard": [("searchShard", S), ("userId", S)],
            # The administrators' user lists (GET /v1/admin/users), sorted by nameKey =
            # <folded displayName>#<userId>: all users, by country, by level, by both.
            "adminByName": [("adminAll", S), ("nameKey", S)],
            "adminByCountry": [("country", S), ("nameKey", S)],
            "adminByLevel": [("adminLevel", S), ("nameKey", S)],
            "adminByCountryLevel": [("adminCountryLevel", S), ("nameKey", S)],
        },
        stream=True,
    ),
    # byUser: a user's own keys (Dashboard "API keys", auth.own_keys); expiresAt: a rolled key's end.
    "ApiKeysTable": _table([("keyHash", S)], {"byUser": [("userId", S), ("createdAt", S)]}, ttl="expiresAt"),
    "ListingsTable": _table(
        [("listingId", S)],
        {
            # The owner's list (GET /v1/listings/mine): sort <createdAt>#<listingId>, listings.owner_list.
            "ownerNewest": [("ownerId", S), ("ownerNewest", S)],
            # Sparse: the active*/geo* attributes are set only while the listing is ACTIVE.
            # Geo search (search.index): partition = category, location field, geohash prefix of 1/3/5;
            # sort = the point's full geohash + id, so any finer cell is one key range.
            "activeByGeoCell1": [("geoCell1", S), ("geoPoint", S)],
            "activeByGeoCell3": [("geoCell3", S), ("geoPoint", S)],
            "activeByGeoCell5": [("geoCell5", S), ("geoPoint", S)],
            # Sparse, write-sharded, newest first (search.index): pages read straight from the index.
            "activeByCategoryShard": [("activeCategoryShard", S), ("activeNewest", S)],
            "activeByRoleShard": [("activeRoleShard", S), ("activeNewest", S)],
            # Sparse: pendingQueue/pendingSort are set only while the listing is PENDING (review queue).
            "pendingReview": [("pendingQueue", S), ("pendingSort", S)],
        },
        # Feeds the listing posting lists (chalicelib/listings/search/indexer.py).
        stream=True,
    ),
    # Posting lists and their size counters (search/index.py): pk = list, sk = member.
    # expiresAt: a removed document's tombstone, kept for the stream's 24 h (search/index.py).
    "SearchIndexTable": _table([("pk", S), ("sk", S)], ttl="expiresAt"),
    # The list counters (chalicelib/search/counters.py, chalicelib/listings/counters.py): one small
    # item per counted list owner (pk = count#<name>, sk = shard), updated inside the transactions
    # of the changes they count, so a transaction names this small table, not the posting lists.
    "CountersTable": _table([("pk", S), ("sk", S)]),
    # One GSI per list route and filter combination (chalicelib/match_requests/list_indexes.py), all
    # sorted newest first by newest = createdAt#requestId: a page is one Query of pageSize + 1.
    "RequestsTable": _table(
        [("requestId", S)],
        {
            "sentNewest": [("requesterId", S), ("newest", S)],
            "sentByType": [("sentType", S), ("newest", S)],
            "sentByStatus": [("sentStatus", S), ("newest", S)],
            "sentByTypeStatus": [("sentTypeStatus", S), ("newest", S)],
            "receivedNewest": [("recipientId", S), ("newest", S)],
            "receivedByType": [("receivedType", S), ("newest", S)],
            "receivedByStatus": [("receivedStatus", S), ("newest", S)],
            "receivedByTypeStatus": [("receivedTypeStatus", S), ("newest", S)],
            "subjectNewest": [("subjectId", S), ("newest", S)],
            "subjectByStatus": [("subjectStatus", S), ("newest", S)],
        },
    ),
    "ConversationsTable": _table([("conversationId", S)]),
    # A user's conversations most recently active first (recent = updatedAt#conversationId).
    "ConversationMembersTable": _table(
        [("userId", S), ("conversationId", S)],
        {"recent": [("userId", S), ("recent", S)], "recentByType": [("memberType", S), ("recent", S)]},
    ),
    # byMessageId: one message by its id (a report names the message it is about; the read marker
    # finds a message's number from its id: conversations.repository).
    "MessagesTable": _table([("conversationId", S), ("messageKey", S)], {"byMessageId": [("messageId", S)]}),
    "WebhooksTable": _table([("webhookId", S)], {"byOwner": [("ownerId", S), ("createdAt", S)]}),
    # byEvent (sparse: logged attempts only, eventLogKey = <attemptedAt>#<webhookId>#<attempt>): the
    # attempts of one event, newest first (GET /v1/events/{eventId}/deliveries, attempt_log.py).
    "DeliveriesTable": _table(
        [("webhookId", S), ("deliveryKey", S)], {"byEvent": [("eventId", S), ("eventLogKey", S)]}, ttl="expiresAt"
    ),
    # The outbox; its events of a user are also the events API's records (chalicelib/persistence/outbox.py):
    # sparse list indexes, recipientSort = <createdAt>#<eventId>, one per filter of GET /v1/events.
    "EventsTable": _table(
        [("eventId", S)],
        {
            "byRecipient": [("recipientId", S), ("recipientSort", S)],
            "byRecipientType": [("recipientType", S), ("recipientSort", S)],
            "byRecipientListingType": [("recipientListingType", S), ("recipientSort", S)],
        },
        ttl="expiresAt",
        stream=True,
    ),
    # powertools idempotency records of POST/PATCH requests (chalicelib/idempotency.py): its
    # DynamoDBPersistenceLayer's default layout, expired by TTL 24 h after the first request.
    "IdempotencyTable": _table([("id", S)], ttl="expiration"),
    # Saved searches (chalicelib/saved_searches): the searches and each owner's counter item,
    # the percolator's posting lists (read by key only), and the matches found.
    "SavedSearchesTable": _table([("ownerId", S), ("savedSearchId", S)]),
    "PercolatorTable": _table([("postingKey", S)]),
    # matchedNewest = <matchedAt>#<listingId>: a search's matches newest first, ties by listing id,
    # so a cursor can stand between two matches of the same millisecond (chalicelib/saved_searches/repository.py).
    "SavedSearchMatchesTable": _table(
        [("savedSearchId", S), ("listingId", S)], {"matchedNewest": [("savedSearchId", S), ("matchedNewest", S)]}
    ),
    # Dashboard sign-ins: keyed by the SHA-256 of the session id (the id itself is never stored),
    # removed by TTL 12 h after sign-in (chalicelib/dashboard/sessions.py).
    "DashboardSessionsTable": _table([("sessionHash", S)], ttl="expiresAt"),
    # Rate limits (chalicelib/rate_limits): one item per API key's token bucket and per user's
    # daily quota counter, each removed by TTL once idle or a day after its day.
    "RateLimitsTable": _table([("pk", S)], ttl="expiresAt"),
    # The administrators' audit log (chalicelib/audit): one item per action, never changed; one
    # index per filter combination (actor, action, target), each sorted newest = createdAt#entryId.
    "AuditLogTable": _table(
        [("entryId", S)],
        {
            "newest": [("logAll", S), ("newest", S)],
            "byActor": [("actorId", S), ("newest", S)],
            "byAction": [("action", S), ("newest", S)],
            "byTarget": [("targetId", S), ("newest", S)],
            "byActorAction": [("actorAction", S), ("newest", S)],
            "byActorTarget": [("actorTarget", S), ("newest", S)],
            "byActionTarget": [("actionTarget", S), ("newest", S)],
            "byActorActionTarget": [("actorActionTarget", S), ("newest", S)],
        },
    ),
    # Blocks between users (chalicelib/blocks): two items per block, one in each user's partition;
    # blockingNewest (sparse) holds a user's blocks newest first (newest = blockedAt#otherId).
    "BlocksTable": _table([("userId", S), ("otherId", S)], {"blockingNewest": [("blockerId", S), ("newest", S)]}),
    # Reports of listings, profiles and messages (chalicelib/reports): reportId is derived from the
    # reporter and the subject (one report per subject); the moderation queue sorts by
    # queueKey = <0 open | 1 decided>#<createdAt>#<reportId>, open reports first, oldest first.
    "ReportsTable": _table(
        [("reportId", S)],
        {
            "queueAll": [("queueAll", S), ("queueKey", S)],
            "queueByType": [("subjectType", S), ("queueKey", S)],
            # The reports a user made, oldest first (the account export).
            "byReporter": [("reporterId", S), ("createdAt", S)],
        },
    ),
    # Account erasures (chalicelib/privacy/erasure*.py): one record per erased user, written with a
    # condition on the userId (one erasure however many DELETE /v1/me arrive at once) and moved
    # step by step by the outbox stream's erasure consumer; kept after the erasure (no TTL).
    "ErasuresTable": _table([("userId", S)]),
    "ApprovalQueue": _queue("ApprovalDeadLetterQueue", visibility_seconds=300, max_receives=10),
    "ApprovalDeadLetterQueue": _dead_letter_queue(),
    # Consumed by an SQS event source mapping: visibility at least 6x the function timeout
    # (60 s in the prod stage), as AWS recommends, so that a slow batch is not received twice.
    # The delivery lanes (chalicelib/webhooks/delivery/lanes.py): one message group per webhook.
    # Visibility = the consumer's 30 s timeout (Lambda refuses a mapping whose queue's visibility is
    # shorter than the function's timeout), not 6x: the consumer's heartbeat brings each message's
    # hold down to DELIVERY_LEASE_SECONDS (20 s) at once and extends it while the attempt runs, so a
    # dead worker's delivery is taken over within 20 s (docs/webhook-delivery.md "Crash recovery").
    # A message whose attempt hit a fault of ours 5 times rests in the dead-letter queue (and its
    # lane moves on).
    "DeliveryQueue": _fifo_queue("DeliveryDeadLetterQueue", visibility_seconds=cfn_functions.DELIVERY_VISIBILITY_SECONDS, max_receives=5),
    # The slow lanes: deliveries to webhooks whose circuit breaker is open, and their retries, on a
    # queue of their own so that a failing owner's backlog never deepens (nor shares the throughput
    # of) the healthy lanes' queue; its own consumer, deliver_slow_webhooks, runs at most
    # DELIVERY_SLOW_LANES of them at once (one per message group). A message may carry up to 10
    # webhooks' deliveries of one event, attempted one after another: visibility = that consumer's
    # longer timeout; the heartbeat holds each message 20 s at a time all the same. Same dead-letter queue.
    "SlowDeliveryQueue": _fifo_queue(
        "DeliveryDeadLetterQueue", visibility_seconds=cfn_functions.SLOW_DELIVERY_TIMEOUT_SECONDS, max_receives=5
    ),
    "DeliveryDeadLetterQueue": _dead_letter_queue(fifo=True),
    "DeliveryRetryQueue": _queue("DeliveryRetryDeadLetterQueue", visibility_seconds=360, max_receives=5),
    "DeliveryRetryDeadLetterQueue": _dead_letter_queue(),
    # On-failure destination of the outbox stream's event source mappings (cfn_functions.py).
    cfn_functions.STREAM_FAILURE_QUEUE: _dead_letter_queue(),
    # The HMAC key of the page cursors (chalicelib/kernel/cursors.py): 64 random letters and digits
    # (~380 bits) generated by Secrets Manager when the stack is created, so every deployed stack
    # signs with its own key and none is in the repository. The functions get it through the
    # dynamic reference CURSOR_SECRET below (docs/decisions.md "Cursor secret").
    CURSOR_SECRET_RESOURCE: {
        "Type": "AWS::SecretsManager::Secret",
        "Properties": {
            "Description": "HMAC-SHA256 key of the Matching Service's page cursors (CURSOR_SECRET)",
            "GenerateSecretString": {"PasswordLength": 64, "ExcludePunctuation": True},
        },
    },
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
    "IDEMPOTENCY_TABLE": {"Ref": "IdempotencyTable"},
    "CORS_ALLOWED_ORIGINS": {"Ref": cfn_cors.PARAMETER},
    "SEARCH_INDEX_TABLE": {"Ref": "SearchIndexTable"},
    "COUNTERS_TABLE": {"Ref": "CountersTable"},
    "SAVED_SEARCHES_TABLE": {"Ref": "SavedSearchesTable"},
    "PERCOLATOR_TABLE": {"Ref": "PercolatorTable"},
    "SAVED_SEARCH_MATCHES_TABLE": {"Ref": "SavedSearchMatchesTable"},
    "DASHBOARD_SESSIONS_TABLE": {"Ref": "DashboardSessionsTable"},
    "RATE_LIMITS_TABLE": {"Ref": "RateLimitsTable"},
    "AUDIT_LOG_TABLE": {"Ref": "AuditLogTable"},
    "BLOCKS_TABLE": {"Ref": "BlocksTable"},
    "REPORTS_TABLE": {"Ref": "ReportsTable"},
    "ERASURES_TABLE": {"Ref": "ErasuresTable"},
    "EVENTS_STREAM_ARN": {"Fn::GetAtt": ["EventsTable", "StreamArn"]},
    "LISTINGS_STREAM_ARN": {"Fn::GetAtt": ["ListingsTable", "StreamArn"]},
    "USERS_STREAM_ARN": {"Fn::GetAtt": ["UsersTable", "StreamArn"]},
    "APPROVAL_QUEUE_URL": {"Ref": "ApprovalQueue"},
    "DELIVERY_QUEUE_URL": {"Ref": "DeliveryQueue"},
    "DELIVERY_QUEUE_ARN": {"Fn::GetAtt": ["DeliveryQueue", "Arn"]},
    "DELIVERY_SLOW_QUEUE_URL": {"Ref": "SlowDeliveryQueue"},
    "DELIVERY_SLOW_QUEUE_ARN": {"Fn::GetAtt": ["SlowDeliveryQueue", "Arn"]},
    "DELIVERY_RETRY_QUEUE_URL": {"Ref": "DeliveryRetryQueue"},
    "DELIVERY_RETRY_QUEUE_ARN": {"Fn::GetAtt": ["DeliveryRetryQueue", "Arn"]},
    # A CloudFormation dynamic reference: resolved to the secret's value when the functions are
    # created or updated (the `Ref` of a secret is its ARN), so no code reads Secrets Manager
    # at cold start and the execution role needs no secretsmanager permission.
    "CURSOR_SECRET": {"Fn::Sub": f"{{{{resolve:secretsmanager:${{{CURSOR_SECRET_RESOURCE}}}:SecretString}}}}"},
}


def _of_type(kind: str) -> list[str]:
    return [name for name, resource in RESOURCES.items() if resource["Type"] == kind]


def template() -> dict[str, Any]:
    """The merge template as a dict (imports ``app`` to find its event handlers)."""
    tables, queues = _of_type("AWS::DynamoDB::Table"), _of_type("AWS::SQS::Queue")
    sources = cfn_functions.event_sources(tables, queues)
    policy = cfn_iam.policy_document(
        tables,
        indexed_tables=[t for t in tables if "GlobalSecondaryIndexes" in RESOURCES[t]["Properties"]],
        stream_tables=sorted({s.resource for s in sources if s.kind == "DynamoDB"}),
        polled_queues=sorted({s.resource for s in sources if s.kind == "SQS"}),
        failure_queues=[cfn_functions.STREAM_FAILURE_QUEUE] if any(s.kind == "DynamoDB" for s in sources) else [],
    )
    resources: dict[str, Any] = {
        **RESOURCES,
        cfn_functions.ROLE: cfn_iam.execution_role(policy),
        **cfn_functions.function_overrides(sources),
        "RestAPI": cfn_cors.with_preflight(cfn_api.rest_api_override(), cfn_cors.api_routes()),
        **cfn_alarms.resources(sources),
    }
    resources["RestAPI"]["Properties"]["TracingEnabled"] = True
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Transform": "AWS::Serverless-2016-10-31",
        "Parameters": {**cfn_api.PARAMETERS, **cfn_cors.PARAMETERS, **cfn_functions.PARAMETERS, **cfn_alarms.PARAMETERS},
        # Tracing: Active on every function (X-Ray; SAM Globals): Lambda records each invocation.
        "Globals": {"Function": {"Tracing": "Active", "Environment": {"Variables": ENVIRONMENT}}},
        "Resources": resources,
    }


def render() -> str:
    """The merge template as the JSON text committed in ``infra/resources.json``."""
    return json.dumps(template(), indent=2, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    """Write ``infra/resources.json``; with ``--check``, only fail (exit 1) when it is stale."""
    text = render()
    if "--check" in argv:
        if OUT.read_text() != text:
            print(f"{OUT} is stale: run `python infra/build_template.py`", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
