"""Administrator pages: users (create with a first key, set verification level) and the approvals queue."""

from __future__ import annotations

from typing import Any

from chalice.app import Response

from chalicelib.dashboard.web import Page, field_errors, form_version, page, page_status
from chalicelib.edge import path_ids
from chalicelib.edge.http import parse_model
from chalicelib.kernel import errors
from chalicelib.kernel.channels import ChannelKey
from chalicelib.kernel.lazy_imports import lazy_imports

# The domains' modules load with the first page that uses them, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.approvals import models as approval_models
    from chalicelib.approvals import service as approval_service
    from chalicelib.dashboard import content
    from chalicelib.users import models as user_models
    from chalicelib.users import service as users

NOTICES = {
    "approved": "Listing approved: it is ACTIVE and searchable.",
    "rejected": "Listing rejected with your reason.",
}
#: The Users page's notices, by the ``done`` of the action that redirected to it (its other actions
#: show what they made from their flash).
USER_NOTICES = {
    "reinstated": "User reinstated: their API keys work again, and the listings and webhooks the suspension "
                  "paused or disabled are back.",
}


#: Users per page of the Users page's list (by display name; "Next page" carries the service's cursor).
USERS_PAGE_SIZE = 50

#: The "Set a verification level" form's fields as its errors name them (the API's names), in the
#: form's order: the first invalid one is focused.
LEVEL_FIELDS = ["userId", "verifiedLevel"]
#: The users list's filters (a GET form) as its errors name them, in the form's order; ``cursor`` is
#: the "Next page" link's (its error is shown in the form's summary).
LIST_FIELDS = ["q", "id", "country", "verifiedLevel", "cursor"]
#: The "Create a user" form's fields as its errors name them, in the form's order.
CREATE_FIELDS = ["displayName", "country", "verifiedLevel", "channels", "admin"]

#: Listings per page of the review page; its "Next page" link carries the service's signed cursor,
#: bound to this size, to the administrator and to the review queue.
REVIEW_PAGE_SIZE = 20


def _users_page(
    current: Page, status: int = 200, created: user_models.CreatedUser | None = None, updated: user_models.Profile | None = None,
    **level_form: Any,
) -> Response:
    """The Users page; ``level_form`` is a refused "Set a verification level" form: ``errors``,
    ``first_invalid``, ``error_message`` and the ``values`` typed (shown again with a 400), or a
    refused "Create a user" form as ``create_form`` (the same four keys)."""
    levels = list(range(user_models.MAX_VERIFIED_LEVEL + 1))
    given = {name: current.query(name).strip() for name in LIST_FIELDS}
    given["country"] = given["country"].lower()  # a person may type "DE"
    listed: list[user_models.AdminUser] = []
    list_form: dict[str, Any] = {"list_cursor": None}
    try:
        query = parse_model(user_models.AdminUserQuery, {"pageSize": USERS_PAGE_SIZE, **{k: v for k, v in given.items() if v}})
        found = users.list_users(current.caller.user_id, query)
        listed, list_form["list_cursor"] = found.users, found.nextCursor
    except errors.RuleViolation as exc:  # the filters shown again, each error under its field, and no list
        list_errors, first = field_errors(exc, LIST_FIELDS)
        list_form |= {"list_errors": list_errors, "list_first_invalid": first, "list_error_message": exc.message}
        status = page_status(exc) if status == 200 else status
    return current.render("users.html", status, nav="users", levels=levels, channel_keys=[c.value for c in ChannelKey],
                          created=created, updated=updated, listed=listed, notice=USER_NOTICES.get(current.query("done")),
                          list_filters={k: v for k, v in given.items() if k != "cursor" and v}, **list_form, **level_form)


@page("/dashboard/admin/users", access="admin")
def users_page(current: Page) -> Response:
    """The users list (the API's ``GET /v1/admin/users`` filters as a GET form, a level control in
    each row), the "Create user" and "Set verification level" forms, and what the last POST did
    (its flash: a new user's API key is shown once, never by a reload)."""
    created = current.take_flash("user-created")
    updated = current.take_flash("user-level")
    return _users_page(current, created=None if created is None else user_models.CreatedUser.model_validate(created),
                       updated=None if updated is None else user_models.Profile.model_validate(updated))


@page("/dashboard/admin/users", "POST", access="admin")
def create_user(current: Page) -> Response:
    """Create a user and show its first API key once. A refused form shows the page again (400)
    with the values typed and each error under its field; nothing is created."""
    channels = {key.value: current.field(f"channel_{key.value}").strip() for key in ChannelKey}
    typed = {name: current.field(name) for name in ("display_name", "country", "verified_level", "admin")}
    try:
        body = parse_model(user_models.AdminUserCreate, {
            "displayName": typed["display_name"],
            "country": typed["country"].strip().lower() or None,  # a person may type "DE"
            "verifiedLevel": typed["verified_level"] or "0",
            "channels": {k: v for k, v in channels.items() if v},
            "admin": typed["admin"] == "on",
        })
    except errors.RuleViolation as exc:
        found, first = field_errors(exc, CREATE_FIELDS)
        return _users_page(current, page_status(exc), create_form={
            "errors": found, "first_invalid": first, "error_message": exc.message, "values": {**typed, "channels": channels}})
    created = users.create_user(body, actor_id=current.caller.user_id)
    current.put_flash("user-created", created.model_dump(mode="json"))
    return current.redirect("/admin/users?done=created")


