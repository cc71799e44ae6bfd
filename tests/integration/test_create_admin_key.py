"""scripts/create_admin_key.py against the tables on moto: the printed key works as an admin key
(its argument handling: tests/unit/test_packaging.py)."""

from __future__ import annotations

import pytest

from chalicelib.auth.service import authenticate
from tests.unit.test_packaging import load_cli


def test_create_admin_key_prints_a_working_admin_key_once(aws: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    cli = load_cli()
    status = cli.main(["--users-table", aws["USERS_TABLE"], "--api-keys-table", aws["API_KEYS_TABLE"], "--name", "Ops"])
    assert status == 0
    out = capsys.readouterr()
    key = out.out.strip()
    assert key.startswith("msk_")
    assert "\n" not in key
    assert key not in out.err
    caller = authenticate(f"Bearer {key}", require_admin=True)
    assert caller.user_id in out.err
