"""The listing form in headless Chromium speaks plain words: options by their category labels
("JavaScript", "SQL"), hints without the API's encodings, Yes / No for a boolean; the review diff
shows labels too."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Stack
from tests.e2e.test_dashboard import expect, key_of, signed_in_page

pytestmark = pytest.mark.e2e


def test_the_listing_form_shows_option_labels_and_plain_hints(browser: Any, stack: Stack) -> None:
    _, owner = stack.new_user("Fiona Forms")
    page = signed_in_page(browser, stack, key_of(owner))
    page.goto("/dashboard/listings/new")
    page.get_by_label("Category and role").select_option("jobs:hiring")
    page.get_by_role("button", name="Continue").click()
    skills = page.get_by_role("group", name="Skills")
    expect(skills.get_by_role("checkbox", name="JavaScript", exact=True)).to_be_visible()
    expect(skills.get_by_role("checkbox", name="SQL", exact=True)).to_be_visible()
    expect(skills).to_have_accessible_description("Pick any.")
    main = page.get_by_role("main")
    for api_words in ("comma-separated", "plain text string", "ISO 8601", "base-10", "option key"):
        expect(main).not_to_contain_text(api_words)
    page.context.close()

    _, housing_owner = stack.new_user("Hana Housing")
    page = signed_in_page(browser, stack, key_of(housing_owner))
    page.goto("/dashboard/listings/new?kind=housing:offering")
    expect(page.get_by_label("Furnished", exact=True).locator("option")).to_have_text(["(none)", "Yes", "No"])
    page.context.close()
