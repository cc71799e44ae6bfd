"""Sign-in, sign-out, the Dashboard's root and its static files."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from chalice.app import Response

from chalicelib.dashboard.web import SECURITY_HEADERS, Headers, Page, Refused, bp, cookie, page, read_cookie
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.kernel.lazy_imports import lazy_imports

with lazy_imports(__name__):  # the session store loads with the first sign-in or sign-out, not at the API's cold start
    from chalicelib.auth import keys
    from chalicelib.dashboard import sessions
    from chalicelib.rate_limits import service as rate_limits

STATIC = Path(__file__).with_name("static")
#: Files served under /dashboard/static/ and their content types (nothing else is served).
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".png": "image/png"}
SIGNIN_COOKIE = "dashboard_signin"
SESSION_COOKIE = "dashboard_session"
#: Seconds a sign-in form stays usable (its double-submit token cookie).
SIGNIN_FORM_SECONDS = 3600


@page("/dashboard", access="public")
def root(current: Page) -> Response:
    """The Dashboard's entry: the webhooks page, or the sign-in page without a session."""
    return current.redirect("/webhooks")


#: HMAC label of the sign-in form's token: the server key (``CURSOR_SECRET``) signs nothing else this way.
_SIGNIN_CONTEXT = b"dashboard sign-in form\n"


def _signature(nonce: str, issued: int) -> str:
    return hmac.new(settings().CURSOR_SECRET.encode(), _SIGNIN_CONTEXT + f"{nonce}.{issued}".encode(), hashlib.sha256).hexdigest()


def signin_token() -> str:
    """A new sign-in form token: ``<random nonce>.<issued, epoch seconds>.<HMAC-SHA256 of both>``.

    The server's key (``CURSOR_SECRET``) signs it, so a token someone planted in the cookie (a
    sibling subdomain can set cookies) is refused unless the server made it, and it ends
    :data:`SIGNIN_FORM_SECONDS` after it was issued (OWASP CSRF cheat sheet, "Signed Double-Submit
    Cookie").
    """
    nonce, issued = secrets.token_urlsafe(24), clock.epoch_seconds()
    return f"{nonce}.{issued}.{_signature(nonce, issued)}"


def signin_token_valid(cookie_token: str, form_token: str) -> bool:
    """Whether the form sent back the cookie's token and the server signed it within
    :data:`SIGNIN_FORM_SECONDS` (both compared in constant time)."""
    if not cookie_token or not hmac.compare_digest(cookie_token.encode(), form_token.encode()):
        return False
    nonce, _, rest = cookie_token.partition(".")
    issued_text, _, signature = rest.partition(".")
    if not issued_text.isdigit() or not hmac.compare_digest(signature.encode(), _signature(nonce, int(issued_text)).encode()):
        return False
    return 0 <= clock.epoch_seconds() - int(issued_text) <= SIGNIN_FORM_SECONDS


def _sign_in_form(current: Page, status: int = 200, error: str | None = None) -> Response:
    # Login CSRF: a signed double-submit token (signin_token) in a SameSite=Strict cookie and in the
    # form; SameSite keeps the cookie off cross-site posts, the signature off planted cookies.
    token = signin_token()
    headers: Headers = {"Set-Cookie": cookie(current.request, SIGNIN_COOKIE, token, SIGNIN_FORM_SECONDS)}
    return current.render("sign_in.html", status, headers, signin_token=token, error=error)


@page("/dashboard/sign-in", access="public")
def sign_in_form(current: Page) -> Response:
    """The sign-in form (an API key field and a "Sign in" button)."""
    return _sign_in_form(current)


@page("/dashboard/sign-in", "POST", access="public")
def sign_in(current: Page) -> Response:
    """Exchange an API key for a Dashboard session cookie, then go to the webhooks page."""
    source = str(((current.request.context or {}).get("identity") or {}).get("sourceIp") or "unknown")
    rate_limits.admit_sign_in(source, keys.key_prefix(current.field("api_key").strip()))  # every attempt counts
    if not signin_token_valid(read_cookie(current.request, SIGNIN_COOKIE) or "", current.field("signin_token")):
        raise Refused(403, "The sign-in form expired or was not sent from this site; reload it and try again.")
    try:
        session = sessions.sign_in(current.field("api_key"))
    except errors.Unauthorized:
        return _sign_in_form(current, 401, "That API key is not valid. Check it and try again.")
    headers: Headers = {
        "Set-Cookie": [
            cookie(current.request, SESSION_COOKIE, session.session_id, sessions.SESSION_SECONDS),
            cookie(current.request, SIGNIN_COOKIE, "", 0),
        ]
    }
    return current.redirect("/webhooks", headers)


@page("/dashboard/sign-out", "POST")
def sign_out(current: Page) -> Response:
    """End the session (its item is deleted) and clear the cookie."""
    assert current.session is not None
    sessions.sign_out(current.session)
    return current.redirect("/sign-in", {"Set-Cookie": cookie(current.request, SESSION_COOKIE, "", 0)})


@bp.route("/dashboard/static/{name}", methods=["GET"])
def static(name: str) -> Response:
    """A file of ``static/`` (the stylesheet, the vendored htmx and its licence)."""
    path = STATIC / name
    kind = STATIC_TYPES.get(path.suffix) if "/" not in name and not name.startswith(".") else None
    if kind is None and name.endswith(".txt") and "/" not in name:
        kind = "text/plain; charset=utf-8"
    if kind is None or not path.is_file():
        return Response(body='{"code":"NOT_FOUND","error":"No such file"}', status_code=404, headers={"Content-Type": "application/json"})
    headers: Headers = {"Content-Type": kind, **SECURITY_HEADERS, "Cache-Control": "public, max-age=3600"}
    return Response(body=path.read_text(encoding="utf-8"), status_code=200, headers=headers)
