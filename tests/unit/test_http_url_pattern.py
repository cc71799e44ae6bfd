"""The OpenAPI pattern of an http(s) link (``HTTP_URL_PATTERN``, on every profile link) accepts
exactly what the server's check (:func:`chalicelib.kernel.urls.absolute_http_url`) accepts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.kernel.profile_summary import HTTP_URL_PATTERN
from chalicelib.kernel.urls import InvalidUrl, absolute_http_url

#: The characters that decide: URL delimiters, every printable ASCII class, a letter beyond ASCII, a bidi control.
_CHARS = st.sampled_from([*"aZ09.-_:/?#@[]!$&'()*+,;=%~\\\"<>^`{|}", "é", "\u202e", "\u200b", " "])
_SCHEMES = st.sampled_from(["https://", "http://", "HTTPS://", "Http://", "ftp://", "https:/", "https:", ""])
_PORTS = st.one_of(st.just(""), st.integers(0, 99_999).map(lambda n: f":{n}"), st.just(":"), st.just(":00080"), st.just(":8a"))
urls = st.builds(lambda scheme, host, port, rest: scheme + host + port + rest,
                 _SCHEMES, st.text(_CHARS, max_size=10), _PORTS, st.text(_CHARS, max_size=8))


def _accepted(value: str) -> bool:
    try:
        return absolute_http_url(value) == value
    except InvalidUrl:
        return False


@given(urls)
def test_the_pattern_and_the_check_agree(value: str) -> None:
    assert bool(re.fullmatch(HTTP_URL_PATTERN, value)) == _accepted(value)


@pytest.mark.parametrize(("value", "accepted"), [
    ("https://example.com/a?b#c", True), ("https://example.com:443", True), ("https://example.com:65536", False),
    ("https://user@example.com", False), ("https://example.com@evil.com", False), ("https://[::ffff:1.2.3.4]/", False),
    ("https://例え.jp", False), ("https://xn--r8jz45g.jp", True), ("https://ex\u202eample.com", False), ("https://[x", False),
])
def test_links_that_hide_their_host_are_refused(value: str, accepted: bool) -> None:
    assert _accepted(value) is accepted
    assert bool(re.fullmatch(HTTP_URL_PATTERN, value)) is accepted
