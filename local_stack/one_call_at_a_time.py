"""One AWS call at a time from this process, for an embedded moto.

moto's DynamoDB backend is not safe for concurrent requests: ``TransactWriteItems`` deep-copies
every table it names before writing and, when the transaction is cancelled, puts the copies back
in place of the tables (``moto.dynamodb.models.DynamoDBBackend.transact_write_items`` in 5.1 and
5.2), so a write another thread made meanwhile is lost, and a copy taken while another thread
writes can fail with "dictionary changed size during iteration". The copy-and-restore came with
moto's ``TransactWriteItems`` itself (getmoto/moto#2879) and is unchanged since; no upstream issue
about concurrent requests was found. Real DynamoDB serializes conflicting transactions. The
product code still runs concurrently (threads of the API, the event runner's pollers, tests'
concurrent requests); only its calls to AWS wait for one another.

This is done on the client side, through botocore's documented event system: a lock taken on
``before-call`` (after the parameters are validated) and released on ``after-call`` or
``after-call-error``, one of which botocore emits for every call that reached ``before-call``.
No moto or botocore internals are touched. ``tests/integration/test_moto_behaviour.py`` checks
that moto still copies tables in a transaction; when it stops, this module can go.
"""

from __future__ import annotations

import threading
from typing import Any

import boto3

_LOCK = threading.Lock()
#: Whether the current thread holds :data:`_LOCK`: a handler registered before ours can answer
#: ``before-call`` itself (botocore's ``Stubber``, a test's fault), and then ``after-call`` comes
#: without our ``before-call``.
_HELD = threading.local()
_UNIQUE = "local_stack.one_call_at_a_time"


def _acquire(**_: Any) -> None:
    if not getattr(_HELD, "held", False):
        _LOCK.acquire()
        _HELD.held = True


def _release(**_: Any) -> None:
    if getattr(_HELD, "held", False):
        _HELD.held = False
        _LOCK.release()


def serialize_calls(*sessions: boto3.session.Session) -> None:
    """Make the AWS calls of every client the given sessions create from now on run one at a time
    (all sessions share one lock). A client copies its session's handlers when it is created:
    clients that exist already are not affected. Idempotent (botocore's ``unique_id``).

    Parameters
    ----------
    sessions:
        boto3 sessions whose calls go to the embedded moto.
    """
    for session in sessions:
        session.events.register_first("before-call", _acquire, unique_id=f"{_UNIQUE}.acquire")
        session.events.register_first("after-call", _release, unique_id=f"{_UNIQUE}.release")
        session.events.register_first("after-call-error", _release, unique_id=f"{_UNIQUE}.release-error")


def serialize_calls_of_this_process() -> None:
    """:func:`serialize_calls` on the sessions behind this process's clients: the service's
    (``chalicelib.persistence.storage.session``) and boto3's default one (the resources, the event runner).
    Only for a process whose AWS is the embedded moto."""
    from chalicelib.persistence import storage

    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    serialize_calls(storage.session(), boto3.DEFAULT_SESSION)  # type: ignore[arg-type]
