"""Clients of a session given to ``local_stack.signing.skip_signing`` reach moto unsigned (the local
stack's clients, whose moto server routes unsigned requests); other sessions still sign."""

from typing import Any

import boto3

from local_stack.signing import skip_signing


def _authorization_reaching_moto(client: Any) -> bytes | None:
    """The ``Authorization`` header of one ListTables request of ``client``, as moto receives it."""
    seen: list[bytes | None] = []
    client.meta.events.register_first("before-send", lambda request, **_: seen.append(request.headers.get("Authorization")))
    assert "TableNames" in client.list_tables()  # answered by moto
    assert len(seen) == 1
    return seen[0]


def test_the_clients_of_a_session_given_to_skip_signing_send_unsigned_requests(aws: dict[str, str]) -> None:
    session = boto3.session.Session()
    skip_signing(session)
    assert _authorization_reaching_moto(session.client("dynamodb")) is None


def test_a_session_the_harness_did_not_touch_signs_with_sigv4(aws: dict[str, str]) -> None:
    authorization = _authorization_reaching_moto(boto3.session.Session().client("dynamodb"))
    assert authorization is not None
    assert authorization.startswith(b"AWS4-HMAC-SHA256 Credential=")
