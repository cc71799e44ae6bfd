"""Unit tests test pure logic: no moto, no AWS endpoint, no local stack.

The autouse guard below turns any AWS call that would leave the process (to moto or to a real
endpoint) into a test failure that says where such a test belongs. botocore's ``Stubber``
answers before a request is made, so tests of request shapes with canned responses still run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.endpoint import Endpoint


def _refuse(self: Endpoint, operation_model: Any, request_dict: Any) -> Any:
    raise AssertionError(
        f"unit tests make no AWS calls (here {operation_model.service_model.service_name}."
        f"{operation_model.name}); test the pure function, or move the test to tests/integration"
    )


@pytest.fixture(autouse=True)
def no_aws_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any AWS request of a unit test (see the module docstring)."""
    monkeypatch.setattr(Endpoint, "make_request", _refuse)


@pytest.fixture
def set_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``set_settings(NAME="value", ...)``: set environment settings for this test and re-read
    ``chalicelib.kernel.config.settings()``; the cached settings are forgotten again afterwards."""
    from chalicelib.kernel.config import settings

    def apply(**values: str) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        settings.cache_clear()

    yield apply
    settings.cache_clear()
