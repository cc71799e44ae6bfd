"""The user's own API keys (link "API keys"): list, create, revoke (after a confirmation page) and
roll, over :mod:`chalicelib.auth.own_keys`. Every POST answers 303; a new key's secret reaches
the next page through the session's sealed one-time flash (:func:`chalicelib.dashboard.sessions.put_flash`)."""

from __future__ import annotations

from typing import Any

from chalice.app import Response

from chalicelib.dashboard.web import Page, field_errors, page, page_status
from chalicelib.kernel import errors
from chalicelib.kernel.lazy_imports import lazy_imports

with lazy_imports(__name__):  # loaded with the first keys page, not at the API's cold start
    from chalicelib.auth import keys, own_keys
    from chalicelib.dashboard import sessions

FLASH_KIND = "api-key"
NOTICES = {"revoked": "API key revoked: requests with it are refused from now on."}
#: The roll page's choices for the old key's expiry, in the order shown.
EXPIRY_LABELS = {"now": "Now", "1h": "In 1 hour", "24h": "In 24 hours", "7d": "In 7 days"}


def _session(current: Page) -> sessions.Session:
    assert current.session is not None  # every view here needs a session (page() checks)
    return current.session


@page("/dashboard/api-keys")
def keys_page(current: Page) -> Response:
    """The user's keys (name, prefix, created, last used, expiry), "Create API key", and a new key's
    secret when the previous POST made one (shown this once)."""
    return _keys_page(current, current.take_flash(FLASH_KIND))


def _keys_page(current: Page, created: Any, status: int = 200, **form: Any) -> Response:
    """The keys page answered with ``status``; ``form`` is a refused creation's ``name``, ``errors``,
    ``first_invalid`` and ``error_message`` (:func:`create`)."""
    listed = own_keys.list_keys(current.caller, _session(current).key_hash)
    return current.render("api_keys.html", status, nav="api-keys", keys=listed, created=created,
                          notice=NOTICES.get(current.query("done")), **form)


@page("/dashboard/api-keys", "POST")
def create(current: Page) -> Response:
    """Create a key named by the "Name" field, then show its secret once on the keys page. A refused
    name, or a creation past the cap, shows the keys page again (400) with the name kept and its error."""
    name = current.field("name")
    try:
        made = own_keys.create_key(current.caller, name)
    except errors.RuleViolation as exc:
        found, first = field_errors(exc, ["name"])
        return _keys_page(current, None, page_status(exc), name=name, errors=found, first_invalid=first,
                          error_message=exc.message)
    current.put_flash(FLASH_KIND, {"secret": made.secret, "name": made.key.name, "action": "created"})
    return current.redirect("/api-keys")


def _key(current: Page, key_id: str) -> own_keys.OwnKey:
    for key in own_keys.list_keys(current.caller, _session(current).key_hash):
        if key.key_id == key_id:
            return key
    raise errors.NotFound(f"API key '{key_id}' not found")


@page("/dashboard/api-keys/{keyId}/revoke")
def confirm_revoke(current: Page, keyId: str) -> Response:
    """The confirmation page of a revoke: what stops working, and the "Revoke" button (it says so when
    the key is the one this session was opened with: revoking it signs this browser out)."""
    return current.render("api_key_revoke.html", nav="api-keys", key=_key(current, keyId))


@page("/dashboard/api-keys/{keyId}/revoke", "POST")
def revoke(current: Page, keyId: str) -> Response:
    """Revoke the key: the next request with it is refused (401)."""
    own_keys.revoke_key(current.caller, keyId)
    return current.redirect("/api-keys?done=revoked")


@page("/dashboard/api-keys/{keyId}/roll")
def confirm_roll(current: Page, keyId: str) -> Response:
    """The roll page: when the old key stops working (now, 1 h, 24 h, 7 days) and the "Roll key" button."""
    return current.render("api_key_roll.html", nav="api-keys", key=_key(current, keyId), expiries=EXPIRY_LABELS)


@page("/dashboard/api-keys/{keyId}/roll", "POST")
def roll(current: Page, keyId: str) -> Response:
    """Roll the key; the new secret is shown once on the keys page."""
    made = own_keys.roll_key(current.caller, keyId, current.field("expires"))
    sessions.follow_roll(_session(current), made.replaced_hash, keys.hash_key(made.secret))
    current.put_flash(FLASH_KIND, {"secret": made.secret, "name": made.key.name, "action": "rolled",
                                              "expires": EXPIRY_LABELS[current.field("expires")].lower()})
    return current.redirect("/api-keys")
