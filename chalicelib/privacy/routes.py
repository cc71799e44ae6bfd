"""Route of the account export: ``GET /v1/me/export``."""

from __future__ import annotations

from chalice.app import Blueprint

from chalicelib.auth.service import Caller
from chalicelib.http import route
from chalicelib.lazy import lazy_imports

# The export's modules load with the first request of this route, not at cold start.
with lazy_imports(__name__):
    from chalicelib.privacy import export, models

bp = Blueprint(__name__)


@route(bp, "/v1/me/export", "GET", response=lambda: models.AccountExport, tags=("profiles",))
def export_account(caller: Caller) -> models.AccountExport:
    """Everything held about you as one JSON document (GDPR Article 20): profile, channels,
    listings, requests, conversations with their messages, webhooks (without secrets) and their
    recent deliveries, saved searches, API key metadata, blocks and reports made."""
    return export.export_account(caller)
