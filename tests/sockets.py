"""Connection state for the tests' webhook receivers, read from the kernel instead of the clock.

A receiver that hangs must know when the sender gave up (closed the connection at its deadline)
to tell "one attempt at a time" from "several at once" without comparing arrival times: the
sender closes its connection before it starts the next attempt, so by the time the next request
arrives the kernel already holds the first connection's end-of-stream.
"""

from __future__ import annotations

import select
import socket
import threading


def peer_closed(sock: socket.socket) -> bool:
    """Whether the other end of ``sock`` has closed it (end-of-stream is waiting to be read).

    Non-blocking: ``select`` with a zero timeout, then a ``MSG_PEEK`` read that consumes nothing.
    A TLS socket cannot peek; it counts as open.
    """
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except ValueError:  # ssl.SSLSocket refuses MSG_PEEK
        return False
    except OSError:
        return True


def hold_while_connected(sock: socket.socket, seconds: float, stop: threading.Event) -> None:
    """Block until the peer closes ``sock``, ``stop`` is set or ``seconds`` pass, whichever comes first.

    ``select`` wakes at once on end-of-stream; the 0.2 s slices only bound how long ``stop`` waits.
    """
    remaining = seconds
    while remaining > 0 and not stop.is_set():
        step = min(remaining, 0.2)
        try:
            readable, _, _ = select.select([sock], [], [], step)
        except (OSError, ValueError):
            return
        if readable and peer_closed(sock):
            return
        remaining -= step
