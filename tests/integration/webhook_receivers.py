"""Tiny real HTTP receivers on 127.0.0.1 (``http.server`` on threads) for webhook delivery tests.

Behaviours: ``ok`` (answers ``status``, default 200), ``hang`` (reads the request, never
answers), ``hold`` (holds the requests that arrive before the test calls ``release()`` open
without answering, then drops them; later requests hang), ``drip`` (sends headers, then the body one byte every ``drip_interval`` seconds),
``drip_headers`` (sends the status line and headers one byte at a time), ``redirect`` (302
to ``/elsewhere``). Every received request is recorded with its headers and exact body bytes.
"""

from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.sockets import hold_while_connected, peer_closed


class _QuietServer(ThreadingHTTPServer):
    """Drops the traceback socketserver prints for connections a test breaks on purpose."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@dataclass
class Received:
    """One request as the receiver saw it."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    """A running receiver; ``url`` is where to point a webhook."""

    behaviour: str = "ok"
    status: int = 200
    response_body: bytes = b'{"ok":true}'
    drip_interval: float = 0.1
    host: str = "127.0.0.1"
    tls: ssl.SSLContext | None = None
    requests: list[Received] = field(default_factory=list)
    #: The most requests the sender had open at once (1: the attempts came one at a time). Read
    #: from the connections' state when each request arrives (:func:`tests.sockets.peer_closed`).
    max_in_flight: int = 0

    def __post_init__(self) -> None:
        self._open: list[Any] = []
        self._stop = threading.Event()
        self._released = threading.Event()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.requests.append(Received(self.path, dict(self.headers.items()), body, time.monotonic()))
                    still_open = [c for c in receiver._open if not peer_closed(c)]
                    receiver.max_in_flight = max(receiver.max_in_flight, len(still_open) + 1)
                    receiver._open.append(self.connection)
                try:
                    receiver._respond(self)
                finally:
                    with receiver._lock:
                        receiver._open.remove(self.connection)

        self._server = _QuietServer((self.host, 0), Handler)
        self._server.daemon_threads = True
        if self.tls is not None:
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.host}:{self.port}/hook"

    def release(self) -> None:
        """``hold``: drop the held requests' connections without an answer (later requests hang)."""
        self._released.set()

    def _respond(self, handler: BaseHTTPRequestHandler) -> None:
        try:
            if self.behaviour == "hold" and not self._released.is_set():
                self._released.wait(60)
                handler.close_connection = True
                return
            if self.behaviour in ("hang", "hold"):  # until the sender gives up (its deadline)
                hold_while_connected(handler.connection, 60, self._stop)
                return
            if self.behaviour == "redirect":
                handler.send_response(302)
                handler.send_header("Location", "/elsewhere")
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            if self.behaviour == "drip_headers":
                head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Slow: " + b"x" * 200 + b"\r\n\r\nok"
                for byte in head:
                    if self._stop.wait(self.drip_interval):
                        return
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                return
            handler.send_response(self.status)
            handler.send_header("Content-Type", "application/json")
            if self.behaviour == "drip":
                handler.send_header("Content-Length", "100000")
                handler.end_headers()
                for _ in range(100000):
                    if self._stop.wait(self.drip_interval):
                        return
                    handler.wfile.write(b".")
                    handler.wfile.flush()
                return
            handler.send_header("Content-Length", str(len(self.response_body)))
            handler.end_headers()
            handler.wfile.write(self.response_body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            return

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        """Wait until ``count`` requests arrived (or ``timeout``); returns what arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.requests) >= count:
                    return list(self.requests)
            time.sleep(0.01)
        with self._lock:
            return list(self.requests)

    def close(self) -> None:
        """Release hanging and held handlers and stop the server."""
        self._stop.set()
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
