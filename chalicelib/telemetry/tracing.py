"""X-Ray subsegments with powertools Tracer, annotated with the request id.

Every function runs with ``Tracing: Active`` (``infra/build_template.py``, SAM ``Globals``), so
Lambda records a segment per invocation without any code. This module adds what makes a trace
useful: a subsegment per request or batch item (:func:`segment`) annotated with ``request_id``
(searchable: ``annotation.request_id = "..."`` in the X-Ray console) and, through powertools'
patching of botocore, one subsegment per DynamoDB and SQS call inside it
(https://docs.powertools.aws.dev/lambda/python/latest/core/tracer/).

powertools Tracer needs ``aws-xray-sdk`` and costs ~0.1 s of CPU to import: it is built by the
first :func:`segment` of a deployed function, never at cold start (``bench/cold_start.py``), and
never outside Lambda or with ``POWERTOOLS_TRACE_DISABLED=true`` (the local stack and the tests
run without an X-Ray daemon), where :func:`segment` does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING

from chalicelib.kernel.config import settings

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

#: Service name of the traces (the Logger's and the metrics' too).
SERVICE = "matching-service"


@lru_cache(maxsize=1)
def tracer() -> Tracer | None:
    """The process's Tracer (botocore patched), or ``None`` where tracing is off.

    Tracing is off outside Lambda (``AWS_LAMBDA_FUNCTION_NAME`` unset: the local stack, tests)
    and with ``POWERTOOLS_TRACE_DISABLED=true``.
    """
    config = settings()
    if config.POWERTOOLS_TRACE_DISABLED or not config.deployed:
        return None
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE, patch_modules=["botocore"])


@contextmanager
def segment(name: str, request_id: str | None = None, **annotations: str) -> Iterator[None]:
    """A ``## name`` subsegment around the block, annotated with ``request_id`` and ``annotations``.

    Parameters
    ----------
    name:
        What the block does (``request``, ``delivery attempt``, ...).
    request_id:
        The API request's id, as the ``request_id`` annotation (omitted when ``None``).
    annotations:
        Further annotations (indexed by X-Ray: keep them few and low-cardinality).
    """
    active = tracer()
    if active is None:
        yield
        return
    with active.provider.in_subsegment(name=f"## {name}") as subsegment:
        if request_id:
            subsegment.put_annotation(key="request_id", value=request_id)
        for key, value in annotations.items():
            subsegment.put_annotation(key=key, value=value)
        yield
