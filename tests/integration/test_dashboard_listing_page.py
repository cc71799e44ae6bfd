"""A listing's Dashboard page shows the listing: every field by its type (rich text sanitized as on
write, options by their labels), the location's place name (not its coordinates), channels, status."""

from __future__ import annotations

from tests.integration.conftest import Api, User
from tests.integration.test_dashboard import signed_in
from tests.listing_bodies import listing_body


def test_the_listing_page_shows_its_content(api: Api, alice: User) -> None:
    body = listing_body("jobs", meta={
        "title": "Platform engineer", "skills": "javascript,sql",
        "description": "<p>Build <strong>APIs</strong><script>alert(1)</script></p>",
    })
    created = api.call("POST", "/v1/listings", alice.key, body)
    assert created.status_code == 201, created.json
    listing_id = created.json["id"]
    page = signed_in(api, alice).get(f"/dashboard/listings/{listing_id}").text
    assert '<h2 id="content-title">The listing</h2>' in page
    assert "<dd class=\"rich\"><p>Build <strong>APIs</strong></p></dd>" in page  # sanitized as on write
    assert "alert(1)" not in page
    assert "<dd>JavaScript, SQL</dd>" in page
    assert "<dt>Category</dt><dd>Jobs — " in page
    assert f"<dd>{body['meta']['location']}</dd>" in page
    assert "location_lat" not in page
    assert "<dd>Telegram</dd>" in page
    assert "<dt>Status</dt><dd>PENDING</dd>" in page
