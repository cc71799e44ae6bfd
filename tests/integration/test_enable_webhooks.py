"""scripts/enable_webhooks.py: the webhooks switched off in a window come back on, the others stay as they are."""

from __future__ import annotations

from types import ModuleType

import pytest

from chalicelib.webhooks import repository
from tests.integration.conftest import Api, User
from tests.integration.webhook_helpers import create_webhook
from tests.script_modules import load_script as load_script_at


def load_script() -> ModuleType:
    return load_script_at("scripts/enable_webhooks.py", "enable_webhooks")


def _switch_off(webhook_id: str, at: str) -> None:
    for _ in range(5):  # five consecutive failures, as the failure policy counts them
        repository.add_failure(webhook_id)
    assert repository.deactivate(webhook_id, 5, at)


def test_webhooks_disabled_in_the_window_are_enabled_again(api: Api, alice: User, bob: User,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    during = create_webhook(api, alice, "http://127.0.0.1:9/during")
    before = create_webhook(api, bob, "http://127.0.0.1:9/before")
    healthy = create_webhook(api, bob, "http://127.0.0.1:9/healthy")
    _switch_off(during["id"], "2026-11-24T18:30:00.000Z")
    _switch_off(before["id"], "2026-11-23T09:00:00.000Z")
    script = load_script()

    assert script.main(["--since", "2026-11-24T18:00:00Z", "--dry-run"]) == 0
    assert capsys.readouterr().out.split() == [during["id"]]
    assert repository.get(during["id"], consistent=True)["active"] is False  # a dry run changes nothing

    assert script.main(["--since", "2026-11-24T18:00:00Z"]) == 0
    assert capsys.readouterr().out.split() == [during["id"]]
    enabled = repository.get(during["id"], consistent=True)
    assert enabled["active"] is True
    assert enabled["failCount"] == 0
    assert "disabledAt" not in enabled
    assert repository.get(before["id"], consistent=True)["active"] is False
    assert repository.get(healthy["id"], consistent=True)["active"] is True
