"""The Dashboard blueprint: importing the view modules registers their routes on it."""

from __future__ import annotations

from chalicelib.dashboard import views_admin, views_auth, views_keys, views_listings, views_webhooks
from chalicelib.dashboard.web import bp

#: The view modules, imported for their route registrations.
VIEWS = (views_auth, views_webhooks, views_listings, views_admin, views_keys)

__all__ = ["VIEWS", "bp"]
