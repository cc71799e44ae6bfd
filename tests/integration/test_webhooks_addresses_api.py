"""Address rules (SSRF) at registration: POST /v1/webhooks refuses forbidden and badly resolving URLs
(the rules themselves: tests/unit/test_webhooks_addresses.py)."""

from __future__ import annotations

import ipaddress

import pytest

from chalicelib.webhooks import addresses
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error
from tests.integration.webhook_helpers import use_settings


@pytest.fixture
def secure_stage(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The production rules: ALLOW_INSECURE_WEBHOOKS=false."""
    use_settings(monkeypatch, ALLOW_INSECURE_WEBHOOKS="false")


@pytest.mark.usefixtures("secure_stage")
def test_registration_rejects_forbidden_urls(api: Api, alice: User) -> None:
    """Each kind of forbidden address in turn (the address rules: tests/unit/test_webhooks_addresses.py)."""
    for url in ["http://hooks.example.com/", "https://127.0.0.1/", "https://[::1]/", "https://169.254.169.254/latest/meta-data",
                "https://10.0.0.1/", "https://100.64.1.1/", "https://[fd12::1]/", "https://[::ffff:1.2.3.4]/", "https://0.0.0.0/"]:
        assert_error(api.call("POST", "/v1/webhooks", alice.key, {"url": url}), 400, "VALIDATION_ERROR", "url")
    assert api.call("GET", "/v1/webhooks", alice.key).json["webhooks"] == []


@pytest.mark.usefixtures("secure_stage")
def test_registration_resolves_the_host(api: Api, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"public.example.com": ["93.184.215.14"], "internal.example.com": ["93.184.215.14", "192.168.0.7"]}
    monkeypatch.setattr(addresses, "getaddrinfo", lambda host, port: [ipaddress.ip_address(a) for a in answers[host]])
    ok = api.call("POST", "/v1/webhooks", alice.key, {"url": "https://public.example.com/hook"})
    assert ok.status_code == 201, ok.json
    body = assert_error(api.call("POST", "/v1/webhooks", alice.key, {"url": "https://internal.example.com/hook"}),
                        400, "VALIDATION_ERROR", "url")
    assert "192.168.0.7" in body["details"][0]["issue"]


def test_insecure_stage_accepts_http_loopback_but_not_private(api: Api, alice: User) -> None:
    assert api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/hook"}).status_code == 201
    assert_error(api.call("POST", "/v1/webhooks", alice.key, {"url": "http://10.0.0.1/hook"}), 400, "VALIDATION_ERROR", "url")
    assert_error(api.call("POST", "/v1/webhooks", alice.key, {"url": "http://169.254.169.254/"}), 400, "VALIDATION_ERROR", "url")


@pytest.mark.parametrize("url", ["https://hooks.example.com:0/hook", "http://127.0.0.1:0/hook"])
def test_port_0_is_refused_naming_url_and_stores_nothing(api: Api, alice: User, url: str) -> None:
    body = assert_error(api.call("POST", "/v1/webhooks", alice.key, {"url": url}), 400, "VALIDATION_ERROR", "url")
    assert "port (0)" in body["details"][0]["issue"]
    assert api.call("GET", "/v1/webhooks", alice.key).json["webhooks"] == []
