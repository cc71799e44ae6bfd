"""Header fields as the HTTP edge reads them (:mod:`chalicelib.edge.fields`): API Gateway's REST
proxy event keeps a repeated field's last line in ``headers`` and every line in ``multiValueHeaders``."""

from __future__ import annotations

from typing import Any

import pytest
from chalice.app import Request

from chalicelib.edge.fields import check_content_fields, header_value
from chalicelib.kernel import errors


def _request(lines: list[tuple[str, str]], body: str | None = None) -> Request:
    """A request as API Gateway's REST proxy hands it to the function, with the header ``lines``."""
    multi: dict[str, list[str]] = {}
    for name, value in lines:
        multi.setdefault(name, []).append(value)
    event: dict[str, Any] = {
        "headers": {name: values[-1] for name, values in multi.items()}, "multiValueHeaders": multi,
        "multiValueQueryStringParameters": None, "pathParameters": None, "stageVariables": None,
        "requestContext": {"httpMethod": "POST", "resourcePath": "/v1/webhooks"}, "body": body, "isBase64Encoded": False,
    }
    return Request(event)


def test_a_repeated_field_reads_as_its_lines_joined_in_order_whatever_their_case() -> None:
    request = _request([("Authorization", "Bearer a"), ("authorization", "Bearer b"), ("X-Request-Id", "r1")])
    assert header_value(request, "authorization") == "Bearer a, Bearer b"
    assert header_value(request, "x-request-id") == "r1"
    assert header_value(request, "if-match") is None


def test_an_event_without_multi_value_headers_reads_its_headers() -> None:
    request = _request([("Idempotency-Key", "k1")])
    request.to_original_event().pop("multiValueHeaders")
    assert header_value(request, "idempotency-key") == "k1"


@pytest.mark.parametrize(("lines", "field"), [
    ([("Content-Type", "text/plain")], "Content-Type"),
    ([("Content-Type", "*/*")], "Content-Type"),
    ([("Content-Type", "application/json"), ("Content-Type", "text/plain")], "Content-Type"),
    ([("Content-Type", "application/json"), ("Content-Encoding", "gzip")], "Content-Encoding"),
    ([("Content-Encoding", "identity"), ("Content-Encoding", "br")], "Content-Encoding"),
])
def test_a_body_not_labelled_as_plain_json_is_refused_naming_the_field(lines: list[tuple[str, str]], field: str) -> None:
    with pytest.raises(errors.UnsupportedMediaType) as refused:
        check_content_fields(_request(lines, "{}"))
    assert [d.field for d in refused.value.details or []] == [field]


@pytest.mark.parametrize("lines", [
    [], [("Content-Type", "application/json; charset=utf-8")], [("Content-Type", "Application/JSON"), ("Content-Encoding", "identity")],
])
def test_plain_json_passes(lines: list[tuple[str, str]]) -> None:
    check_content_fields(_request(lines, "{}"))


def test_a_request_without_a_body_passes_whatever_its_labels() -> None:
    check_content_fields(_request([("Content-Type", "text/plain"), ("Content-Encoding", "gzip")]))
