"""Serve the Chalice app object over HTTP, as ``chalice local`` does, with the API's error bodies.

``chalice local`` answers a path that matches no route with API Gateway's 403 "Missing
Authentication Token"; here that becomes 404 NOT_FOUND in the spec's error body (production
does the same with a gateway response in the template). Requests are served on threads with
a thread-local ``current_request`` (``chalice.local.LocalChalice``).
"""

from __future__ import annotations

import json
from typing import Any

from chalice import Chalice
from chalice.config import Config
from chalice.local import ChaliceRequestHandler, CustomLocalChalice, LocalChalice, LocalDevServer, LocalGatewayException

from chalicelib.http import MAX_BODY_BYTES

#: Bodies above API Gateway's own 10 MB limit are refused before they are read.
GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024


def _error(status: int, code: str, message: str) -> bytes:
    return json.dumps({"code": code, "error": message}).encode()


class ApiRequestHandler(ChaliceRequestHandler):
    """``ChaliceRequestHandler`` whose gateway-level errors use the spec's error body."""

    def _generic_handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > GATEWAY_MAX_BODY_BYTES:
            self.close_connection = True
            body = _error(413, "PAYLOAD_TOO_LARGE", f"Request body exceeds {MAX_BODY_BYTES} bytes")
            self._send_http_response(413, {"Content-Type": "application/json"}, body)
            return
        super()._generic_handle()

    def __getattr__(self, name: str) -> Any:
        # Any other method (TRACE, QUERY, ...) goes to the app too, which answers 405
        # METHOD_NOT_ALLOWED in the error body, as for a known method on the wrong path
        # (BaseHTTPRequestHandler alone would answer 501 with an HTML page).
        if name.startswith("do_"):
            return self._generic_handle
        raise AttributeError(name)

    def _send_error_response(self, error: LocalGatewayException) -> None:
        # The only gateway error without an authorizer is "no such route".
        body = _error(404, "NOT_FOUND", f"No route matches {self.command} {self.path.split('?')[0]}")
        self._send_http_response(404, {"Content-Type": "application/json"}, body)

    def log_message(self, format: str, *args: Any) -> None:
        """Access log on stderr in a compact form."""
        super().log_message(format, *args)


def make_server(app: Chalice, host: str, port: int) -> LocalDevServer:
    """A threaded HTTP server for ``app`` on ``host:port`` (``port`` 0 picks a free one)."""
    if not isinstance(app, LocalChalice):
        CustomLocalChalice.__bases__ = (LocalChalice, app.__class__)
        app.__class__ = CustomLocalChalice
    config = Config.create(chalice_stage="local", app_name=app.app_name)
    return LocalDevServer(app, config, host, port, handler_cls=ApiRequestHandler)
