"""The Chalice application: registers the blueprints and the event handlers; the code lives in chalicelib/.

The event handlers import their modules when first called: the API function never loads the
stream batch utilities or the webhook delivery client. The route modules register their paths
here but load their domain's services and models with the first request of one of their routes
(:mod:`chalicelib.kernel.lazy_imports`). Both keep the cold start short (``bench/cold_start.py``).
"""

from __future__ import annotations

from typing import Any

from chalice.app import Chalice, DynamoDBEvent, SQSEvent

from chalicelib.admin.routes import bp as admin_bp
from chalicelib.approvals.routes import bp as approvals_bp
from chalicelib.blocks.routes import bp as blocks_bp
from chalicelib.categories.routes import bp as categories_bp
from chalicelib.composition import services as edge_services
from chalicelib.conversations.routes import bp as conversations_bp
from chalicelib.dashboard.routes import bp as dashboard_bp
from chalicelib.dashboard.web import security_headers_middleware
from chalicelib.docs_page.routes import bp as docs_bp
from chalicelib.edge.cors import cors_middleware
from chalicelib.edge.http import chalice_errors_middleware, install_gate
from chalicelib.edge.request_context import request_context_middleware
from chalicelib.geocoding.routes import bp as geocoding_bp
from chalicelib.kernel.config import settings
from chalicelib.listings.routes import bp as listings_bp
from chalicelib.match_requests.routes import bp as match_requests_bp
from chalicelib.openapi.route import bp as openapi_bp
from chalicelib.privacy.routes import bp as privacy_bp
from chalicelib.profiles.routes import bp as profiles_bp
from chalicelib.rate_limits.edge import rate_limit_fields_middleware
from chalicelib.reports.routes import bp as reports_bp
from chalicelib.saved_searches.routes import bp as saved_searches_bp
from chalicelib.system.routes import bp as system_bp
from chalicelib.users.routes import bp as users_bp
from chalicelib.webhooks.events_api.routes import bp as events_bp
from chalicelib.webhooks.routes import bp as webhooks_bp
from chalicelib.workflows.block_routes import bp as block_routes_bp
from chalicelib.workflows.routes import bp as workflows_bp

install_gate(edge_services())  # authentication, rate limits and idempotency behind the edge
app = Chalice(app_name="matching-service")
# Outermost first: request id and access log around CORS (API) and the Dashboard's security headers around the
# error-body rewriting around the RateLimit fields of admitted requests.
app.register_middleware(request_context_middleware, "http")
app.register_middleware(cors_middleware, "http")
app.register_middleware(security_headers_middleware, "http")  # the Dashboard's answers only, errors rewritten included
app.register_middleware(chalice_errors_middleware, "http")
app.register_middleware(rate_limit_fields_middleware, "http")
for blueprint in (system_bp, users_bp, categories_bp, geocoding_bp, listings_bp, approvals_bp):
    app.register_blueprint(blueprint)
app.register_blueprint(webhooks_bp)
app.register_blueprint(events_bp)
app.register_blueprint(profiles_bp)
app.register_blueprint(match_requests_bp)
app.register_blueprint(conversations_bp)
app.register_blueprint(saved_searches_bp)
app.register_blueprint(workflows_bp)
app.register_blueprint(admin_bp)
app.register_blueprint(blocks_bp)
app.register_blueprint(block_routes_bp)
app.register_blueprint(reports_bp)
app.register_blueprint(privacy_bp)
app.register_blueprint(openapi_bp)
app.register_blueprint(docs_bp)
app.register_blueprint(dashboard_bp)


@app.on_dynamodb_record(stream_arn=settings().EVENTS_STREAM_ARN, batch_size=100, starting_position="TRIM_HORIZON")
def enqueue_approvals(event: DynamoDBEvent) -> dict[str, Any]:
    """Outbox stream -> approval queue (``listing.submitted`` events)."""
    from chalicelib.approvals import handlers as approval_handlers

    return approval_handlers.handle_outbox_batch(event.to_dict())


@app.on_dynamodb_record(stream_arn=settings().EVENTS_STREAM_ARN, batch_size=100, starting_position="TRIM_HORIZON")
def enqueue_webhook_deliveries(event: DynamoDBEvent) -> dict[str, Any]:
    """Outbox stream -> one message per (event, webhook) in the webhook's delivery lane."""
    from chalicelib.webhooks.delivery import handlers as webhook_handlers

    return webhook_handlers.handle_outbox_batch(event.to_dict(), event.context)


