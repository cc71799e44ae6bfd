"""Serve the Chalice app object over HTTP, as ``chalice local`` does, with the API's error bodies.

``chalice local`` answers a path that matches no route with API Gateway's 403 "Missing
Authentication Token"; here that becomes 404 NOT_FOUND in the spec's error body (production
does the same with a gateway response in the template). Requests are served on threads with
a thread-local ``current_request`` (``chalice.local.LocalChalice``).

As API Gateway does in production (``infra/cfn_cors.py``), this server answers CORS preflights
(``OPTIONS``) of the API's paths itself, with the rules of :mod:`chalicelib.edge.cors`; ``OPTIONS`` on
a Dashboard path is 404 as in production (no preflight route, no CORS: the Dashboard is
same-origin only), with the Dashboard's security headers like every answer under ``/dashboard``. The access log is the app's one
JSON line per request (:mod:`chalicelib.edge.request_context`), not ``http.server``'s.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from http.server import HTTPServer
from socketserver import ThreadingMixIn
from typing import Any, BinaryIO

from chalice import Chalice
from chalice.config import Config
from chalice.local import (
    ChaliceRequestHandler,
    CustomLocalChalice,
    LocalChalice,
    LocalDevServer,
    LocalGatewayException,
    RouteMatcher,
)

from chalicelib.dashboard.web import PREFIX as DASHBOARD_PREFIX
from chalicelib.dashboard.web import SECURITY_HEADERS, not_found_html
from chalicelib.edge import cors
from chalicelib.edge.http import MAX_BODY_BYTES, allowed_methods
from chalicelib.edge.request_context import REQUEST_ID_HEADER, choose_request_id

#: Bodies above API Gateway's own 10 MB limit are refused before they are read.
GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024


#: A chunk-size line (RFC 9112 §7.1): hex digits, then optional chunk extensions (ignored).
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,8})[ \t]*(?:;[^\r\n]*)?\r?\n")
#: Trailer field lines read (and ignored) after the last chunk, at most.
_MAX_TRAILER_LINES = 100


def path_params_kept(path: str) -> str:
    """``path`` (a request target) with each ``;`` of its path percent-encoded (``%3B``).

    Chalice's route matcher reads the path through ``urlparse``, which cuts a last segment's
    ``;params`` off (``/v1/listings/lst_1;x`` matched ``lst_1``). API Gateway keeps them in the
    path, so the path id check answers 404; encoded, the ``;`` stays in the segment here too.
    """
    route, separator, query = path.partition("?")
    return route.replace(";", "%3B") + separator + query


class ThreadedServer(ThreadingMixIn, HTTPServer):
    """The API's HTTP server: a thread per connection (keep-alive clients hold theirs), and a
    listen backlog of :attr:`request_queue_size` connections (socketserver's default, 5, reset
    connections beyond it when a client opens two dozen at once)."""

    daemon_threads = True
    request_queue_size = 128


class MalformedChunks(ValueError):
    """A chunked request body that breaks RFC 9112 §7.1 (or ends early)."""


def read_chunked(stream: BinaryIO, limit: int) -> bytes | None:
    """The body of a request sent with ``Transfer-Encoding: chunked`` (RFC 9112 §7.1), read from
    ``stream`` up to the end of its trailer section.

    Parameters
    ----------
    stream:
        The connection's input, positioned at the first chunk-size line.
    limit:
        Largest body accepted, in bytes.

    Returns
    -------
    bytes or None
        The body; ``None`` when it exceeds ``limit`` (the rest is left unread).

    Raises
    ------
    MalformedChunks
        A chunk-size line or a chunk's end is malformed, or the stream ended early.
    """
    body = bytearray()
    while True:
        size_line = _CHUNK_SIZE.fullmatch(stream.readline(1024))
        if size_line is None:
            raise MalformedChunks("malformed chunk-size line")
        size = int(size_line.group(1), 16)
        if size == 0:
            break
        if len(body) + size > limit:
            return None
        chunk = stream.read(size)
        if len(chunk) < size or stream.readline(3) not in (b"\r\n", b"\n"):
            raise MalformedChunks("a chunk ends early or without its line break")
        body += chunk
    for _ in range(_MAX_TRAILER_LINES):
        if stream.readline(8192) in (b"\r\n", b"\n", b""):
            return bytes(body)
    raise MalformedChunks("too many trailer lines")


class ApiRequestHandler(ChaliceRequestHandler):
    """``ChaliceRequestHandler`` whose gateway-level answers use the spec's error body, carry a
    request id and CORS headers, and which answers CORS preflights."""

    #: TCP_NODELAY on each connection (``socketserver.StreamRequestHandler``). ``http.server``
    #: writes an answer's headers and its body in two sends; with Nagle's algorithm on, the body
    #: waits for the ACK of the headers, which a keep-alive client delays (delayed ACK, 40 ms on
    #: Linux): every answer on a reused connection took >= 40 ms instead of about 1 ms.
    disable_nagle_algorithm = True

    #: The app's route templates (set by :func:`make_server`), to find a preflight's route.
    route_matcher = RouteMatcher([])

    def _gateway_headers(self) -> dict[str, Any]:
        """``X-Request-Id`` and CORS headers of an answer the gateway gives without the app."""
        request_id = choose_request_id(self.headers.get(REQUEST_ID_HEADER), None)
        if self.path.startswith(DASHBOARD_PREFIX):  # same-origin only: no CORS
            return {REQUEST_ID_HEADER: request_id}
        return {REQUEST_ID_HEADER: request_id, **cors.response_headers(self.headers.get("Origin"))}

    def _send_error(self, status: int, code: str, message: str, details: list[dict[str, str]] | None = None) -> None:
        headers = self._gateway_headers()
        if self.path.startswith(DASHBOARD_PREFIX):  # as the template's gateway responses: security headers
            headers.update(SECURITY_HEADERS)
        error: dict[str, Any] = {"code": code, "error": message, "requestId": headers[REQUEST_ID_HEADER]}
        if details is not None:
            error["details"] = details
        body = json.dumps(error).encode()
        self._send_http_response(status, {"Content-Type": "application/json", **headers}, body)

    #: Called after each request of the app that may have written (set by :func:`make_server`):
    #: the local stack wakes its event runner's stream threads with it.
    after_request: Callable[[], None] | None = None
    #: The status of the answer being sent (``None`` until one is).
    status: int | None = None

    def send_response(self, code: int, message: str | None = None) -> None:
        self.status = code
        super().send_response(code, message)

    def _may_have_written(self) -> bool:
        """False for a read (GET, HEAD) and for a refused request (4xx: a request that fails
        changes nothing, docs/guide.md); True otherwise, including when no answer was sent."""
        if self.command in ("GET", "HEAD"):
            return False
        return self.status is None or not 400 <= self.status < 500

    def _generic_handle(self) -> None:
        self.path = path_params_kept(self.path)
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            self._handle_with_length()
            return
        # Chalice's local server reads Content-Length bytes only: a chunked body (RFC 9112 §7.1,
        # which API Gateway takes) is read here and handed on with its length.
        try:
            body = read_chunked(self.rfile, GATEWAY_MAX_BODY_BYTES)
        except MalformedChunks as exc:
            self.close_connection = True
            self._send_error(400, "VALIDATION_ERROR", "Request body is not valid chunked transfer coding",
                             [{"field": "body", "issue": str(exc)}])
            return
        if body is None:
            self.close_connection = True
            self._send_error(413, "PAYLOAD_TOO_LARGE", f"Request body exceeds {MAX_BODY_BYTES} bytes")
            return
        del self.headers["Transfer-Encoding"]
        del self.headers["Content-Length"]  # RFC 9112 §6.3: chunked framing overrides a length
        self.headers["Content-Length"] = str(len(body))
        connection, self.rfile = self.rfile, io.BytesIO(body)
        try:
            self._handle_with_length()
        finally:
            self.rfile = connection

    # Chalice binds its own ``_generic_handle`` to these names; they must reach the one above.
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = _generic_handle

    def _declared_length(self) -> int | None:
        """The body's length from ``Content-Length`` (0 without one), its repeated identical
        values folded into one line; ``None`` when it is not one decimal number (RFC 9112 §6.3:
        a request with an invalid length is answered 400)."""
        values = {v.strip() for line in self.headers.get_all("Content-Length") or [] for v in line.split(",")}
        if not values:
            return 0
        value = values.pop()
        if values or not value or not all(c in "0123456789" for c in value):
            return None
        del self.headers["Content-Length"]
        self.headers["Content-Length"] = value
        return int(value)

    def _handle_with_length(self) -> None:
        length = self._declared_length()
        if length is None:
            self.close_connection = True
            self._send_error(400, "VALIDATION_ERROR", "Invalid Content-Length",
                             [{"field": "Content-Length", "issue": "must be one decimal number of bytes"}])
            return
        if length > GATEWAY_MAX_BODY_BYTES:
            self.close_connection = True
            self._send_error(413, "PAYLOAD_TOO_LARGE", f"Request body exceeds {MAX_BODY_BYTES} bytes")
            return
        self.status = None
        self._join_repeated_fields()
        try:
            super()._generic_handle()
        finally:
            if self.after_request is not None and self._may_have_written():
                self.after_request()

    def _join_repeated_fields(self) -> None:
        """Join the lines of a repeated header field into one (RFC 9110 §5.3: their values in order,
        comma-separated; ``Cookie`` by ``"; "``, RFC 6265 §5.4): Chalice's local server would keep
        the first line only, where API Gateway hands the app every line (``multiValueHeaders``),
        which the app joins the same way (:func:`chalicelib.edge.fields.header_value`)."""
        for name in {key.lower() for key in self.headers}:
            lines = self.headers.get_all(name) or []
            if len(lines) > 1:
                del self.headers[name]
                self.headers[name] = ("; " if name == "cookie" else ", ").join(lines)

    def do_OPTIONS(self) -> None:
        """CORS preflight (the base class would hand ``OPTIONS`` to Chalice's own CORS emulation)."""
        self._preflight()

    def _preflight(self) -> None:
        """Answer ``OPTIONS`` as the production API's mock integration does: 204 with CORS headers."""
        self._parse_payload()  # read (and ignore) any body, so a kept-alive connection stays in step
        self.path = path_params_kept(self.path)
        try:
            route = self.route_matcher.match_route(self.path).route
        except ValueError:
            route = ""
        if not route.startswith(cors.API_PREFIX):  # the Dashboard is same-origin only: no preflight, no CORS
            self._send_error(404, "NOT_FOUND", f"No route matches {self.command} {self.path.split('?')[0]}")
            return
        headers = {
            REQUEST_ID_HEADER: choose_request_id(self.headers.get(REQUEST_ID_HEADER), None),
            **cors.preflight_headers(self.headers.get("Origin"), allowed_methods(route)),
        }
        self._send_http_response(204, headers, None)

    def __getattr__(self, name: str) -> Any:
        # Any other method (TRACE, QUERY, ...) goes to the app too, which answers 405
        # METHOD_NOT_ALLOWED in the error body, as for a known method on the wrong path
        # (BaseHTTPRequestHandler alone would answer 501 with an HTML page).
        if name.startswith("do_"):
            return self._generic_handle
        raise AttributeError(name)

    def _send_error_response(self, error: LocalGatewayException) -> None:
        # The only gateway error without an authorizer is "no such route".
        if self.command == "GET" and self.path.startswith(DASHBOARD_PREFIX + "/"):  # a person's browser: the HTML page
            headers = {"Content-Type": "text/html; charset=utf-8", **self._gateway_headers(), **SECURITY_HEADERS}
            self._send_http_response(404, headers, not_found_html().encode())
            return
        self._send_error(404, "NOT_FOUND", f"No route matches {self.command} {self.path.split('?')[0]}")

    def log_message(self, format: str, *args: Any) -> None:
        """No ``http.server`` access line: the app logs one JSON line per request (with its request id)."""


def make_server(app: Chalice, host: str, port: int, after_request: Callable[[], None] | None = None) -> LocalDevServer:
    """A threaded HTTP server for ``app`` on ``host:port`` (``port`` 0 picks a free one).

    ``after_request`` (no arguments) is called after each request the app handled that may have
    written: every one but reads (GET, HEAD) and refusals (4xx), answered or failed (the local
    stack passes :meth:`local_stack.runner.EventRunner.notify`).
    """
    if not isinstance(app, LocalChalice):
        CustomLocalChalice.__bases__ = (LocalChalice, app.__class__)
        app.__class__ = CustomLocalChalice
    config = Config.create(chalice_stage="local", app_name=app.app_name)
    members = {"route_matcher": RouteMatcher(list(app.routes)),
               "after_request": staticmethod(after_request) if after_request is not None else None}
    handler = type("AppRequestHandler", (ApiRequestHandler,), members)
    return LocalDevServer(app, config, host, port, handler_cls=handler, server_cls=ThreadedServer)
