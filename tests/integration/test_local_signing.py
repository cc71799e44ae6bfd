"""The harness's requests reach moto unsigned (``local_stack.signing``); other sessions still sign."""

from typing import Any

import boto3

from chalicelib.persistence import storage


def _authorization_reaching_moto(client: Any) -> bytes | None:
    """The ``Authorization`` header of one ListTables request of ``client``, as moto receives it."""
    seen: list[bytes | None] = []
    client.meta.events.register_first("before-send", lambda request, **_: seen.append(request.headers.get("Authorization")))
    assert "TableNames" in client.list_tables()  # answered by moto
    assert len(seen) == 1
    return seen[0]


def test_the_products_clients_send_unsigned_requests_to_the_embedded_moto(aws: dict[str, str]) -> None:
    assert _authorization_reaching_moto(storage.client("dynamodb")) is None
    assert _authorization_reaching_moto(boto3.client("dynamodb")) is None  # boto3's default session (the runner, helpers)


def test_a_session_the_harness_did_not_touch_signs_with_sigv4(aws: dict[str, str]) -> None:
    authorization = _authorization_reaching_moto(boto3.session.Session().client("dynamodb"))
    assert authorization is not None
    assert authorization.startswith(b"AWS4-HMAC-SHA256 Credential=")
