"""Address rules (SSRF): every rule at the address level and the URL syntax rules (at registration:
tests/integration/test_webhooks_addresses_api.py)."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.webhooks import addresses
from chalicelib.webhooks.addresses import UrlRejected, blocked_reason, parse_url, url_pattern


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("10.1.2.3", "private address"),
        ("172.16.0.1", "private address"),
        ("192.168.1.1", "private address"),
        ("127.0.0.1", "loopback address"),
        ("127.8.8.8", "loopback address"),
        ("::1", "loopback address"),
        ("169.254.169.254", "link-local address"),
        ("169.254.1.1", "link-local address"),
        ("fe80::1", "link-local address"),
        ("100.64.0.1", "carrier-grade NAT address"),
        ("100.127.255.254", "carrier-grade NAT address"),
        ("fd00::1", "unique-local address"),
        ("fc00::1", "unique-local address"),
        ("::ffff:8.8.8.8", "IPv4-mapped IPv6 address"),
        ("::ffff:127.0.0.1", "IPv4-mapped IPv6 address"),
        ("0.0.0.0", "unspecified address"),
        ("::", "unspecified address"),
        ("224.0.0.1", "multicast address"),
        ("ff02::1", "multicast address"),
        ("240.0.0.1", "reserved address"),
        ("255.255.255.255", "reserved address"),
        ("64:ff9b::808:808", "reserved address"),
        ("192.0.2.10", "private address"),
        ("2001:db8::1", "private address"),
        ("fec0::1", "site-local address"),
    ],
)
def test_forbidden_addresses(address: str, reason: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ["2002:a00:1::1", "64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe"])
def test_ipv6_forms_embedding_forbidden_ipv4_are_blocked(address: str) -> None:
    reason = blocked_reason(ipaddress.ip_address(address))
    assert reason is not None
    assert "embedding a forbidden IPv4" in reason


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None


def test_insecure_stage_allows_loopback_only() -> None:
    assert blocked_reason(ipaddress.ip_address("127.0.0.1"), allow_loopback=True) is None
    assert blocked_reason(ipaddress.ip_address("::1"), allow_loopback=True) is None
    for still_forbidden in ("10.0.0.1", "169.254.169.254", "100.64.0.1", "fd00::1", "::ffff:127.0.0.1"):
        assert blocked_reason(ipaddress.ip_address(still_forbidden), allow_loopback=True) is not None


@pytest.mark.parametrize(
    ("url", "issue"),
    [
        ("http://hooks.example.com/x", "https"),
        ("ftp://hooks.example.com/x", "https"),
        ("hooks.example.com/x", "https"),
        ("https://user:pw@hooks.example.com/x", "user info"),
        ("https:///path", "host"),
        ("https://hooks.example.com:99999/", "port"),
        ("https://hooks.example.com:0/", "port \\(0\\)"),
        ("https://hooks.example.com:00/", "port \\(0\\)"),
        ("https://hooks.example.com/a b", "spaces"),
        ("https://hooks.example.com/x#frag", "fragment"),
        ("https://hooks.example.com/" + "a" * 2100, "2048"),
        ("https://hooks.example.com/päth", "ASCII"),
        ("https://bücher.example/", "xn-- form"),
        ("https://hooks.example.com:/", "not a valid URL"),
        ("https://[::1]]:9131/x", "not a valid URL"),
        ("https://[::1/x", "not a valid URL"),
    ],
)
def test_url_syntax_rules(url: str, issue: str) -> None:
    with pytest.raises(UrlRejected, match=issue):
        parse_url(url, allow_insecure=False)


def test_url_parts_and_host_header() -> None:
    parsed = parse_url("https://Hooks.Example.com/in?x=1", allow_insecure=False)
    assert (parsed.scheme, parsed.host, parsed.port, parsed.target) == ("https", "hooks.example.com", 443, "/in?x=1")
    assert parsed.host_header == "hooks.example.com"
    assert parse_url("http://127.0.0.1:8080", allow_insecure=True).host_header == "127.0.0.1:8080"
    assert parse_url("https://[2606:4700::1]:8443/", allow_insecure=False).host_header == "[2606:4700::1]:8443"
    assert parse_url("https://XN--bcher-kva.example/", allow_insecure=False).host == "xn--bcher-kva.example"


def test_every_resolved_address_must_be_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(addresses, "getaddrinfo", lambda host, port: [ipaddress.ip_address("93.184.215.14"),
                                                                       ipaddress.ip_address("10.0.0.5")])
    with pytest.raises(UrlRejected, match=r"private address \(10.0.0.5\)"):
        addresses.allowed_target("https://mixed.example.com/", allow_insecure=False, timeout=1)


def test_unresolvable_host_is_rejected() -> None:
    with pytest.raises(UrlRejected, match="does not resolve"):
        addresses.allowed_target("https://no-such-host.invalid/", allow_insecure=False, timeout=2)


def test_literal_addresses_need_no_dns() -> None:
    parsed, pinned = addresses.allowed_target("https://93.184.215.14/hook", allow_insecure=False, timeout=1)
    assert pinned == [ipaddress.ip_address("93.184.215.14")]
    assert parsed.host == "93.184.215.14"


#: Refusals of URLs the schema's pattern allows: the rules it cannot state, which POST /v1/webhooks
#: lists (a host that is no DNS name cannot resolve).
LISTED_RULES = re.compile(r"must name a host|has an invalid host name")


@given(st.from_regex(url_pattern(allow_insecure=True), fullmatch=True).filter(lambda url: len(url) <= addresses.MAX_URL_LENGTH))
def test_the_server_accepts_every_url_the_schema_allows_but_for_the_listed_rules(url: str) -> None:
    refusal = ""
    try:
        parse_url(url, allow_insecure=True)
    except UrlRejected as exc:
        refusal = str(exc)
    assert not refusal or LISTED_RULES.search(refusal), (url, refusal)


@pytest.mark.parametrize("url", [
    "https://user:pw@8.8.8.8/hook", "https://8.8.8.8/hook#frag", "https://8.8.8.8:0/hook", "https://8.8.8.8:70000/hook",
    "http://[::1]]:9131/x", "https://hooks.example.com:/", "https://bücher.example/", "https://a.example/x y",
    "https://hooks.example.com:08/", "mailto:x@example.com", "https://[1:2:3:4:5:6:7:8:9]/", "https://[1::2::3]/",
    "https://[12345::1]/", "https://[::ffff:8.8.8.8]/", "https://[fe80::1%25eth0]/",
])
def test_the_schema_refuses_what_the_server_refuses(url: str) -> None:
    assert re.search(url_pattern(allow_insecure=True), url) is None
    with pytest.raises(UrlRejected):
        parse_url(url, allow_insecure=True)


def test_the_pattern_escapes_only_what_ecma_262_unicode_patterns_allow() -> None:
    # JSON Schema patterns are ECMA-262 regular expressions, which tools compile with the u flag:
    # there an identity escape must name a syntax character (redocly refused an escaped quote).
    escaped = re.findall(r"\\(.)", url_pattern(allow_insecure=False))
    assert escaped
    assert set(escaped) <= set("^$\\.*+?()[]{}|/")
