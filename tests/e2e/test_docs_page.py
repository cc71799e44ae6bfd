"""``/docs`` on the real local stack: served without a key, with a strict Content-Security-Policy,
its vendored assets and licence, and rendered by headless Chromium (Debian's ``chromium`` through
Playwright) without a single CSP violation or script error: operations and webhooks appear."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Browser

from tests.e2e.conftest import Stack

pytestmark = pytest.mark.e2e

WAIT_MS = 20_000


def test_docs_page_is_public_with_a_strict_csp(stack: Stack) -> None:
    page = httpx.get(f"{stack.base_url}/docs", timeout=10)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self';" in csp
    assert "'unsafe-inline'" not in csp
    assert "'unsafe-eval'" not in csp
    assert "frame-ancestors 'none'" in csp
    assert "<script>" not in page.text  # no inline script: every script is a file of this origin
    for asset, kind in [("swagger-ui-bundle.js", "text/javascript"), ("swagger-ui.css", "text/css"),
                        ("docs.js", "text/javascript"), ("swagger-ui-LICENSE.txt", "text/plain")]:
        response = httpx.get(f"{stack.base_url}/docs/{asset}", timeout=10)
        assert response.status_code == 200, asset
        assert response.headers["content-type"].startswith(kind), asset
    assert "Apache License" in httpx.get(f"{stack.base_url}/docs/swagger-ui-LICENSE.txt", timeout=10).text
    missing = httpx.get(f"{stack.base_url}/docs/app.py", timeout=10)
    assert missing.status_code == 404
    assert missing.json()["code"] == "NOT_FOUND"


def test_docs_page_renders_operations_and_webhooks_without_csp_violations(stack: Stack, browser: Browser) -> None:
    context = browser.new_context()
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("response", lambda response: problems.append(f"{response.status} {response.url}") if response.status >= 400 else None)
    page.goto(f"{stack.base_url}/docs")
    page.locator(".opblock").first.wait_for(timeout=WAIT_MS)
    # Every tag is a section; listing operations and the webhook events are rendered.
    assert page.get_by_text("/v1/listings/search", exact=True).count() >= 1
    assert page.get_by_text("match_request.received").count() >= 1
    assert page.locator(".opblock").count() >= 30
    context.close()
    assert problems == []
