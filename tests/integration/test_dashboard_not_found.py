"""An address under /dashboard that no page answers: the Dashboard's HTML 404 page with its security
headers, from the app (one segment) and from the local stack's edge (any depth); the API keeps JSON."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest import Api
from tests.integration.helpers import http_request
from tests.integration.test_edge_hardening import SECURITY


def _is_not_found_page(body: str) -> None:
    assert "<h1>Not found</h1>" in body
    assert "There is no Dashboard page at this address." in body
    assert '<a href="/dashboard/sign-in">Go to sign-in</a>' in body


def test_the_app_answers_an_unknown_dashboard_page_with_html(api: Api) -> None:
    response = api.client.http.get("/dashboard/nowhere")
    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("text/html")
    _is_not_found_page(response.body.decode())
    for name in SECURITY:
        assert response.headers.get(name), name


@pytest.mark.usefixtures("aws")
def test_the_local_edge_answers_any_unknown_dashboard_get_with_html(local_server: str) -> None:
    for path in ("/dashboard/nowhere", "/dashboard/webhooks/whk_1/nothing/here"):
        status, headers, body = http_request(f"{local_server}{path}", "GET", {})
        assert status == 404, path
        assert headers["Content-Type"].startswith("text/html"), path
        _is_not_found_page(body.decode())
        for name in SECURITY:
            assert headers.get(name), (path, name)
    status, _, body = http_request(f"{local_server}/dashboard/a/b/c", "POST", {})
    assert status == 404
    assert json.loads(body)["code"] == "NOT_FOUND"  # not a page a browser asks for: the error body
    status, _, body = http_request(f"{local_server}/v1/nowhere", "GET", {})
    assert json.loads(body)["code"] == "NOT_FOUND"
