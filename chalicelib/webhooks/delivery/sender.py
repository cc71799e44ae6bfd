"""One HTTP POST to a webhook receiver: a total deadline, a pinned address, no redirects.

* **Total deadline.** Name resolution, connect, TLS handshake, sending and reading share one
  deadline (spec §8: 10 seconds), so a receiver that drips its response one byte at a time
  is cut off like one that never answers. Every socket operation gets the time still left
  as its timeout (CPython bounds a whole ``sendall``/TLS handshake by the socket timeout);
  a per-read timeout alone would let a slow drip run forever.
* **Pinned address.** The host is resolved and every address checked
  (:mod:`chalicelib.webhooks.addresses`) right before the request; the connection goes to
  those checked addresses only (DNS-rebinding safe). The URL keeps its host name, so the
  ``Host`` header, TLS SNI and certificate verification all use the name.
* **No redirects.** A 3xx is returned as it is and counts as a failure.

Built on ``httpcore`` (the transport of ``httpx``; https://www.encode.io/httpcore/, "Network
backends"): a custom ``NetworkBackend`` connects to the pinned address and clamps every
timeout to the deadline.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import httpcore

from chalicelib.webhooks import addresses
from chalicelib.webhooks.addresses import IPAddress

#: Response bytes kept for the delivery log (4 KiB).
MAX_RESPONSE_BYTES = 4096

#: Error classes of a failed attempt (``error`` in the delivery log).
TIMEOUT = "timeout"
CONNECTION_ERROR = "connection_error"
TLS_ERROR = "tls_error"
PROTOCOL_ERROR = "protocol_error"
BLOCKED_ADDRESS = "blocked_address"
DNS_ERROR = "dns_error"


@dataclass(frozen=True)
class Outcome:
    """What one attempt produced.

    Attributes
    ----------
    status_code:
        The receiver's HTTP status, or ``None`` when no response arrived (in time).
    error:
        ``None``, or one of :data:`TIMEOUT`, :data:`CONNECTION_ERROR`, :data:`TLS_ERROR`,
        :data:`PROTOCOL_ERROR`, :data:`BLOCKED_ADDRESS`, :data:`DNS_ERROR`.
    duration_ms:
        Wall time of the attempt, milliseconds.
    response_body:
        The first :data:`MAX_RESPONSE_BYTES` bytes of the response body, decoded as UTF-8
        (invalid bytes replaced); ``None`` without a response.
    detail:
        A short human-readable explanation for the log (e.g. the blocked address).
    """

    status_code: int | None
    error: str | None
    duration_ms: int
    response_body: str | None = None
    detail: str | None = None

    @property
    def ok(self) -> bool:
        """True for a complete 2xx response within the deadline (spec §6 "Delivery policy")."""
        return self.error is None and self.status_code is not None and 200 <= self.status_code < 300


class _Deadline:
    """A monotonic deadline handing out the time left as each operation's timeout."""

    def __init__(self, seconds: float) -> None:
        self.expires = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.expires - time.monotonic()

    def clamp(self, timeout: float | None, expired: type[Exception]) -> float:
        """``min(timeout, time left)``; raises ``expired`` once the deadline has passed."""
        left = self.remaining()
        if left <= 0:
            raise expired("webhook delivery deadline exceeded")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """Wraps a network stream so no read, write or handshake outlives the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._deadline.clamp(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _PinnedBackend(httpcore.NetworkBackend):
    """Connects to the checked addresses (in order, first that answers) whatever host is asked for."""

    def __init__(self, pinned: list[IPAddress], deadline: _Deadline) -> None:
        self._pinned = pinned
        self._deadline = deadline
        self._sync = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        failure: Exception = httpcore.ConnectError("no address to connect to")
        for address in self._pinned:
            try:
                stream = self._sync.connect_tcp(
                    str(address), port, self._deadline.clamp(timeout, httpcore.ConnectTimeout), local_address, socket_options
                )
            except httpcore.ConnectTimeout:
                raise
            except httpcore.ConnectError as exc:  # e.g. no IPv6 route: try the next checked address
                failure = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        raise failure

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are never webhook targets")


_ssl_lock = threading.Lock()


@lru_cache(maxsize=1)
def _default_ssl_context() -> ssl.SSLContext:
    return httpcore.default_ssl_context()


def _ssl_context() -> ssl.SSLContext:
    """Certificate and host name verification on, certifi's CA bundle (httpcore's default).

    Built once per process (loading the CA bundle takes tens of milliseconds), under a lock
    so that the threads of a first batch do not all build their own.
    """
    with _ssl_lock:
        return _default_ssl_context()


def _error_class(exc: Exception) -> str:
    if isinstance(exc, httpcore.TimeoutException):
        return TIMEOUT
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, httpcore.ConnectError) and isinstance(cause, ssl.SSLError):
        return TLS_ERROR
    if isinstance(exc, (httpcore.ConnectError, httpcore.ReadError, httpcore.WriteError)):
        return CONNECTION_ERROR
    return PROTOCOL_ERROR


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    allow_insecure: bool,
    ssl_context: ssl.SSLContext | None = None,
) -> Outcome:
    """POST ``body`` to ``url`` once; never raises for anything the receiver or network does.

    Parameters
    ----------
    url:
        The webhook URL (checked again here: :func:`chalicelib.webhooks.addresses.allowed_target`).
    body:
        The exact, signed body bytes.
    headers:
        Request headers (``Host`` and ``Content-Length`` are added).
    timeout:
        Total deadline in seconds for resolution, connect, TLS, send and read.
    allow_insecure:
        Stage setting ``ALLOW_INSECURE_WEBHOOKS`` (http and loopback allowed).
    ssl_context:
        Override the verifying TLS context (tests trust their own CA); verification stays on.

    Returns
    -------
    Outcome
        Status code and up to 4 KiB of the body, or the error class.
    """
    started = time.monotonic()
    deadline = _Deadline(timeout)

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        parsed, pinned = addresses.allowed_target(url, allow_insecure, deadline.remaining())
    except addresses.HostUnresolved as exc:
        return Outcome(None, DNS_ERROR, elapsed_ms(), detail=str(exc))
    except addresses.UrlRejected as exc:
        return Outcome(None, BLOCKED_ADDRESS, elapsed_ms(), detail=str(exc))
    request_url = httpcore.URL(
        scheme=parsed.scheme.encode(), host=parsed.host.encode(), port=parsed.port, target=parsed.target.encode()
    )
    sent_headers = {"Host": parsed.host_header, **headers}
    limits = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    try:
        with (
            httpcore.ConnectionPool(
                ssl_context=(ssl_context or _ssl_context()) if parsed.scheme == "https" else None,
                network_backend=_PinnedBackend(pinned, deadline),
                max_connections=1,
                retries=0,
            ) as pool,
            pool.stream("POST", request_url, headers=list(sent_headers.items()), content=body, extensions={"timeout": limits}) as response,
        ):
            kept = bytearray()
            for chunk in response.iter_stream():
                kept += chunk
                if len(kept) >= MAX_RESPONSE_BYTES:
                    break
            text = bytes(kept[:MAX_RESPONSE_BYTES]).decode("utf-8", errors="replace")
            return Outcome(response.status, None, elapsed_ms(), text)
    except httpcore.TimeoutException as exc:
        return Outcome(None, TIMEOUT, elapsed_ms(), detail=f"no complete response within {timeout:g} s ({type(exc).__name__})")
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
        return Outcome(None, _error_class(exc), elapsed_ms(), detail=f"{type(exc).__name__}: {exc}"[:300])
