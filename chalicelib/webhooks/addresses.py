"""Which webhook URLs and addresses may be called (server-side request forgery rules).

Rules (DESIGN §2 "Webhooks"; OWASP "Server-Side Request Forgery Prevention
Cheat Sheet"):

* the URL is ``https`` with a host, no user info, an ASCII path (percent-encoded), no fragment
  and a port in 1..65535 when one is written (:func:`url_pattern`: the same rules, as the
  JSON Schema pattern of the ``url`` field);
* every address the host resolves to (``socket.getaddrinfo``) must be globally routable:
  no private (RFC 1918), loopback, link-local (169.254.0.0/16 with the cloud metadata
  endpoint 169.254.169.254, fe80::/10), carrier-grade NAT (100.64.0.0/10, RFC 6598),
  unique-local (fc00::/7, RFC 4193), IPv4-mapped (::ffff:0:0/96), unspecified, multicast or
  reserved addresses, nor IPv6 forms that embed a forbidden IPv4 address (6to4, Teredo,
  NAT64 64:ff9b::/96); classification by the standard ``ipaddress`` module (IANA special-
  purpose registries);
* the stage setting ``ALLOW_INSECURE_WEBHOOKS`` (local runs and tests only) also allows
  ``http`` and loopback addresses; every other rule still holds.

The rules run at registration and again at every delivery; the sender then connects to
exactly the addresses checked here (:mod:`chalicelib.webhooks.delivery.sender`), so a DNS answer
that changes between check and connect (DNS rebinding) cannot redirect a delivery.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from chalicelib.kernel.urls import HTTP_SCHEMES, MAX_LENGTH, InvalidUrl, split_http_url

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Longest webhook URL, in characters: the shared limit of user-supplied URLs.
MAX_URL_LENGTH = MAX_LENGTH
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_DEFAULT_PORTS = {"https": 443, "http": 80}

#: A port number 1..65535 (RFC 6335 §6: port 0 is reserved), without leading zeros.
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_H16 = "[0-9A-Fa-f]{1,4}"
#: An IPv6 address in hexadecimal groups (RFC 4291 §2.2 forms 1 and 2; one ``::`` at most). The
#: dotted-quad tail (form 3) is left out: every address written so embeds IPv4 in a range the
#: address rules refuse (IPv4-mapped, NAT64) or is better written in hex.
_IPV6 = "|".join((
    f"(?:{_H16}:){{7}}{_H16}",
    *(f"(?:{_H16}:){{1,{k}}}(?::{_H16}){{1,{7 - k}}}" for k in range(1, 7)),
    f"(?:{_H16}:){{1,7}}:",
    f":(?:(?::{_H16}){{1,7}}|:)",
))
#: A host (RFC 3986 §3.2.2): a registered name of unreserved, sub-delimiter and percent-encoded
#: characters, or a bracketed IPv6 address. No ``@``: user info is refused.
_HOST = rf"(?:(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{{2}})+|\[(?:{_IPV6})\])"
#: Path and query: printable ASCII but ``#`` (no fragment).
_TARGET = r'(?:[/?][!"$-~]*)?'


def url_pattern(allow_insecure: bool) -> str:
    """The syntax a webhook URL must have, as a regular expression valid in Python and in JSON
    Schema (ECMA-262): ``https`` (``http`` too when ``allow_insecure``) in any case, a host, an
    optional port 1..65535, then optionally a path or query of printable ASCII without ``#``.
    :func:`parse_url` holds every URL to it; the ``url`` schema of ``POST /v1/webhooks`` states it."""
    scheme = "[Hh][Tt][Tt][Pp][Ss]?" if allow_insecure else "[Hh][Tt][Tt][Pp][Ss]"
    return f"^{scheme}://{_HOST}(?::{_PORT})?{_TARGET}$"


#: getaddrinfo has no timeout of its own: it runs here so callers can stop waiting for it.
_resolver = ThreadPoolExecutor(max_workers=32, thread_name_prefix="webhook-dns")


class UrlRejected(Exception):
    """The URL or one of its addresses breaks a rule; ``str(exc)`` says which, for clients."""


class HostUnresolved(UrlRejected):
    """The host did not resolve (no such name, resolver failure, or no answer in time)."""


@dataclass(frozen=True)
class WebhookUrl:
    """A parsed webhook URL."""

    #: ``https`` (or ``http`` where the stage allows it).
    scheme: str
    #: The host in ASCII (IDNA-encoded), lower case, without brackets for IPv6 literals.
    host: str
    #: The explicit port or the scheme's default.
    port: int
    #: Path and query, at least ``/``.
    target: str

    @property
    def host_header(self) -> str:
        """The ``Host`` header value (RFC 9110 §7.2): brackets for IPv6, port when not the default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def ip_literal(self) -> IPAddress | None:
        """The host as an address when it is written as one, else ``None``."""
        try:
            return ipaddress.ip_address(self.host)
        except ValueError:
            return None


