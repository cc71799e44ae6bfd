"""Routes of a user's rights over their data: ``GET /v1/me/export``, ``DELETE /v1/me`` and the
administrators' view of erasures."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.edge.http import routes
from chalicelib.kernel.lazy_imports import lazy_imports

# The modules load with the first request of one of these routes, not at cold start.
with lazy_imports(__name__):
    from chalicelib.privacy import erasure, erasure_models, export, models

bp = Blueprint(__name__)
route = routes(bp)


@route("/v1/me/export", "GET", response=lambda: models.AccountExport, tags=("profiles",))
def export_account(caller: Caller) -> models.AccountExport:
    """Everything held about you as one JSON document (GDPR Article 20): profile, channels,
    listings, requests, conversations with their messages, webhooks (without secrets) and their
    recent deliveries, saved searches, API key metadata, blocks and reports made."""
    return export.export_account(caller)


@route("/v1/me", "DELETE", response=lambda: erasure_models.Erasure, status=202, tags=("profiles",), error_statuses=(404,))
def erase_account(caller: Caller) -> erasure_models.Erasure:
    """Erase your account (GDPR Article 17).

    Your API keys stop working at once (every later call answers 401, Dashboard sessions end);
    listings, webhooks, saved searches, channels, blocks and the profile are deleted and pending
    requests you sent withdrawn, in steps that follow within seconds. In conversations the other
    participant keeps the messages, shown as from "Deleted user". Answers 202 with the erasure;
    concurrent calls start one erasure and answer it."""
    return erasure.request_erasure(caller)


@route("/v1/admin/erasures/{userId}", "GET", auth="admin", response=lambda: erasure_models.Erasure, tags=("admin",))
def get_erasure(caller: Caller, userId: str) -> erasure_models.Erasure:
    """An account erasure and how far it has come.

    Kept after the erasure completes; it holds no personal data."""
    return erasure.get_erasure(userId)


@route("/v1/admin/erasures/{userId}/resume", "POST", auth="admin", response=lambda: erasure_models.Erasure, status=202, tags=("admin",))
def resume_erasure(caller: Caller, userId: str) -> erasure_models.Erasure:
    """Run an in-progress erasure's current step again.

    For an erasure whose steps stopped on a fault; harmless while it runs; 409 once completed."""
    return erasure.resume(userId)