@app.on_dynamodb_record(stream_arn=settings().EVENTS_STREAM_ARN, batch_size=25, starting_position="TRIM_HORIZON")
def percolate_saved_searches(event: DynamoDBEvent) -> dict[str, Any]:
    """Outbox stream -> saved searches: ``listing.activated`` -> matches + ``listing.matched``;
    ``saved_search.deleted`` -> its stored matches removed (bounded steps)."""
    from chalicelib.saved_searches import handlers as saved_search_handlers

    return saved_search_handlers.handle_outbox_batch(event.to_dict())


@app.on_dynamodb_record(stream_arn=settings().EVENTS_STREAM_ARN, batch_size=10, starting_position="TRIM_HORIZON")
def erase_accounts(event: DynamoDBEvent) -> dict[str, Any]:
    """Outbox stream -> account erasures: ``account.erasure_step`` -> one bounded round of the erasure."""
    from chalicelib.privacy import erasure_handlers

    return erasure_handlers.handle_outbox_batch(event.to_dict())


@app.on_dynamodb_record(stream_arn=settings().EVENTS_STREAM_ARN, batch_size=10, starting_position="TRIM_HORIZON")
def finish_listing_deletions(event: DynamoDBEvent) -> dict[str, Any]:
    """Outbox stream -> listing deletions: ``listing.deleted`` -> the requests its transaction left PENDING rejected."""
    from chalicelib.workflows import handlers as workflow_handlers

    return workflow_handlers.handle_outbox_batch(event.to_dict())


# Batch size and window (seconds) are the deployed ones (infra/cfn_functions.py, POSTINGS_SCALING); the local runner honours them.
@app.on_dynamodb_record(stream_arn=settings().LISTINGS_STREAM_ARN, batch_size=500, starting_position="TRIM_HORIZON",
                        maximum_batching_window_in_seconds=1)
def maintain_listing_postings(event: DynamoDBEvent) -> dict[str, Any]:
    """Listings stream -> the listing posting lists of search (idempotent, version-checked)."""
    from chalicelib.listings.search import indexer

    return indexer.handle_stream_batch(event.to_dict())


@app.on_dynamodb_record(stream_arn=settings().USERS_STREAM_ARN, batch_size=500, starting_position="TRIM_HORIZON",
                        maximum_batching_window_in_seconds=1)
def maintain_profile_postings(event: DynamoDBEvent) -> dict[str, Any]:
    """Users stream -> profile posting lists (profile search; idempotent, version-checked)."""
    from chalicelib.profiles import handlers as profile_handlers

    return profile_handlers.handle_users_batch(event.to_dict())


# Batch size 1: an invocation holds one lane's message only, so no lane waits on another's receiver.
@app.on_sqs_message(queue_arn=settings().DELIVERY_QUEUE_ARN, batch_size=1)
def deliver_webhooks(event: SQSEvent) -> dict[str, Any]:
    """Owner lanes (FIFO, a few message groups per owner) -> signed attempts and the failure policy."""
    from chalicelib.webhooks.delivery import handlers as webhook_handlers

    return webhook_handlers.handle_lane_batch(event.to_dict(), event.context)


# A consumer of its own: the slow lanes' few message groups bound its concurrency, apart from the healthy lanes'.
@app.on_sqs_message(queue_arn=settings().DELIVERY_SLOW_QUEUE_ARN, batch_size=1)
def deliver_slow_webhooks(event: SQSEvent) -> dict[str, Any]:
    """Slow lanes (FIFO, webhooks whose circuit breaker is open) -> signed attempts and the failure policy."""
    from chalicelib.webhooks.delivery import handlers as webhook_handlers

    return webhook_handlers.handle_lane_batch(event.to_dict(), event.context)


@app.on_sqs_message(queue_arn=settings().DELIVERY_RETRY_QUEUE_ARN, batch_size=10)
def retry_webhook_deliveries(event: SQSEvent) -> dict[str, Any]:
    """Delivery retry queue (backoff via DelaySeconds) -> back into the webhooks' lanes."""
    from chalicelib.webhooks.delivery import handlers as webhook_handlers

    return webhook_handlers.handle_retry_batch(event.to_dict(), event.context)
