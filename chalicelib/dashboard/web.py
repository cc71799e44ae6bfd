"""The Dashboard's HTTP edge: sessions from cookies, CSRF checks, form parsing, rendering and
the security headers every page carries.

Rules enforced here for every Dashboard route (registered through :func:`page`):

* a state-changing request (POST) must come with a Dashboard session cookie and that session's
  CSRF token in the form; a request carrying an ``Authorization`` header is refused outright, so
  an API key can never drive a Dashboard action (spec §4 note 1: these are not API operations);
* pages need a session (else a redirect to the sign-in page), admin pages an admin session (else
  the 403 page);
* answers are HTML from Jinja2 templates with autoescaping on, ``Cache-Control: no-store`` and a
  ``Content-Security-Policy`` that allows scripts and styles from the app only (no inline
  script), ``frame-ancestors 'none'``.
"""

from __future__ import annotations

import functools
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from aws_lambda_powertools import Logger
from chalice.app import Blueprint, Request, Response
from pydantic import Field

from chalicelib.auth.service import Caller
from chalicelib.edge.http import check_path_ids, error_body, error_headers, error_status, parse_model
from chalicelib.kernel import errors
from chalicelib.kernel.lazy_imports import lazy_imports
from chalicelib.kernel.model_base import Model

if TYPE_CHECKING:
    from jinja2 import Environment

with lazy_imports(__name__):  # the session store loads with the first Dashboard request, not at the API's cold start
    from chalicelib.dashboard import sessions
    from chalicelib.kernel import cursors
    from chalicelib.rate_limits import service as rate_limits

logger = Logger(service="matching-service", child=True)

TEMPLATES = Path(__file__).with_name("templates")
FORM = "application/x-www-form-urlencoded"
#: Largest accepted form body (the API's own JSON limit).
MAX_FORM_BYTES = 256 * 1024

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

Access = Literal["public", "session", "admin"]
Headers = dict[str, str | list[str]]


@functools.cache
def _templates() -> Environment:
    """The Jinja2 environment, built on the first page rendered (Jinja2 stays out of the API's cold start)."""
    from jinja2 import Environment, FileSystemLoader

    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True, lstrip_blocks=True)

bp = Blueprint(__name__)


class Refused(Exception):
    """A request the Dashboard turns away with an HTML error page.

    Parameters
    ----------
    status:
        The HTTP status (401, 403, ...).
    message:
        The sentence shown on the page.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def is_https(request: Request) -> bool:
    """True when the browser reached us over https (API Gateway sets ``X-Forwarded-Proto``)."""
    return (request.headers.get("x-forwarded-proto") or "").lower() == "https"


def cookie_name(request: Request, base: str) -> str:
    """``__Host-<base>`` over https (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain), ``<base>`` on http."""
    return f"__Host-{base}" if is_https(request) else base


def cookie(request: Request, base: str, value: str, max_age: int) -> str:
    """A ``Set-Cookie`` value: HttpOnly, SameSite=Strict, Path=/, and Secure over https."""
    parts = [f"{cookie_name(request, base)}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Strict"]
    if is_https(request):
        parts.append("Secure")
    return "; ".join(parts)


def read_cookie(request: Request, base: str) -> str | None:
    """The value of cookie ``base`` (under the name :func:`cookie_name` gives), or ``None``."""
    wanted = cookie_name(request, base)
    for part in (request.headers.get("cookie") or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == wanted and value:
            return value
    return None


def is_htmx(request: Request) -> bool:
    """True for a request htmx sent (``HX-Request: true``): it wants a fragment, not a whole page."""
    return request.headers.get("hx-request") == "true"


def base_path(request: Request) -> str:
    """The path prefix of the deployment: ``/<stage>`` on an ``execute-api`` host, else ``""``."""
    host = (request.headers.get("host") or "").lower()
    stage = str((request.context or {}).get("stage") or "")
    return f"/{stage}" if host.endswith(".amazonaws.com") and stage else ""


@dataclass
class Page:
    """The request as a Dashboard view sees it.

    Attributes
    ----------
    request:
        The Chalice request.
    session:
        The signed-in session (``None`` only on public pages).
    """

    request: Request
    session: sessions.Session | None = None
    _form: dict[str, list[str]] | None = field(default=None, repr=False)

    @property
    def caller(self) -> Caller:
        """The signed-in :class:`~chalicelib.auth.service.Caller`.

        Raises
        ------
        Refused
            401 on a page without a session (never reached: :func:`page` checks first).
        """
        if self.session is None:
            raise Refused(401, "Sign in first")
        return self.session.caller

    @property
    def root(self) -> str:
        """URL path of the Dashboard (``/dashboard``, behind the stage prefix when there is one)."""
        return base_path(self.request) + "/dashboard"

    def form(self) -> dict[str, list[str]]:
        """The urlencoded form body (values per name, blanks kept).

        Raises
        ------
        TooLarge
            Over :data:`MAX_FORM_BYTES`.
        """
        if self._form is None:
            raw = self.request.raw_body or b""
            if len(raw) > MAX_FORM_BYTES:
                raise errors.TooLarge(f"Form exceeds {MAX_FORM_BYTES} bytes")
            text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
            self._form = urllib.parse.parse_qs(text, keep_blank_values=True)
        return self._form

    def field(self, name: str, default: str = "") -> str:
        """One form value (the first), or ``default``."""
        values = self.form().get(name)
        return values[0] if values else default

    def query(self, name: str, default: str = "") -> str:
        """One query-string value, or ``default``."""
        params: dict[str, str] = dict(self.request.query_params or {})
        return params.get(name) or default

    def put_flash(self, kind: str, data: dict[str, Any]) -> None:
        """Leave ``data`` for the page this POST redirects to (shown once; see :func:`sessions.put_flash`)."""
        if self.session is not None:
            sessions.put_flash(self.session, kind, data)

    def take_flash(self, kind: str) -> dict[str, Any] | None:
        """The flash of ``kind`` a POST left for this page, removed as it is read (``None``: none)."""
        return sessions.take_flash(self.session, kind) if self.session is not None else None

    def render(self, template: str, status: int = 200, headers: Headers | None = None, **context: Any) -> Response:
        """Render ``template`` with the layout's context (session, CSRF token, admin flag, root)."""
        body = _templates().get_template(template).render(
            root=self.root,
            session=self.session,
            csrf=self.session.csrf_token if self.session else "",
            is_admin=bool(self.session and self.session.caller.is_admin),
            **context,
        )
        return html(body, status, headers)

    def redirect(self, path: str, headers: Headers | None = None) -> Response:
        """303 See Other to ``root + path`` (POST/redirect/GET)."""
        merged: Headers = {"Location": self.root + path, **SECURITY_HEADERS, **(headers or {})}
        return Response(body="", status_code=303, headers=merged)


