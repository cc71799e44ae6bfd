"""Unsigned AWS requests to the local stack's embedded moto server.

moto checks no request signature (it authenticates nothing unless ``INITIAL_NO_AUTH_ACTION_COUNT``
is set; moto docs, "IAM-like Access Control"), yet botocore signs every request with Signature
Version 4 before sending it: a canonical request, a SHA-256 of the body and four HMACs per call,
about 0.75 ms of CPU per call. The local stack's own moto server routes unsigned requests
(``local_stack.moto_server.route_unsigned_requests``: moto's server tells services apart by the
credential scope of the ``Authorization`` header, and an unsigned CreateTable had reached the
wrong service), so the stack's clients send them unsigned. The integration tier's ``mock_aws``
gets signed requests, as moto ships. The product's code path is unchanged: the choice is made
through botocore's ``choose-signer`` event (botocore docs, "Event system"), on sessions the
harness owns, never in ``chalicelib``; a deployed function signs as always.
"""

from __future__ import annotations

from typing import Any

import boto3
import botocore


def _unsigned(**_: Any) -> Any:
    """``choose-signer`` handler: sign nothing (botocore stops at the first handler that answers)."""
    return botocore.UNSIGNED


def skip_signing(*sessions: boto3.session.Session) -> None:
    """Make every client the given boto3 sessions create from now on send unsigned requests.

    Registered first on each session's ``choose-signer`` event, so it answers before botocore's
    own ``set_operation_specific_signer``. A client copies its session's handlers when it is
    created: clients that exist already keep signing. Idempotent (one ``unique_id``).

    Parameters
    ----------
    sessions:
        boto3 sessions whose requests go only to the embedded moto.
    """
    for session in sessions:
        session.events.register_first("choose-signer", _unsigned, unique_id="local_stack.signing.unsigned")


def skip_signing_of_this_process() -> None:
    """:func:`skip_signing` on the sessions behind every client of this process: the service's
    (``chalicelib.persistence.storage.session``) and boto3's default one (the resources, the event
    runner's streams and queues). Only for a process whose AWS is the local stack's moto server."""
    from chalicelib.persistence import storage

    skip_signing(storage.session(), boto3._get_default_session())