def parse_url(url: str, allow_insecure: bool) -> WebhookUrl:
    """Check the syntax rules and split ``url``.

    Parameters
    ----------
    url:
        The URL as registered.
    allow_insecure:
        Accept ``http`` too (stage setting ``ALLOW_INSECURE_WEBHOOKS``).

    Raises
    ------
    UrlRejected
        Not https (or http where allowed), no host, user info present, a bad port, a path
        that is not printable ASCII, a fragment, longer than :data:`MAX_URL_LENGTH`, or
        otherwise not of :func:`url_pattern`'s syntax (``https://[::1]]/``, ``https://host:/``).
    """
    try:
        parts = split_http_url(url, HTTP_SCHEMES if allow_insecure else ("https",))
    except InvalidUrl as exc:
        raise UrlRejected(str(exc)) from exc
    except ValueError as exc:  # urlsplit: e.g. "https://[" (an unclosed IPv6 literal)
        raise UrlRejected(f"is not a valid URL: {exc}") from exc
    scheme = parts.scheme.lower()
    if parts.username is not None or parts.password is not None:
        raise UrlRejected("must not contain user info (user:password@)")
    if parts.fragment:
        raise UrlRejected("must not contain a fragment (#...)")
    try:
        given = parts.port
    except ValueError as exc:
        raise UrlRejected("has an invalid port") from exc
    if given == 0:  # port 0 is reserved (RFC 6335 §6): no receiver listens there
        raise UrlRejected("has an invalid port (0)")
    port = _DEFAULT_PORTS[scheme] if given is None else given
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UrlRejected("must name a host")
    try:
        ascii_host = host.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise UrlRejected("has an invalid host name") from exc
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    if not target.isascii():
        raise UrlRejected("path and query must be ASCII (percent-encode other characters)")
    if not re.fullmatch(url_pattern(allow_insecure), url):
        raise UrlRejected("is not a valid URL: printable ASCII only (a host name in its xn-- form), a host, "
                          "an optional port, then a path or query")
    return WebhookUrl(scheme, ascii_host, port, target)


def blocked_reason(address: IPAddress, allow_loopback: bool = False) -> str | None:
    """Why ``address`` may not be called, or ``None`` when it may.

    Parameters
    ----------
    address:
        An IPv4 or IPv6 address.
    allow_loopback:
        Accept loopback addresses (stage setting ``ALLOW_INSECURE_WEBHOOKS``).

    Returns
    -------
    str or None
        A short reason such as ``"private address"``; ``None`` for a globally routable one.
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "IPv4-mapped IPv6 address"
        embedded = _embedded_ipv4(address)
        if embedded is not None and blocked_reason(embedded) is not None:
            return f"IPv6 address embedding a forbidden IPv4 address ({embedded})"
    if address.is_loopback:
        return None if allow_loopback else "loopback address"
    if address.is_unspecified:
        return "unspecified address"
    if address.is_link_local:
        return "link-local address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "carrier-grade NAT address"
    if isinstance(address, ipaddress.IPv6Address) and address in _UNIQUE_LOCAL:
        return "unique-local address"
    if address.is_multicast:
        return "multicast address"
    if address.is_reserved:
        return "reserved address"
    if address.is_private:
        return "private address"
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "site-local address"
    if not address.is_global:
        return "address that is not globally routable"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def getaddrinfo(host: str, port: int) -> list[IPAddress]:
    """Every address of ``host`` for a TCP connection, in resolver order, without duplicates.

    Raises
    ------
    HostUnresolved
        The host does not resolve (``socket.gaierror``).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise HostUnresolved(f"host {host} does not resolve") from exc
    found: dict[IPAddress, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        found[ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])] = None
    return list(found)


def resolve(url: WebhookUrl, timeout: float) -> list[IPAddress]:
    """The addresses to connect to for ``url``: the literal, or the DNS answer within ``timeout``.

    Parameters
    ----------
    url:
        A parsed URL.
    timeout:
        Seconds to wait for the resolver.

    Raises
    ------
    HostUnresolved
        Unresolvable host, or no answer within ``timeout``.
    """
    literal = url.ip_literal
    if literal is not None:
        return [literal]
    future = _resolver.submit(getaddrinfo, url.host, url.port)
    try:
        return future.result(timeout=max(timeout, 0.0))
    except FutureTimeout as exc:
        raise HostUnresolved(f"host {url.host} did not resolve within {timeout:.1f} s") from exc


def check_addresses(addresses: list[IPAddress], allow_loopback: bool) -> None:
    """Require every one of ``addresses`` to be allowed.

    Raises
    ------
    UrlRejected
        Naming the first forbidden address and why, or when ``addresses`` is empty.
    """
    if not addresses:
        raise UrlRejected("host has no addresses")
    for address in addresses:
        reason = blocked_reason(address, allow_loopback)
        if reason is not None:
            raise UrlRejected(f"resolves to a {reason} ({address}); webhooks must reach a public address")


def allowed_target(url: str, allow_insecure: bool, timeout: float) -> tuple[WebhookUrl, list[IPAddress]]:
    """Parse, resolve and check ``url``: the whole rule set, at registration and at delivery.

    Parameters
    ----------
    url:
        The webhook URL.
    allow_insecure:
        Stage setting ``ALLOW_INSECURE_WEBHOOKS``: http and loopback allowed.
    timeout:
        Seconds allowed for name resolution.

    Returns
    -------
    tuple
        The parsed URL and the checked addresses to connect to (in resolver order).

    Raises
    ------
    UrlRejected
        Any rule broken.
    """
    parsed = parse_url(url, allow_insecure)
    addresses = resolve(parsed, timeout)
    check_addresses(addresses, allow_loopback=allow_insecure)
    return parsed, addresses
