"""Loopback-only networking for the processes of the contract-fuzzing stack.

``tests/e2e/test_contract.py`` starts its local stack with this directory first on
``PYTHONPATH``, so Python imports this module at start-up in the stack and its moto child.
Fuzzed webhook URLs name arbitrary hosts and addresses; here no name resolves except
``localhost`` and no socket connects beyond the loopback, so nothing the fuzzer generates
causes a DNS query or a connection that leaves the machine. The product's own rules then
answer as they do for an unreachable host.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _address(host: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(str(host).strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _is_local(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is None or str(host).lower().rstrip(".") in _LOCAL_NAMES:
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_local(host) and _address(host) is None:
        raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known (sandbox: {host!r} is not resolved)")
    return _real_getaddrinfo(host, port, *args, **kwargs)


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
        raise ConnectionRefusedError(f"sandbox: connections beyond the loopback are blocked ({address[0]})")


def _connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


socket.getaddrinfo = _getaddrinfo
socket.socket.connect = _connect  # type: ignore[method-assign, assignment]
socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign, assignment]
