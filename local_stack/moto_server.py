"""The embedded AWS: moto's server app, with one request at a time.

``python -m moto.server`` serves requests on many threads, but moto's DynamoDB backend is not
thread-safe: a cancelled TransactWriteItems restores deep copies of its tables, which can undo
a concurrent successful write and orphans the stream shard that open iterators read. Real
DynamoDB serializes conflicting transactions; this launcher gives moto the same guarantee by
dispatching one request at a time (fine for local runs; nothing here long-polls SQS).

Usage: ``python -m local_stack.moto_server HOST PORT``
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple


def serialized(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    """Wrap a WSGI app so that requests run (and their bodies are produced) one at a time."""
    lock = threading.Lock()

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with lock:
            return list(app(environ, start_response))

    return wsgi


def main(host: str, port: int) -> None:
    """Serve moto on ``host:port`` until killed."""
    run_simple(host, port, serialized(DomainDispatcherApplication(create_backend_app)), threaded=True,
               request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
