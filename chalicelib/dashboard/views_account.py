"""The Account page: the signed-in user's account erasure (``DELETE /v1/me``), confirmed by
typing the display name, as GitHub confirms a repository's deletion by its name."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.dashboard.views_auth import SESSION_COOKIE
from chalicelib.dashboard.web import Page, cookie, page
from chalicelib.kernel.lazy_imports import lazy_imports

# The domains' modules load with the first page that uses them, not at the API's cold start.
with lazy_imports(__name__):
    from chalicelib.dashboard import sessions
    from chalicelib.privacy import erasure
    from chalicelib.users import service as users


@page("/dashboard/account")
def account_page(current: Page) -> Response:
    """What erasing the account removes and keeps, and the form that confirms it by the display name."""
    me = users.require_user(current.caller.user_id)
    return current.render("account.html", nav="account", display_name=me["displayName"], error=None, typed="")


@page("/dashboard/account/erase", "POST")
def erase_account(current: Page) -> Response:
    """Erase the signed-in user's account once the typed name matches their display name exactly;
    the session ends with the keys, and the browser lands on a page that says so."""
    me = users.require_user(current.caller.user_id)
    typed = current.field("confirm_name")
    if typed != me["displayName"]:
        return current.render("account.html", status=400, nav="account", display_name=me["displayName"], typed=typed,
                              error="The name you typed is not your display name; nothing was erased.")
    erasure.request_erasure(current.caller)
    assert current.session is not None
    sessions.sign_out(current.session)
    return current.redirect("/account/erased", {"Set-Cookie": cookie(current.request, SESSION_COOKIE, "", 0)})


@page("/dashboard/account/erased", access="public")
def erased_page(current: Page) -> Response:
    """After the erasure started: what happens next (no session any more)."""
    return current.render("account_erased.html")
