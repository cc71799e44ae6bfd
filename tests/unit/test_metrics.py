"""The metric helpers (EMF line shapes, sinks), the items-read counter and the request id's travel."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from chalicelib.persistence import outbox, storage, streams
from chalicelib.telemetry import correlation, metrics
from chalicelib.webhooks.delivery import handlers, lanes
from chalicelib.webhooks.delivery.envelope import Delivery, Event


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def metrics_file(tmp_path: Path, set_settings: Callable[..., None]) -> Path:
    path = tmp_path / "metrics.log"
    set_settings(METRICS_LOG=str(path), POWERTOOLS_METRICS_DISABLED="false")
    return path


def test_an_emf_line_names_namespace_dimensions_and_units() -> None:
    line = metrics.emf_line({"Requests": (1, "Count"), "RequestLatency": (12.5, "Milliseconds")},
                            {"route": "/v1/listings/{listingId}", "statusClass": "2xx"})
    directive = line["_aws"]["CloudWatchMetrics"]
    assert len(directive) == 1
    assert directive[0]["Namespace"] == metrics.NAMESPACE
    assert sorted(directive[0]["Dimensions"][0]) == ["route", "service", "statusClass"]
    assert {m["Name"]: m["Unit"] for m in directive[0]["Metrics"]} == {"Requests": "Count", "RequestLatency": "Milliseconds"}
    assert isinstance(line["_aws"]["Timestamp"], int)
    assert line["route"] == "/v1/listings/{listingId}"
    assert line["service"] == metrics.SERVICE
    assert line["Requests"] == [1.0]
    assert line["RequestLatency"] == [12.5]


@pytest.mark.parametrize(
    ("record", "name", "unit", "dimensions", "value"),
    [
        (lambda: metrics.record_request("/v1/health", 503, 7.0), "Requests", "Count", {"route": "/v1/health", "statusClass": "5xx"}, 1.0),
        (lambda: metrics.record_search("listings", 30.0, 41), "SearchItemsRead", "Count", {"index": "listings"}, 41.0),
        (lambda: metrics.record_approval_queue_age(12.0), "ApprovalQueueAge", "Seconds", {}, 12.0),
        (lambda: metrics.record_indexer_lag("listings", 3.0), "IndexerLag", "Seconds", {"stream": "listings"}, 3.0),
        (lambda: metrics.record_delivery("failed"), "Deliveries", "Count", {"outcome": "failed"}, 1.0),
        (lambda: metrics.record_lane_age("delivery", 2.5), "LaneAge", "Seconds", {"queue": "delivery"}, 2.5),
        (metrics.record_webhook_disabled, "WebhooksDisabled", "Count", {}, 1.0),
        (metrics.record_rate_limited, "RateLimitRefusals", "Count", {}, 1.0),
    ],
)
def test_each_helper_writes_one_line_to_the_metrics_log(
    metrics_file: Path, record: Callable[[], None], name: str, unit: str, dimensions: dict[str, str], value: float
) -> None:
    record()
    [line] = _lines(metrics_file)
    [directive] = line["_aws"]["CloudWatchMetrics"]
    assert {m["Name"]: m["Unit"] for m in directive["Metrics"]}[name] == unit
    assert sorted(directive["Dimensions"][0]) == sorted(["service", *dimensions])
    assert {k: line[k] for k in dimensions} == dimensions
    assert line[name] == [value]


def test_negative_ages_are_written_as_zero(metrics_file: Path) -> None:
    metrics.record_indexer_lag("users", -1.0)  # a record stamped a moment after our clock
    assert _lines(metrics_file)[0]["IndexerLag"] == [0.0]


def test_without_a_file_lines_go_to_stdout(capsys: pytest.CaptureFixture[str], set_settings: Callable[..., None]) -> None:
    set_settings(METRICS_LOG="", POWERTOOLS_METRICS_DISABLED="false")
    metrics.record_webhook_disabled()
    assert json.loads(capsys.readouterr().out)["WebhooksDisabled"] == [1.0]


def test_powertools_switch_disables_every_line(metrics_file: Path, set_settings: Callable[..., None]) -> None:
    set_settings(POWERTOOLS_METRICS_DISABLED="true")
    metrics.record_rate_limited()
    assert not metrics_file.exists()


def test_an_unwritable_sink_never_fails_the_caller(tmp_path: Path, set_settings: Callable[..., None],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    set_settings(METRICS_LOG=str(tmp_path / "missing-folder" / "metrics.log"), POWERTOOLS_METRICS_DISABLED="false")
    metrics.record_delivery("sent")
    assert "metric not written" in capsys.readouterr().err


def test_status_classes() -> None:
    assert [metrics.status_class(s) for s in (200, 304, 404, 503)] == ["2xx", "3xx", "4xx", "5xx"]


def test_a_search_page_counts_the_items_dynamodb_read(metrics_file: Path) -> None:
    metrics.add_items_read(5)  # outside a block: not counted anywhere
    with metrics.search_page("profiles"):
        storage._count_items_read(parsed={"Items": [], "Count": 0, "ScannedCount": 7})
        storage._count_items_read(parsed={"Item": {"pk": {"S": "x"}}})
        storage._count_items_read(parsed={"Responses": {"Listings": [{}, {}, {}]}})
        storage._count_items_read(parsed={"Responses": [{"Item": {}}, {}]})
        storage._count_items_read(parsed={})  # a write answers nothing read
    [line] = _lines(metrics_file)
    assert line["SearchItemsRead"] == [12.0]
    assert line["index"] == "profiles"
    assert line["SearchLatency"][0] >= 0


def test_oldest_record_age_of_a_stream_batch() -> None:
    event = {"Records": [{"dynamodb": {"ApproximateCreationDateTime": 1000}}, {"dynamodb": {"ApproximateCreationDateTime": 990}},
                         {"dynamodb": {}}]}
    assert streams.oldest_record_age_seconds(event, 1004.5) == 14.5
    assert streams.oldest_record_age_seconds({"Records": []}, 1004.5) is None


def test_message_age_of_an_sqs_record() -> None:
    assert handlers.message_age_seconds({"attributes": {"SentTimestamp": "1000000"}}, 1002500) == 2.5
    assert handlers.message_age_seconds({"attributes": {}}, 1002500) is None
    assert handlers.message_age_seconds({"attributes": {"SentTimestamp": "soon"}}, 1002500) is None


def test_the_request_id_travels_from_the_outbox_event_to_the_lane_message() -> None:
    with correlation.bound("req-42"):
        assert correlation.current_request_id() == "req-42"
        op = outbox.event_op("message.new", {"text": "hi"})
    assert correlation.current_request_id() is None
    item = storage.from_item(op["Put"]["Item"])
    assert item is not None
    assert item["requestId"] == "req-42"
    event = Event.from_outbox(item)
    assert event.request_id == "req-42"
    delivered = lanes.from_message(lanes.to_message(Delivery(event, "whk_1")))
    assert delivered.event.request_id == "req-42"


def test_work_no_request_bound_writes_no_request_id() -> None:
    item = storage.from_item(outbox.event_op("message.new", {"text": "hi"})["Put"]["Item"])
    assert item is not None
    assert "requestId" not in item
    assert lanes.from_message(lanes.to_message(Delivery(Event.from_outbox(item), "whk_1"))).event.request_id is None