def html(body: str, status: int = 200, headers: Headers | None = None) -> Response:
    """An HTML response with the security headers."""
    merged: Headers = {"Content-Type": "text/html; charset=utf-8", **SECURITY_HEADERS, **(headers or {})}
    return Response(body=body, status_code=status, headers=merged)


def _session_of(request: Request) -> sessions.Session | None:
    return sessions.resolve(read_cookie(request, "dashboard_session"))


def page(path: str, method: str = "GET", access: Access = "session") -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    """Register a Dashboard view on the blueprint.

    The view is called as ``view(page: Page, **path_params)`` and returns a Response. Errors
    become HTML pages: :class:`Refused` and :class:`~chalicelib.kernel.errors.DomainError` with their
    status and message (the details listed), anything else a 500 page without internals.

    Parameters
    ----------
    path:
        Route path under ``/dashboard``.
    method:
        ``GET`` or ``POST`` (POST takes an urlencoded form and is CSRF-checked).
    access:
        ``public`` (sign-in page), ``session`` (any signed-in user) or ``admin``.
    """

    def register(view: Callable[..., Response]) -> Callable[..., Response]:
        @functools.wraps(view)
        def handler(**params: Any) -> Response:
            request = bp.current_request
            assert request is not None
            current = Page(request)
            try:
                check_path_ids(params)  # the API's rule: a malformed id is 404 before any read
                if method == "POST" and request.headers.get("authorization"):
                    raise Refused(403, "Dashboard actions accept only a Dashboard session, never an API key (Authorization header).")
                if access != "public":
                    current.session = _session_of(request)
                    if current.session is None:
                        if method == "GET" and not is_htmx(request):
                            return current.redirect("/sign-in")
                        raise Refused(401, "Your Dashboard session has ended; sign in again.")
                    # the API's limiter: a session counts as its user (one bucket with all the user's keys)
                    rate_limits.admit(current.session.caller.user_id, current.session.caller.is_admin)
                    if access == "admin" and not current.session.caller.is_admin:
                        raise Refused(403, "This page is for administrators only.")
                    if method == "POST" and not sessions.csrf_valid(current.session, current.field("csrf_token") or None):
                        raise Refused(403, "The form's CSRF token is missing or invalid; reload the page and try again.")
                with cursors.held_by(current.session.caller.user_id if current.session else ""):
                    return view(current, **params)
            except Refused as exc:
                return _error_page(current, exc.status, exc.message, signed_out=exc.status == 401)
            except errors.DomainError as exc:
                body = error_body(exc)
                # the API's statuses and headers (chalicelib.edge.http.ERROR_STATUSES): Retry-After of a 503 (and of a 409 still running)
                return _error_page(current, page_status(exc), body["error"], body.get("details") or [], headers=error_headers(exc))
            except Exception:
                logger.exception("dashboard error", extra={"path": path, "method": method})
                return _error_page(current, 500, "An internal error occurred.")

        content_types = [FORM] if method == "POST" else None
        if content_types:
            bp.route(path, methods=[method], content_types=content_types)(handler)
        else:
            bp.route(path, methods=[method])(handler)
        return view

    return register


