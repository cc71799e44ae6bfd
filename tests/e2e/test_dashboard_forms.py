"""The listing form in headless Chromium speaks plain words: options by their category labels
("JavaScript", "SQL"), hints without the API's encodings, Yes / No for a boolean; the review diff
shows labels too."""

from __future__ import annotations

import re
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


def test_the_listing_page_shows_its_description_and_fields(browser: Any, stack: Stack) -> None:
    _, owner = stack.new_user("Lena Listing")
    created = owner.post("/v1/listings", json={
        "categoryKey": "jobs", "roleKey": "hiring", "channels": ["telegram"],
        "meta": {"title": "Data engineer", "description": "<p>Pipelines with <strong>care</strong></p>", "location": "Berlin",
                 "location_lat": "52.52", "location_lng": "13.405", "employmentType": "full_time", "skills": "sql,python"}})
    assert created.status_code == 201, created.text
    page = signed_in_page(browser, stack, key_of(owner))
    page.goto(f"/dashboard/listings/{created.json()['id']}")
    expect(page.get_by_role("heading", name="Data engineer", level=1)).to_be_visible()
    listing = page.get_by_role("region", name="The listing")
    expect(listing).to_contain_text("Pipelines with care")
    expect(listing.locator("strong")).to_have_text("care")  # rich text stays rich
    expect(listing).to_contain_text("Full-time")
    expect(listing).to_contain_text("SQL, Python")
    expect(listing).to_contain_text("Berlin")
    page.context.close()


def test_the_rich_text_editor_writes_only_kept_tags_and_the_listing_shows_them(browser: Any, stack: Stack) -> None:
    from axe_playwright_python.sync_playwright import Axe

    _, owner = stack.new_user("Rita Rich")
    page = signed_in_page(browser, stack, key_of(owner))
    page.goto("/dashboard/listings/new?kind=jobs:hiring")
    toolbar = page.get_by_role("toolbar", name="Formatting of Description")
    editor = page.get_by_role("textbox", name="Description (required)")
    expect(toolbar).to_be_visible()
    editor.click()
    page.keyboard.type("We build ")
    toolbar.get_by_role("button", name="Bold").click()
    page.keyboard.type("careful")
    toolbar.get_by_role("button", name="Bold").click()
    page.keyboard.type(" APIs.")
    hidden = page.locator("textarea[name='meta.description']")
    assert hidden.input_value() == "We build <strong>careful</strong> APIs."
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    page.get_by_label("Title").fill("Careful engineer")
    page.get_by_label("Location").fill("Berlin")
    page.get_by_label("Employment type").select_option(label="Full-time")
    page.get_by_role("checkbox", name="Telegram").check()
    page.get_by_role("button", name="Create listing").click()
    listing = page.get_by_role("region", name="The listing")
    expect(listing.locator("strong")).to_have_text("careful")
    page.context.close()

    # Without JavaScript the field is the plain text box it always was.
    plain = signed_in_page(browser, stack, key_of(owner), javascript=False)
    plain.goto("/dashboard/listings/new?kind=jobs:hiring")
    expect(plain.get_by_role("textbox", name="Description (required)")).to_be_visible()
    expect(plain.get_by_role("toolbar")).to_have_count(0)
    plain.context.close()


#: A paste of ``html`` into the focused rich editor, as the clipboard hands it to the page.
PASTE = """html => {
    const data = new DataTransfer();
    data.setData("text/html", html);
    document.activeElement.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
}"""


def test_a_pasted_document_keeps_its_visible_bold_and_its_blocks_apart(browser: Any, stack: Stack) -> None:
    """Google Docs wraps a paste in ``<b style="font-weight:normal">`` and marks bold with a styled
    span; Word's headings and a table's cells are blocks: the editor keeps what the reader saw."""
    _, owner = stack.new_user("Pia Paste")
    page = signed_in_page(browser, stack, key_of(owner))
    page.goto("/dashboard/listings/new?kind=jobs:hiring")
    page.get_by_role("textbox", name="Description (required)").click()
    pasted = ('<b style="font-weight:normal;" id="docs-internal-guid-1"><p dir="ltr"><span style="font-weight:400;">We hire a </span>'
              '<span style="font-weight:700;">senior</span><span style="font-weight:400;"> engineer.</span></p>'
              '<p dir="ltr"><span style="font-style:italic;">Remote</span></p></b>'
              '<h2>Benefits</h2><h2>Perks</h2><table><tr><td>Salary</td><td>85000</td></tr></table>')
    page.evaluate(PASTE, pasted)
    written = page.locator("textarea[name='meta.description']").input_value()
    assert "<strong>senior</strong>" in written
    assert written.count("<strong>") == 1  # the wrapper's "bold" is not bold
    assert "<em>Remote</em>" in written
    text_of_blocks = re.findall(r"<p>(.*?)</p>", written)
    assert {"Benefits", "Perks", "Salary 85000"} <= set(text_of_blocks), written
    page.context.close()
