"""The Dashboard blueprint: importing the view modules registers their routes on it."""

from __future__ import annotations

from chalicelib.dashboard import (
    views_account,
    views_admin,
    views_audit,
    views_auth,
    views_blocks,
    views_keys,
    views_listing_form,
    views_listings,
    views_not_found,
    views_reports,
    views_unread,
    views_webhooks,
)
from chalicelib.dashboard.web import bp

#: The view modules, imported for their route registrations.
# views_listing_form before views_listings: /listings/new is a literal path, not a {listingId};
# views_not_found last: /dashboard/{unknown} answers only what no literal path does
VIEWS = (views_auth, views_webhooks, views_listing_form, views_listings, views_admin, views_keys, views_unread,
         views_audit, views_blocks, views_reports, views_account, views_not_found)

__all__ = ["VIEWS", "bp"]