def _error_page(current: Page, status: int, message: str, details: list[Any] | None = None, signed_out: bool = False,
                headers: dict[str, str] | None = None) -> Response:
    """The error as a whole page, or, for htmx, as a fragment that replaces the control that asked
    (base.html tells htmx to swap 4xx/5xx answers), so a failed "Load more" says why in place.

    ``signed_out``: no session; htmx is sent to the sign-in page whole (``HX-Redirect``) rather
    than swapping anything into the page.
    """
    htmx = is_htmx(current.request)
    sent: Headers = {**(headers or {}), "Vary": "HX-Request"}
    if htmx and signed_out:
        sent["HX-Redirect"] = current.root + "/sign-in"
    title = _TITLES.get(status, "Something went wrong")
    return current.render("error_fragment.html" if htmx else "error.html", status, sent, title=title, message=message,
                          details=details or [])


#: The Dashboard's paths (every answer under it carries :data:`SECURITY_HEADERS`).
PREFIX = "/dashboard"


def security_headers_middleware(event: Request, get_response: Callable[[Request], Response]) -> Response:
    """HTTP middleware: :data:`SECURITY_HEADERS` on every answer under ``/dashboard``, whatever its
    status, including those Chalice gives before a view runs (405, 415) and the API's error bodies;
    a header a page set itself is kept."""
    response = get_response(event)
    if str((event.context or {}).get("resourcePath") or "").startswith(PREFIX):
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
    return response


#: The message of the Dashboard's 404 page for a path no page answers.
NOT_FOUND_MESSAGE = "There is no Dashboard page at this address."


def not_found_html(root: str = PREFIX) -> str:
    """The Dashboard's 404 page (HTML, no session: it links to sign-in) for a path no route matches.

    The app answers it for an unknown one-segment path (``/dashboard/<x>``); the local stack's
    server, which matches routes before the app runs, answers it for any other unknown GET under
    ``/dashboard`` (``local_stack/server.py``).
    """
    return _templates().get_template("error.html").render(
        root=root, session=None, csrf="", is_admin=False, title=_TITLES[404], message=NOT_FOUND_MESSAGE, details=[]
    )


_TITLES = {400: "Check the form", 401: "Sign in", 403: "Forbidden", 404: "Not found", 409: "Conflict", 413: "Too large",
           429: "Too many requests", 503: "Unavailable"}


def page_status(exc: errors.DomainError) -> int:
    """The status of the Dashboard page answering ``exc``: the API's for the same error
    (:data:`chalicelib.edge.http.ERROR_STATUSES`, the one table), so a page and the API never disagree."""
    return error_status(exc)[0]


class FormVersion(Model):
    """A form's hidden ``version`` field: the version of the record the form was filled from."""

    version: int = Field(ge=1)


def form_version(current: Page) -> int:
    """The posted ``version`` field (:class:`FormVersion`), so a change applies to the version read.

    Raises
    ------
    RuleViolation
        Missing or not a whole number of 1 or more (``details`` name ``version``).
    """
    return parse_model(FormVersion, {"version": current.field("version")}).version


def field_errors(exc: errors.DomainError, order: list[str]) -> tuple[dict[str, str], str | None]:
    """The ``details`` of a refused form as ``{field: issue}`` (top-level field names, issues of one
    field joined) and the first invalid field in ``order`` (the form's order), which the page focuses.

    A detail naming no field of ``order`` is kept under its own name (shown in the summary).
    """
    found: dict[str, str] = {}
    for detail in exc.details or []:
        name = detail.field.split(".")[0].split("[")[0]
        issue = detail.issue
        found[name] = f"{found[name]}; {issue}" if name in found else issue
    first = next((name for name in order if name in found), None)
    return found, first