@page("/dashboard/admin/users/verification", "POST", access="admin")
def set_verification(current: Page) -> Response:
    """Set a user's verification level (the API's ``PATCH /v1/admin/users/{userId}`` rule).

    An empty (or blank) User id or a level out of range shows the page again (400) with the error
    under its field, changing nothing; an id no user can have (too long, characters no id has) is
    the same 404 page as an unknown one, answered before any read (the API's path-id rule).
    """
    user_id = current.field("user_id").strip()
    try:
        if not user_id:
            raise errors.RuleViolation.for_field("userId", "enter the id of the user (usr_…)", "Enter a user id")
        body = parse_model(user_models.AdminUserPatch, {"verifiedLevel": current.field("verified_level")})
    except errors.RuleViolation as exc:
        found, first = field_errors(exc, LEVEL_FIELDS)
        return _users_page(current, page_status(exc), errors=found, first_invalid=first, error_message=exc.message,
                           values={"user_id": user_id, "verified_level": current.field("verified_level")})
    if not path_ids.is_valid("userId", user_id):
        raise errors.NotFound(path_ids.not_found_message("userId", user_id))
    updated = users.set_verified_level(user_id, body.verifiedLevel, actor_id=current.caller.user_id)
    current.put_flash("user-level", updated.model_dump(mode="json"))
    return current.redirect("/admin/users?done=level")


@page("/dashboard/admin/approvals", access="admin")
def approvals(current: Page) -> Response:
    """PENDING listings, oldest first, with content, owner and submission time; nothing is claimed.

    ``cursor`` (query string) is the previous page's ``nextCursor``; an edited or foreign one is a
    400 page (the service's ``RuleViolation`` naming ``cursor``).
    """
    return _approvals_page(current)


def _approvals_page(current: Page, status: int = 200, refused: dict[str, Any] | None = None) -> Response:
    """The review page answered with ``status``; ``refused`` is a refused rejection: the
    ``listing_id``, the ``reason`` typed, its ``error`` and the ``error_message`` (:func:`reject`)."""
    cursor = {"cursor": current.query("cursor")} if current.query("cursor") else {}
    query = parse_model(approval_models.PendingListingQuery, {"pageSize": REVIEW_PAGE_SIZE, **cursor})
    queue = approval_service.review_queue(current.caller, query)
    fields = {r.listing.id: content.content_fields(r.listing.categoryKey, r.listing.roleKey, r.listing.meta) for r in queue.reviews}
    changes = {r.listing.id: content.changed_fields(r.listing.categoryKey, r.listing.roleKey, r.listing.meta, r.approvedMeta)
               for r in queue.reviews if r.approvedMeta is not None}
    return current.render("approvals.html", status, nav="approvals", reviews=queue.reviews, next_cursor=queue.nextCursor,
                          fields=fields, changes=changes, notice=NOTICES.get(current.query("done")), refused=refused)


def _decide(current: Page, listing_id: str, decision: str) -> None:
    reason = current.field("reason").strip() if decision == "reject" else ""
    body = parse_model(approval_models.ApprovalDecision, {"decision": decision, **({"reason": reason} if reason else {})})
    version = form_version(current)
    approval_service.decide_listing(listing_id, body, current.caller.user_id, version)


@page("/dashboard/admin/approvals/{listingId}/approve", "POST", access="admin")
def approve(current: Page, listingId: str) -> Response:
    """Approve the version the administrator read (409 if it changed or was decided meanwhile)."""
    _decide(current, listingId, "approve")
    return current.redirect("/admin/approvals?done=approved")


@page("/dashboard/admin/approvals/{listingId}/reject", "POST", access="admin")
def reject(current: Page, listingId: str) -> Response:
    """Reject with the "Reason" (it becomes the listing's statusReason). The form requires one (the
    API's default reason tells the owner nothing), so a blank one is refused like one the API refuses:
    the review page again (400) with the reason kept and its error under it; nothing is decided."""
    try:
        if not current.field("reason").strip():
            raise errors.RuleViolation.for_field("reason", "enter the reason the owner will read", "Enter a reason")
        _decide(current, listingId, "reject")
    except errors.RuleViolation as exc:
        found, _ = field_errors(exc, ["reason"])
        if "reason" not in found:
            raise
        return _approvals_page(current, page_status(exc), {"listing_id": listingId, "reason": current.field("reason"),
                                                           "error": found["reason"], "error_message": exc.message})
    return current.redirect("/admin/approvals?done=rejected")
