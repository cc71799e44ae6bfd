"""The Chalice application: registers the blueprints and the event handlers; the code lives in chalicelib/."""

from __future__ import annotations

from typing import Any

from chalice import Chalice
from chalice.app import DynamoDBEvent

from chalicelib.approvals import handlers as approval_handlers
from chalicelib.approvals.routes import bp as approvals_bp
from chalicelib.categories.routes import bp as categories_bp
from chalicelib.config import settings
from chalicelib.geocoding.routes import bp as geocoding_bp
from chalicelib.http import chalice_errors_middleware
from chalicelib.listings.routes import bp as listings_bp
from chalicelib.system.routes import bp as system_bp
from chalicelib.users.routes import bp as users_bp

app = Chalice(app_name="matching-service")
app.register_middleware(chalice_errors_middleware, "http")
for blueprint in (system_bp, users_bp, categories_bp, geocoding_bp, listings_bp, approvals_bp):
    app.register_blueprint(blueprint)


@app.on_dynamodb_record(stream_arn=settings().EVENTS_STREAM_ARN, batch_size=100, starting_position="TRIM_HORIZON")
def enqueue_approvals(event: DynamoDBEvent) -> dict[str, Any]:
    """Outbox stream -> approval queue (``listing.submitted`` events)."""
    return approval_handlers.handle_outbox_batch(event.to_dict())
