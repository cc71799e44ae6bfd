"""storage._raise_throttled, the botocore ``after-call`` handler: which answers become the API's 503
(pure: fake answers, no AWS; the handler on real clients is in tests/integration/test_dependency_throttling.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from chalicelib.edge import http
from chalicelib.kernel import errors
from chalicelib.persistence import storage


@dataclass
class _Http:
    status_code: int


def _error(code: str, **extra: Any) -> dict[str, Any]:
    return {"Error": {"Code": code, "Message": "details"}, **extra}


def _cancelled(*reasons: str) -> dict[str, Any]:
    return _error("TransactionCanceledException", CancellationReasons=[{"Code": r} for r in reasons])


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"])
def test_throttling_codes_are_unavailability(code: str) -> None:
    with pytest.raises(errors.DependencyUnavailable) as raised:
        storage._raise_throttled(http_response=_Http(400), parsed=_error(code))
    assert http.error_status(raised.value) == (503, "SERVICE_UNAVAILABLE")
    assert raised.value.cause.startswith(code)


@pytest.mark.parametrize(
    "reasons", [("None", "ThrottlingError"), ("ProvisionedThroughputExceeded",), ("TransactionConflict", "ThrottlingError")]
)
def test_a_transaction_cancelled_for_throttling_is_unavailability(reasons: tuple[str, ...]) -> None:
    with pytest.raises(errors.DependencyUnavailable):
        storage._raise_throttled(http_response=_Http(400), parsed=_cancelled(*reasons))


@pytest.mark.parametrize("parsed", [
    _error("ValidationException"),
    _error("ConditionalCheckFailedException"),
    _cancelled("ConditionalCheckFailed", "ThrottlingError"),  # a failed condition decides the request
    _cancelled("None", "TransactionConflict"),  # contention: storage.transact retries it
    _error("ResourceNotFoundException"),
])
def test_other_errors_pass_through(parsed: dict[str, Any]) -> None:
    storage._raise_throttled(http_response=_Http(400), parsed=parsed)


def test_successful_answers_pass_through() -> None:
    storage._raise_throttled(http_response=_Http(200), parsed={"Item": {}})
    storage._raise_throttled(http_response=None, parsed=None)
