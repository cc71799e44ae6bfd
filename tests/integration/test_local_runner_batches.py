"""The local event runner hands a stream handler batches of up to its ``batch_size`` records, read in
GetRecords calls of at most ``GET_RECORDS_LIMIT`` (DynamoDB Streams' own limit is 1,000)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.listings import repository


def _listing(n: int) -> dict[str, Any]:
    now = f"2026-06-01T00:00:{n:02d}.000Z"
    return {"listingId": f"lst_batch{n:04d}", "ownerId": "usr_batch", "categoryKey": "jobs", "roleKey": "hiring",
            "title": f"listing {n}", "meta": {"title": f"listing {n}"}, "channels": [], "webhookIds": [],
            "status": "PENDING", "version": 1, "searchText": "", "createdAt": now, "updatedAt": now}


def test_a_batch_larger_than_one_get_records_call_reaches_the_handler_whole(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app import app
    from local_stack import runner as runner_module

    monkeypatch.setattr(runner_module, "GET_RECORDS_LIMIT", 3)
    runner = runner_module.EventRunner(app)
    listings = next(s for s in runner.streams if s.stream_arn.split(":table/")[1].startswith(settings().LISTINGS_TABLE + "/"))
    batches: list[list[str]] = []
    listings.handler = lambda event, _context: batches.append([r["dynamodb"]["Keys"]["listingId"]["S"] for r in event["Records"]])
    listings.batch_size = 5
    for n in range(7):
        repository.create(_listing(n), [])

    runner._pump_stream(listings)
    runner._pump_stream(listings)
    runner._pump_stream(listings)

    assert batches == [[f"lst_batch{n:04d}" for n in range(5)], [f"lst_batch{n:04d}" for n in range(5, 7)]]


def test_a_polling_thread_gathers_a_partial_batch_for_the_batching_window(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app import app
    from local_stack import runner as runner_module

    now = [100.0]
    monkeypatch.setattr(runner_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    runner = runner_module.EventRunner(app)
    listings = next(s for s in runner.streams if s.stream_arn.split(":table/")[1].startswith(settings().LISTINGS_TABLE + "/"))
    assert listings.batching_window == 1.0  # the deployed window (app.py, infra/cfn_functions.py)
    batches: list[list[str]] = []
    listings.handler = lambda event, _context: batches.append([r["dynamodb"]["Keys"]["listingId"]["S"] for r in event["Records"]])
    listings.batch_size = 5
    ids = [f"lst_batch{n:04d}" for n in range(12)]
    for n in range(2):
        repository.create(_listing(n), [])

    assert runner._pump_stream(listings, gather=True) == 0  # two of five: gathered, not handed over
    assert listings.due() == 101.0
    now[0] = 100.9
    repository.create(_listing(2), [])
    assert runner._pump_stream(listings, gather=True) == 0
    now[0] = 101.0  # the first record has waited the window: the batch goes as it is
    assert runner._pump_stream(listings, gather=True) == 3
    assert listings.due() is None
    for n in range(3, 8):
        repository.create(_listing(n), [])
    assert runner._pump_stream(listings, gather=True) == 5  # a full batch does not wait
    repository.create(_listing(8), [])
    assert runner._pump_stream(listings) == 1  # the tests' synchronous pass never waits
    assert batches == [ids[:3], ids[3:8], ids[8:9]]


def _listings_stream() -> tuple[Any, Any, list[list[str]]]:
    """A runner of the app, its Listings stream source and the listing ids of each batch that source handles."""
    from app import app
    from local_stack import runner as runner_module

    runner = runner_module.EventRunner(app)
    listings = next(s for s in runner.streams if s.stream_arn.split(":table/")[1].startswith(settings().LISTINGS_TABLE + "/"))
    batches: list[list[str]] = []
    listings.handler = lambda event, _context: batches.append([r["dynamodb"]["Keys"]["listingId"]["S"] for r in event["Records"]])
    return runner, listings, batches


def test_an_idle_shard_costs_one_call_per_poll_and_still_sees_the_next_record(aws: dict[str, str]) -> None:
    runner, listings, batches = _listings_stream()
    repository.create(_listing(0), [])
    runner._pump_stream(listings)  # the shard is now idle
    calls: list[str] = []
    runner._streams_client.meta.events.register(
        "before-call.dynamodbstreams", lambda model, **_: calls.append(model.name))

    for _ in range(3):
        assert runner._pump_stream(listings) == 0
    repository.create(_listing(1), [])
    assert runner._pump_stream(listings) == 1

    assert calls == ["GetShardIterator", "GetRecords", "GetRecords", "GetRecords", "GetRecords"]
    assert batches == [["lst_batch0000"], ["lst_batch0001"]]


def test_an_expired_iterator_kept_by_an_idle_shard_is_replaced_at_the_checkpoint(aws: dict[str, str]) -> None:
    runner, listings, batches = _listings_stream()
    repository.create(_listing(0), [])
    runner._pump_stream(listings)
    runner._pump_stream(listings)  # idle: the shard keeps the read's NextShardIterator
    calls: list[str] = []
    expired: list[str] = []

    def expire_once(model: Any, **_: Any) -> tuple[Any, dict[str, Any]] | None:
        calls.append(model.name)
        if model.name != "GetRecords" or expired:
            return None
        # a before-call handler's answer stands in for the service's (botocore's event system): AWS's
        # answer to an iterator older than 15 minutes
        expired.append(model.name)
        return SimpleNamespace(status_code=400, headers={}), {
            "Error": {"Code": "ExpiredIteratorException", "Message": "Iterator expired"}}

    runner._streams_client.meta.events.register("before-call.dynamodbstreams", expire_once)
    repository.create(_listing(1), [])

    assert runner._pump_stream(listings) == 1
    assert calls == ["GetRecords", "GetShardIterator", "GetRecords"]
    assert batches == [["lst_batch0000"], ["lst_batch0001"]]
