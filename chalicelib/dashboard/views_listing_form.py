"""Listings made and changed in the Dashboard: "New listing" (choose a category and
role, then a form generated from its fields), "Edit", and the listing's bound webhooks.

Every POST goes through the API's own services and answers 303 on success; a refused form is
shown again with the values entered and each error next to its field (400). Saving changed
content sends the listing to review (PENDING); changing only the webhooks keeps its status
(:func:`chalicelib.listings.service.update_listing`).
"""

from __future__ import annotations

import functools
from typing import Any

from chalice.app import Response

from chalicelib.dashboard.web import Page, form_version, page
from chalicelib.edge.http import parse_model
from chalicelib.kernel import errors
from chalicelib.kernel.lazy_imports import lazy_imports

with lazy_imports(__name__):  # loaded with the first form, not at the API's cold start
    from chalicelib.categories import registry
    from chalicelib.dashboard import listing_form
    from chalicelib.listings import models as listing_models
    from chalicelib.listings import service as listings
    from chalicelib.users import service as users
    from chalicelib.webhooks import service as webhooks
    from chalicelib.workflows import listing_detail


def _kinds() -> list[tuple[str, str]]:
    """``(category:role, "Category — Role")`` for the chooser, in the registry's order."""
    return [(f"{c.key}:{r.key}", f"{c.name} — {r.name}") for c in registry.all_categories().values() for r in c.roles]


def _errors_by_field(exc: errors.DomainError) -> dict[str, str]:
    """Each refused field's first issue, in the form's words (:func:`listing_form.plain_issue`)."""
    found: dict[str, str] = {}
    for detail in exc.details or []:
        head, dot, rest = detail.field.partition(".")
        name = f"meta.{rest.split('[')[0]}" if head == "meta" and dot else head.split("[")[0]  # a field's control
        found.setdefault(name, listing_form.plain_issue(detail.issue) if detail.issue else "Check this value.")
    return found


def _refused(exc: errors.DomainError) -> str:
    """The summary of a refused form: the fields are marked, or (no field named) the service's message."""
    message = "The listing was not saved: check the fields marked below" if exc.details else exc.message
    return message if message.endswith(".") else f"{message}."


#: The summary of an edit form whose listing changed after the form was filled.
CHANGED_MEANWHILE = ("The listing changed after this form was opened (in another tab, by a pause or a review, or through the"
                     " API), so nothing was saved. The form shows what you entered; saving it again replaces the listing's"
                     " values with these.")


def _form_page(current: Page, *, category: Any, role_key: str, meta: dict[str, str], channels: list[str],
               webhook_ids: list[str], listing: Any = None, version: int | None = None, status: int = 200,
               problems: dict[str, str] | None = None, message: str = "") -> Response:
    fields = listing_form.form_fields(category, role_key, meta)
    placed = {f"meta.{f.key}" for f in fields} | {"channels", "webhookIds"}  # the issues shown under a control
    return current.render(
        "listing_form.html", status, nav="listings", category=category, role_key=role_key,
        role_name=next((r.name for r in category.roles if r.key == role_key), role_key),
        fields=fields, connected=users.list_channels(current.caller).channels,
        hooks=webhooks.list_webhooks(current.caller).webhooks, chosen_channels=set(channels), chosen_hooks=set(webhook_ids),
        listing=listing, version=version, problems=problems or {}, message=message,
        unplaced={k: v for k, v in (problems or {}).items() if k not in placed},
    )


@page("/dashboard/listings/new")
def new_listing(current: Page) -> Response:
    """Step 1 without ``kind`` (a GET form choosing category and role); step 2 the listing form."""
    kind = current.query("kind")
    if not kind:
        return current.render("listing_new.html", nav="listings", kinds=_kinds())
    category_key, _, role_key = kind.partition(":")
    category = registry.get_category(category_key)
    if role_key not in {r.key for r in category.roles}:
        raise errors.NotFound(f"Role '{role_key}' not found in category '{category_key}'")
    connected = [c.key.value for c in users.list_channels(current.caller).channels]
    return _form_page(current, category=category, role_key=role_key, meta={}, channels=connected[:1], webhook_ids=[])


