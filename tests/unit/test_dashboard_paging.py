"""Pure tests of the Dashboard's "Load earlier messages" cursor (paging.EarlierPages): which service page it reads."""

from __future__ import annotations

import pytest

from chalicelib.dashboard.paging import EarlierPages
from chalicelib.kernel import errors
from chalicelib.kernel.pagination import PageQuery

SCOPE = ("dashboard.messages", "usr_1|cnv_1")


def test_the_first_view_reads_the_last_page_of_the_api() -> None:
    pages = EarlierPages.of(PageQuery(pageSize=3), *SCOPE)
    assert (pages.page_to_read, pages.size) == (None, 3)
    assert [pages.page(total) for total in (0, 1, 3, 4, 6, 7)] == [1, 1, 1, 2, 2, 3]


def test_an_earlier_cursor_names_its_page_whatever_arrived_since() -> None:
    cursor = EarlierPages.of(PageQuery(pageSize=3), *SCOPE).position.next_cursor(True, "2")
    assert cursor is not None
    pages = EarlierPages.of(PageQuery(pageSize=3, cursor=cursor), *SCOPE)
    assert (pages.position.page, pages.page_to_read) == (2, 2)
    assert pages.page(1000) == 2  # newer messages do not move the page


@pytest.mark.parametrize(("key", "scope", "size"), [
    ("2", ("dashboard.messages", "usr_2|cnv_1"), 3),  # another user's
    ("2", ("dashboard.messages", "usr_1|cnv_2"), 3),  # another conversation's
    ("2", SCOPE, 4),  # another page size
    ("0", SCOPE, 3),  # signed, but no such page
    ("two", SCOPE, 3),
    ("2:7", SCOPE, 3),
])
def test_a_cursor_of_another_view_or_with_a_bad_position_names_the_cursor(key: str, scope: tuple[str, str], size: int) -> None:
    cursor = EarlierPages.of(PageQuery(pageSize=3), *SCOPE).position.next_cursor(True, key)
    with pytest.raises(errors.RuleViolation) as raised:
        EarlierPages.of(PageQuery(pageSize=size, cursor=cursor), *scope)
    assert [d.field for d in raised.value.details] == ["cursor"]
