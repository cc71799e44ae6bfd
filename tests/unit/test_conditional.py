"""Conditional requests, the pure rules: entity tags, If-Match and If-None-Match evaluation."""

from __future__ import annotations

import pytest

from chalicelib.edge import conditional
from chalicelib.kernel import errors

# --- pure rules ------------------------------------------------------------------------------


def test_etag_is_quoted_version_and_body_digest() -> None:
    tag = conditional.etag(7, b'{"a": 1}')
    assert tag.startswith('"7-')
    assert tag.endswith('"')
    assert len(tag) == len('"7-"') + 16
    assert conditional.etag(7, b'{"a": 2}') != tag
    assert conditional.etag(8, b'{"a": 1}') != tag


@pytest.mark.parametrize(
    ("header", "expected"),
    [(None, None), ("", None), (" ", None), ("*", conditional.ANY_VERSION), ('"3-0123456789abcdef"', 3),
     ('"x", "12-0123456789abcdef"', 12), ('"12-0123456789abcdef", W/"3-0123456789abcdef", "12-fedcba9876543210"', 12)],
)
def test_if_match_names_a_version(header: str | None, expected: int | None) -> None:
    assert conditional.expected_version(header) == expected


@pytest.mark.parametrize("header", ['W/"3-0123456789abcdef"', '"3"', "garbage", '""'])
def test_if_match_without_a_strong_tag_of_ours_cannot_match(header: str) -> None:
    expected = conditional.expected_version(header)  # not refused here: a missing resource is still a 404
    assert expected == conditional.NO_VERSION
    for current in (0, 1, 3):
        with pytest.raises(errors.PreconditionFailed):
            conditional.check_version(current, expected)


@pytest.mark.parametrize("header", ['"1-0123456789abcdef", "5-0123456789abcdef"', '"5-0123456789abcdef", "1-0123456789abcdef"'])
def test_if_match_naming_several_versions_is_refused_whatever_their_order(header: str) -> None:
    with pytest.raises(errors.RuleViolation) as refused:
        conditional.expected_version(header)
    assert [d.field for d in refused.value.details or []] == ["If-Match"]


def test_if_none_match_uses_weak_comparison_and_star() -> None:
    tag = '"3-0123456789abcdef"'
    assert conditional.not_modified(tag, tag)
    assert conditional.not_modified(f'"1-aaaaaaaaaaaaaaaa", W/{tag}', tag)
    assert conditional.not_modified("*", tag)
    assert not conditional.not_modified('"2-0123456789abcdef"', tag)
    assert not conditional.not_modified(None, tag)