@page("/dashboard/listings/new", "POST")
def create(current: Page) -> Response:
    """Create the listing (PENDING, queued for review), then show it."""
    category = registry.get_category(current.field("category"))
    role_key = current.field("role")
    form = current.form()
    meta = listing_form.meta_from_form(category, role_key, form)
    channels, hooks = form.get("channels", []), form.get("webhooks", [])
    try:
        body = parse_model(listing_models.ListingCreate, {"categoryKey": category.key, "roleKey": role_key, "meta": meta,
                                                          "channels": channels, "webhookIds": hooks})
        made = listings.create_listing(current.caller, body)
    except errors.RuleViolation as exc:
        return _form_page(current, category=category, role_key=role_key, meta=meta, channels=channels, webhook_ids=hooks,
                          status=400, problems=_errors_by_field(exc), message=_refused(exc))
    return current.redirect(f"/listings/{made.id}?done=created")


@page("/dashboard/listings/{listingId}/edit")
def edit(current: Page, listingId: str) -> Response:
    """The listing form filled with the listing's content, channels and webhooks, and the
    listing's version (hidden: the save applies to that version only)."""
    found, version = _own_listing(current, listingId)
    return _form_page(current, category=registry.get_category(found.categoryKey), role_key=found.roleKey, meta=found.meta,
                      channels=found.channels, webhook_ids=found.webhookIds, listing=found, version=version)


def _own_listing(current: Page, listing_id: str) -> tuple[Any, int]:
    """The caller's listing ``listing_id`` (its detail) and its version.

    Raises
    ------
    NotFound
        No such listing, or not the caller's.
    """
    read = listing_detail.read_listing_detail(current.caller, listing_id)
    found = read.result
    if found.webhookIds is None:  # only the owner's view carries them: not the caller's listing
        raise errors.NotFound(f"Listing '{listing_id}' not found")
    return found, read.version


@page("/dashboard/listings/{listingId}/edit", "POST")
def save(current: Page, listingId: str) -> Response:
    """Save the form: changed content returns the listing to review; channels/webhooks alone do not.
    Only what changed is sent (channels and webhooks as sets: the form lists them in its own order),
    so saving an unchanged form changes nothing.

    The save applies to the version the form was filled from (its hidden ``version``, sent as the
    API's ``If-Match``): a listing changed since (another tab's save, a pause, a review) is not
    overwritten with the form's older values; the form is shown again (409) with what was typed,
    the current version, and :data:`CHANGED_MEANWHILE`.
    """
    found, version = _own_listing(current, listingId)
    category = registry.get_category(found.categoryKey)
    form = current.form()
    posted = listing_form.meta_from_form(category, found.roleKey, form)
    channels, hooks = form.get("channels", []), form.get("webhooks", [])
    form_page = functools.partial(_form_page, current, category=category, role_key=found.roleKey, meta=posted, channels=channels,
                                  webhook_ids=hooks, listing=found, version=version)
    if form_version(current) != version:
        return form_page(status=409, message=CHANGED_MEANWHILE)
    patch = listing_form.meta_patch(category, found.roleKey, found.meta, posted)
    changes = {"meta": patch or None, "channels": None if set(channels) == set(found.channels) else channels,
               "webhookIds": None if set(hooks) == set(found.webhookIds) else hooks}
    if not any(value is not None for value in changes.values()):
        return current.redirect(f"/listings/{listingId}?done=saved")
    try:
        body = parse_model(listing_models.ListingUpdate, changes)
        updated = listings.update_listing(current.caller, listingId, body, expected_version=version)
    except errors.RuleViolation as exc:
        return form_page(status=400, problems=_errors_by_field(exc), message=_refused(exc))
    except errors.PreconditionFailed:  # changed between the read above and the write
        return form_page(version=_own_listing(current, listingId)[1], status=409, message=CHANGED_MEANWHILE)
    # The service decides whether the content changed (it compares values as stored): its answer's status says.
    pending = listing_models.ListingStatus.PENDING
    resubmitted = updated.status == pending and found.status != pending
    return current.redirect(f"/listings/{listingId}?done={'resubmitted' if resubmitted else 'saved'}")


@page("/dashboard/listings/{listingId}/webhooks", "POST")
def bind_webhooks(current: Page, listingId: str) -> Response:
    """Replace the listing's bound webhooks (its status is kept)."""
    body = parse_model(listing_models.ListingUpdate, {"webhookIds": current.form().get("webhooks", [])})
    listings.update_listing(current.caller, listingId, body)
    return current.redirect(f"/listings/{listingId}?done=webhooks")
