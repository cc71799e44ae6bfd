"""Real webhook receivers on 127.0.0.1 for the end-to-end webhook tests (``http.server`` on threads).

A :class:`Receiver` records every request it gets (headers, exact body bytes, arrival time,
whether both signatures verified) and answers according to its ``mode``, which a test may
switch at any time:

* ``ok``: verifies both signatures (spec §6 ``X-Webhook-Signature``: lower-case hex
  HMAC-SHA256 of the body keyed with the secret string's UTF-8 bytes, ``whsec_`` included;
  and the Standard Webhooks headers with ``standardwebhooks.Webhook(secret).verify``), then
  answers 200, or 500 on a mismatch, as a receiver following the spec should;
* ``fail``: answers 500;
* ``hang``: reads the request and never answers (for ``hang_seconds``, then drops the
  connection);
* ``drip``: sends the status line and headers at once, then the body one byte every
  ``drip_interval`` seconds (``drip_bytes`` bytes: 20 s by default).
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

from tests.closing import closing_all
from tests.sockets import hold_while_connected, peer_closed


@dataclass
class Received:
    """One request as the receiver saw it.

    Attributes
    ----------
    headers:
        Header names lower-cased.
    body:
        The exact body bytes.
    at:
        ``time.monotonic()`` when the body had been read.
    hex_ok, standard_ok:
        Whether ``X-Webhook-Signature`` and the Standard Webhooks signature verified.
    ended:
        ``time.monotonic()`` when the handler finished (answered, gave up, or the client left).
    """

    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    hex_ok: bool
    standard_ok: bool
    ended: float | None = None
    bytes_sent: int = 0

    @property
    def verified(self) -> bool:
        """Both signatures verified."""
        return self.hex_ok and self.standard_ok

    @property
    def event(self) -> str:
        """The ``X-Webhook-Event`` header."""
        return self.headers.get("x-webhook-event", "")

    @property
    def webhook_id(self) -> str:
        """The Standard Webhooks ``webhook-id`` header (stable per event and webhook)."""
        return self.headers.get("webhook-id", "")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connections the sender breaks on purpose (deadline) are not errors here."""


class Receiver:
    """A running receiver; point a webhook at :attr:`url`, then set :attr:`secret`.

    Parameters
    ----------
    mode:
        ``ok``, ``fail``, ``hang`` or ``drip`` (see the module docstring); may be changed later.
    hang_seconds:
        How long ``hang`` keeps a request unanswered.
    drip_interval, drip_bytes:
        ``drip``: seconds between body bytes, and how many bytes.
    """

    def __init__(self, mode: str = "ok", *, hang_seconds: float = 15.0, drip_interval: float = 1.0, drip_bytes: int = 20) -> None:
        self.mode = mode
        self.secret: str | None = None
        self.hang_seconds = hang_seconds
        self.drip_interval = drip_interval
        self.drip_bytes = drip_bytes
        self._requests: list[Received] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._open: list[Any] = []  # the connections of the requests being handled
        self._max_in_flight = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                hex_ok, standard_ok = receiver._verify(body, headers)
                seen = Received(self.path, headers, body, time.monotonic(), hex_ok, standard_ok)
                with receiver._lock:
                    receiver._requests.append(seen)
                    # Concurrency as the sender made it: earlier requests whose connection the
                    # sender has closed (its deadline) are over, whether or not their handler noticed.
                    still_open = [c for c in receiver._open if not peer_closed(c)]
                    receiver._max_in_flight = max(receiver._max_in_flight, len(still_open) + 1)
                    receiver._open.append(self.connection)
                try:
                    receiver._respond(self, seen)
                finally:
                    with receiver._lock:
                        receiver._open.remove(self.connection)
                        seen.ended = time.monotonic()

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=f"receiver-{self.port}", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The webhook URL (http and loopback: the local stage allows both)."""
        return f"http://127.0.0.1:{self.port}/hook"

    @property
    def requests(self) -> list[Received]:
        """Every request so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def in_flight(self) -> int:
        """Requests being handled right now whose sender is still connected (hanging or dripping)."""
        with self._lock:
            return sum(1 for connection in self._open if not peer_closed(connection))

    @property
    def max_in_flight(self) -> int:
        """The most requests handled at once so far (1: the attempts came one at a time)."""
        with self._lock:
            return self._max_in_flight

    def events(self) -> list[str]:
        """The ``X-Webhook-Event`` of every request so far."""
        return [r.event for r in self.requests]

    def _verify(self, body: bytes, headers: dict[str, str]) -> tuple[bool, bool]:
        secret = self.secret
        if secret is None:
            return False, False
        expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
        hex_ok = hmac.compare_digest(expected, headers.get("x-webhook-signature", ""))
        try:
            Webhook(secret).verify(body, headers)
            standard_ok = True
        except (WebhookVerificationError, ValueError):
            standard_ok = False
        return hex_ok, standard_ok

    def _respond(self, handler: BaseHTTPRequestHandler, seen: Received) -> None:
        mode = self.mode
        try:
            if mode == "hang":  # until the sender gives up (or hang_seconds)
                hold_while_connected(handler.connection, self.hang_seconds, self._stop)
                handler.close_connection = True
                return
            if mode == "drip":
                handler.send_response(200)
                handler.send_header("Content-Type", "text/plain")
                handler.send_header("Content-Length", str(self.drip_bytes))
                handler.end_headers()
                handler.wfile.flush()
                for _ in range(self.drip_bytes):
                    if self._stop.wait(self.drip_interval):
                        return
                    handler.wfile.write(b".")
                    handler.wfile.flush()
                    seen.bytes_sent += 1
                return
            status = 200 if mode == "ok" and seen.verified else 500
            body = b'{"received":true}' if status == 200 else b'{"error":"rejected"}'
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:  # the sender gave up (its deadline) and closed the connection
            handler.close_connection = True

    def close(self) -> None:
        """Release hanging or dripping handlers and stop serving."""
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def receivers() -> Iterator[Any]:
    """A factory of receivers, all closed on exit: ``with receivers() as new: r = new("fail")``."""
    with closing_all(Receiver) as new:
        yield new
