"""storage.transact: conflicts retried with backoff, lasting contention raised as Contention, other
cancellations and failed conditions raised at once, idempotency tokens kept or renewed (a fake
DynamoDB client, no AWS)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from chalicelib.persistence import storage


def _cancelled(reason: str) -> ClientError:
    return ClientError(
        {"Error": {"Code": "TransactionCanceledException", "Message": f"cancelled [{reason}]"},
         "CancellationReasons": [{"Code": reason}]},
        "TransactWriteItems",
    )


class _FakeClient:
    """Stands in for the DynamoDB client: raises ``failures`` one by one, then succeeds."""

    def __init__(self, failures: list[ClientError]) -> None:
        self.failures = failures
        self.attempts = 0
        self.tokens: list[str] = []

    def transact_write_items(self, **params: Any) -> None:
        self.attempts += 1
        self.tokens.append(params["ClientRequestToken"])
        if self.failures:
            raise self.failures.pop(0)


def test_transaction_conflicts_are_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeClient([_cancelled("TransactionConflict"), _cancelled("TransactionConflict")])
    monkeypatch.setattr(storage, "dynamodb", lambda: fake)
    storage.transact([{}])
    assert fake.attempts == 3


def test_lasting_contention_raises_contention(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeClient([_cancelled("TransactionConflict")] * storage.TRANSACT_ATTEMPTS)
    monkeypatch.setattr(storage, "dynamodb", lambda: fake)
    monkeypatch.setattr(storage, "TRANSACT_BASE_DELAY_SECONDS", 0.0)
    with pytest.raises(storage.Contention):
        storage.transact([{}])
    assert fake.attempts == storage.TRANSACT_ATTEMPTS


def test_other_cancellations_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeClient([_cancelled("ValidationError")])
    monkeypatch.setattr(storage, "dynamodb", lambda: fake)
    with pytest.raises(ClientError):
        storage.transact([{}])
    assert fake.attempts == 1


def test_failed_conditions_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeClient([_cancelled("ConditionalCheckFailed")])
    monkeypatch.setattr(storage, "dynamodb", lambda: fake)
    with pytest.raises(storage.TransactionConflict):
        storage.transact([{}])
    assert fake.attempts == 1


def _in_progress() -> ClientError:
    return ClientError(
        {"Error": {"Code": "TransactionInProgressException", "Message": "in progress"}}, "TransactWriteItems"
    )


def test_every_call_carries_a_token_renewed_after_a_cancellation(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeClient([_cancelled("TransactionConflict")])
    monkeypatch.setattr(storage, "dynamodb", lambda: fake)
    storage.transact([{}])
    assert fake.attempts == 2
    assert all(len(token) == 32 for token in fake.tokens)  # DynamoDB allows 1..36 characters
    assert fake.tokens[0] != fake.tokens[1]


def test_a_call_still_in_progress_is_retried_with_its_token(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first send may still commit: only its own token makes the retry see that instead of writing again.
    fake = _FakeClient([_in_progress()])
    monkeypatch.setattr(storage, "dynamodb", lambda: fake)
    storage.transact([{}])
    assert fake.attempts == 2
    assert fake.tokens[0] == fake.tokens[1]


def test_separate_transactions_have_separate_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeClient([])
    monkeypatch.setattr(storage, "dynamodb", lambda: fake)
    storage.transact([{}])
    storage.transact([{}])
    assert fake.tokens[0] != fake.tokens[1]
